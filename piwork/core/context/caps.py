"""The hard cap on injected context files: 51,200 UTF-8 bytes or 2,000 lines, as for tool output.

A file over the cap is cut to its head (whole lines) followed by a marker saying what was left out
and how to read it; the manifest then marks it ``over-cap``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from piwork.core.resources.context_files import ContextFile
from piwork.core.truncate import DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, format_size, truncate_head


@dataclass(frozen=True)
class CappedText:
    text: str
    over_cap: bool
    reason: str | None = None


def cap_text(text: str, shown_path: str) -> CappedText:
    """The whole text if within the hard cap, else its head plus a marker saying how to read the rest."""
    cut = truncate_head(text, DEFAULT_MAX_LINES, DEFAULT_MAX_BYTES)
    if not cut.truncated:
        return CappedText(text, False)
    reason = (
        f"{cut.total_lines} lines, {format_size(cut.total_bytes)}: over the "
        f"{DEFAULT_MAX_LINES}-line / {format_size(DEFAULT_MAX_BYTES)} cap"
    )
    marker = (
        f"[piwork: {shown_path} has {reason}; only its first {cut.output_lines} lines "
        f"({format_size(cut.output_bytes)}) are included. Read the rest with the read tool "
        f"(offset {cut.output_lines + 1}) or read targeted slices.]"
    )
    head = cut.content + ("\n\n" if cut.content else "")
    return CappedText(head + marker, True, reason)


def cap_context_files(files: Sequence[ContextFile]) -> list[ContextFile]:
    """Context files with the hard cap applied (for ``piwork.contextFiles.enforceHardCap``)."""
    return [ContextFile(f.path, cap_text(f.content, f.path).text) for f in files]
