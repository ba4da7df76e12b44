"""What an edit or write call would change, computed with the tools' own code and nothing written.

An approval shows it before the call runs: the edit's replacements are matched exactly as the edit tool
matches them (same reading, same limits, same errors), a write is compared with the file it replaces
(an empty text for a new file).
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from typing import Any

from piwork.core.safe_read import FileKind, read_bytes
from piwork.core.tools.base import ToolError
from piwork.core.tools.diff import display_diff, unified_patch
from piwork.core.tools.edit import MAX_EDIT_BYTES, check_edit_access, read_for_edit
from piwork.core.tools.edit_match import apply_edits, normalize_to_lf
from piwork.core.tools.paths import resolve_to_cwd
from piwork.core.tools.protected_paths import refuse_protected


@dataclass(frozen=True)
class ChangePreview:
    """The file a call would change (as the model named it and absolute), and the change.

    ``error`` is what the tool would answer instead of changing anything (no match, a protected file...);
    ``diff`` then is empty.
    """

    path: str
    absolute: str
    diff: str = ""
    patch: str = ""
    created: bool = False
    error: str | None = None


def preview_change(tool: str, args: dict[str, Any], cwd: str) -> ChangePreview:
    """The would-be change of an ``edit`` or ``write`` call with validated ``args`` (blocking: reads)."""
    path = str(args.get("path", ""))
    absolute = resolve_to_cwd(path, cwd)
    try:
        refuse_protected(absolute, path, cwd)
        if tool == "edit":
            check_edit_access(absolute, path)
            raw = read_for_edit(absolute, path)
            base = normalize_to_lf(raw.removeprefix("\ufeff"))
            new, _replacements = apply_edits(base, list(args.get("edits") or []), path)
            return _preview(path, absolute, base, new)
        old, created = _current_text(absolute)
        return _preview(path, absolute, old, normalize_to_lf(str(args.get("content", ""))), created)
    except ToolError as err:
        return ChangePreview(path, absolute, error=str(err))


def _preview(path: str, absolute: str, old: str, new: str, created: bool = False) -> ChangePreview:
    return ChangePreview(
        path, absolute, display_diff(old, new).diff, unified_patch(path, old, new), created=created
    )


_REPLACED = FileKind("file the write replaces", MAX_EDIT_BYTES)


def _current_text(absolute: str) -> tuple[str, bool]:
    """The text a write would replace ("" and True when there is no file); a file too large or not a
    regular one is described instead of read."""
    try:
        info = os.stat(absolute)
    except OSError:
        return "", True
    if not stat.S_ISREG(info.st_mode):
        return "", False
    if info.st_size > MAX_EDIT_BYTES:
        raise ToolError(f"{absolute} is {info.st_size:,} bytes: too large to show what the write replaces.")
    try:
        data = read_bytes(absolute, _REPLACED)  # no blocking open or unbounded read if it changed since
        return normalize_to_lf(data.decode("utf-8", "replace").removeprefix("\ufeff")), False
    except OSError as err:
        raise ToolError(f"Cannot read {absolute}: {err.strerror or err}") from None
