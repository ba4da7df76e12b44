"""Tool-output truncation: keep the head or the tail of a text within line and byte limits.

The rules (and their quirks) match Pi 0.85.0 exactly; see ``spec/tools-and-truncation.md``.
Inputs can be hundreds of megabytes, so nothing here splits the whole text into lines: lines are
found with ``str.find``/``str.rfind`` and only the lines that may be kept are measured.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from typing import Any, Literal

from piwork.core.jscompat import js_number_str, utf16_len, utf16_slice_head

DEFAULT_MAX_LINES = 2000
DEFAULT_MAX_BYTES = 50 * 1024
GREP_MAX_LINE_LENGTH = 500

TruncatedBy = Literal["lines", "bytes"]

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


@dataclass(frozen=True, slots=True)
class TruncationResult:
    """What a truncation kept, of how much, and which limit cut it."""

    content: str
    truncated: bool
    truncated_by: TruncatedBy | None
    total_lines: int
    total_bytes: int
    output_lines: int
    output_bytes: int
    last_line_partial: bool
    first_line_exceeds_limit: bool
    max_lines: int
    max_bytes: int

    def to_json(self) -> dict[str, Any]:
        """The record under Pi's field names (as stored in tool result ``details``)."""
        return {
            "content": self.content,
            "truncated": self.truncated,
            "truncatedBy": self.truncated_by,
            "totalLines": self.total_lines,
            "totalBytes": self.total_bytes,
            "outputLines": self.output_lines,
            "outputBytes": self.output_bytes,
            "lastLinePartial": self.last_line_partial,
            "firstLineExceedsLimit": self.first_line_exceeds_limit,
            "maxLines": self.max_lines,
            "maxBytes": self.max_bytes,
        }


def utf8_len(text: str) -> int:
    """UTF-8 size of ``text``; a lone surrogate counts 3 bytes (it is written as U+FFFD)."""
    if text.isascii():
        return len(text)
    # One strict encode is the fastest path CPython has (the copy is the size being measured,
    # within the 2x memory budget); lone surrogates need the slower error handler.
    try:
        return len(text.encode("utf-8"))
    except UnicodeEncodeError:
        return len(text.encode("utf-8", "surrogatepass"))


def count_lines(text: str) -> int:
    """Lines as Pi counts them: split on ``\\n`` only, a final newline ends the last line."""
    if not text:
        return 0
    newlines = text.count("\n")
    return newlines if text.endswith("\n") else newlines + 1


def _untruncated(content: str, lines: int, size: int, max_lines: int, max_bytes: int) -> TruncationResult:
    return TruncationResult(
        content, False, None, lines, size, lines, size, False, False, max_lines, max_bytes
    )


def truncate_head(
    content: str, max_lines: int = DEFAULT_MAX_LINES, max_bytes: int = DEFAULT_MAX_BYTES
) -> TruncationResult:
    """Keep whole lines from the start; never returns part of a line."""
    total_bytes = utf8_len(content)
    total_lines = count_lines(content)
    if total_lines <= max_lines and total_bytes <= max_bytes:
        return _untruncated(content, total_lines, total_bytes, max_lines, max_bytes)

    if total_lines == 0:  # only a negative limit gets here; Pi then fails on the missing first line
        raise ValueError(f"Cannot keep the head of an empty text within {max_lines} lines, {max_bytes} bytes")
    # Lines are bounded by ``limit``: the text without its final newline.
    limit = len(content) - 1 if content.endswith("\n") else len(content)
    first_end = content.find("\n", 0, limit)
    first_line = content[: first_end if first_end >= 0 else limit]
    if utf8_len(first_line) > max_bytes:
        return TruncationResult(
            "", True, "bytes", total_lines, total_bytes, 0, 0, False, True, max_lines, max_bytes
        )

    kept = 0
    used = 0
    end = 0  # character index just past the last kept line
    truncated_by: TruncatedBy = "lines"
    pos = 0
    while kept < total_lines and kept < max_lines:
        nl = content.find("\n", pos, limit)
        line_end = nl if nl >= 0 else limit
        line_bytes = utf8_len(content[pos:line_end]) + (1 if kept else 0)
        if used + line_bytes > max_bytes:
            truncated_by = "bytes"
            break
        used += line_bytes
        kept += 1
        end = line_end
        pos = line_end + 1
    if kept >= max_lines and used <= max_bytes:
        truncated_by = "lines"
    output = content[:end]
    return TruncationResult(
        output,
        True,
        truncated_by,
        total_lines,
        total_bytes,
        kept,
        utf8_len(output),
        False,
        False,
        max_lines,
        max_bytes,
    )


def truncate_tail(
    content: str, max_lines: int = DEFAULT_MAX_LINES, max_bytes: int = DEFAULT_MAX_BYTES
) -> TruncationResult:
    """Keep whole lines from the end; a last line longer than the budget keeps its suffix."""
    total_bytes = utf8_len(content)
    total_lines = count_lines(content)
    if total_lines <= max_lines and total_bytes <= max_bytes:
        return _untruncated(content, total_lines, total_bytes, max_lines, max_bytes)

    limit = len(content) - 1 if content.endswith("\n") else len(content)
    kept_lines: list[str] = []
    used = 0
    truncated_by: TruncatedBy = "lines"
    last_line_partial = False
    line_end = limit
    remaining = total_lines
    while remaining > 0 and len(kept_lines) < max_lines:
        nl = content.rfind("\n", 0, line_end)
        line = content[nl + 1 : line_end]
        line_bytes = utf8_len(line) + (1 if kept_lines else 0)
        if used + line_bytes > max_bytes:
            truncated_by = "bytes"
            if not kept_lines:
                suffix = _utf8_suffix(line, max_bytes)
                kept_lines.append(suffix)
                used = utf8_len(suffix)
                last_line_partial = True
            break
        kept_lines.append(line)
        used += line_bytes
        line_end = nl
        remaining -= 1
    if len(kept_lines) >= max_lines and used <= max_bytes:
        truncated_by = "lines"
    output = "\n".join(reversed(kept_lines))
    return TruncationResult(
        output,
        True,
        truncated_by,
        total_lines,
        total_bytes,
        len(kept_lines),
        utf8_len(output),
        last_line_partial,
        False,
        max_lines,
        max_bytes,
    )


def _utf8_suffix(line: str, max_bytes: int) -> str:
    """The longest suffix of ``line`` within ``max_bytes`` UTF-8 bytes, starting on a character."""
    # Every character is at least one byte, so the suffix lies within the last max_bytes chars.
    tail = line[-max_bytes:] if max_bytes > 0 else ""
    data = _LONE_SURROGATE.sub("\ufffd", tail).encode("utf-8")
    start = max(0, len(data) - max_bytes)
    while start < len(data) and (data[start] & 0xC0) == 0x80:
        start += 1
    return data[start:].decode("utf-8")


@dataclass(frozen=True, slots=True)
class LineTruncation:
    text: str
    was_truncated: bool


TRUNCATED_LINE_SUFFIX = "... [truncated]"


def truncate_line(line: str, max_chars: int = GREP_MAX_LINE_LENGTH) -> LineTruncation:
    """Cap one line at ``max_chars`` UTF-16 units (may split a surrogate pair, as Pi does)."""
    if utf16_len(line) <= max_chars:
        return LineTruncation(line, False)
    return LineTruncation(utf16_slice_head(line, max_chars) + TRUNCATED_LINE_SUFFIX, True)


def format_size(size: float) -> str:
    """Human-readable size with JavaScript ``toFixed(1)`` rounding (1280 bytes → ``1.3KB``)."""
    if size < 1024:
        return f"{js_number_str(size)}B"
    if size < 1024 * 1024:
        return f"{_to_fixed_1(size / 1024)}KB"
    return f"{_to_fixed_1(size / (1024 * 1024))}MB"


def _to_fixed_1(value: float) -> str:
    # Decimal(value) is the exact binary value, so half-up here matches JavaScript's toFixed.
    return str(Decimal(value).quantize(Decimal("0.1"), rounding=ROUND_HALF_UP))
