"""Truncation beyond the golden cases: every cut point, large inputs, the result record."""

from __future__ import annotations

import pytest

from piwork.core.truncate import (
    count_lines,
    format_size,
    truncate_head,
    truncate_line,
    truncate_tail,
    utf8_len,
)


def _reference_head(content: str, max_lines: int, max_bytes: int) -> tuple[str, str | None]:
    """A deliberately naive model of the rules, to cross-check the fast implementation."""
    lines = content.split("\n")
    if content.endswith("\n"):
        lines.pop()
    if not content:
        lines = []
    total = len(content.encode("utf-8"))
    if len(lines) <= max_lines and total <= max_bytes:
        return content, None
    if len(lines[0].encode()) > max_bytes:
        return "", "bytes"
    kept: list[str] = []
    used = 0
    reason = "lines"
    for i, line in enumerate(lines[:max_lines]):
        size = len(line.encode()) + (1 if i else 0)
        if used + size > max_bytes:
            reason = "bytes"
            break
        kept.append(line)
        used += size
    if len(kept) >= max_lines and used <= max_bytes:
        reason = "lines"
    return "\n".join(kept), reason


def _reference_tail(content: str, max_lines: int, max_bytes: int) -> tuple[str, str | None]:
    lines = content.split("\n")
    if content.endswith("\n"):
        lines.pop()
    if not content:
        lines = []
    total = len(content.encode("utf-8"))
    if len(lines) <= max_lines and total <= max_bytes:
        return content, None
    kept: list[str] = []
    used = 0
    reason = "lines"
    for line in reversed(lines):
        if len(kept) >= max_lines:
            break
        size = len(line.encode()) + (1 if kept else 0)
        if used + size > max_bytes:
            reason = "bytes"
            if not kept:
                data = line.encode()[-max_bytes:] if max_bytes else b""
                while data and (data[0] & 0xC0) == 0x80:
                    data = data[1:]
                kept.append(data.decode())
                used = len(data)
            break
        kept.insert(0, line)
        used += size
    if len(kept) >= max_lines and used <= max_bytes:
        reason = "lines"
    return "\n".join(kept), reason


MIXED = "aé日🙂\n" * 7 + "x🙂🙂é\r\n\nend"


@pytest.mark.parametrize("max_bytes", range(0, len(MIXED.encode()) + 2))
def test_every_byte_cut_point_matches_the_rules(max_bytes: int) -> None:
    for max_lines in (1, 3, 100):
        head = truncate_head(MIXED, max_lines, max_bytes)
        tail = truncate_tail(MIXED, max_lines, max_bytes)
        assert (head.content, head.truncated_by) == _reference_head(MIXED, max_lines, max_bytes)
        assert (tail.content, tail.truncated_by) == _reference_tail(MIXED, max_lines, max_bytes)
        # Output is always valid text whose size is what the record says.
        assert utf8_len(tail.content) == tail.output_bytes <= max(max_bytes, tail.output_bytes)
        assert head.output_bytes <= max_bytes


def test_partial_last_line_starts_on_a_character_boundary() -> None:
    line = "🙂" * 100  # 400 bytes, 4 bytes per character
    for max_bytes in range(1, 20):
        result = truncate_tail(line, max_bytes=max_bytes)
        assert result.last_line_partial
        assert result.content == "🙂" * (max_bytes // 4)
        assert result.output_lines == 1


def test_head_of_a_large_many_line_input_reads_only_what_it_keeps() -> None:
    text = "".join(f"line {i}\n" for i in range(300_000))
    result = truncate_head(text)
    assert result.truncated and result.truncated_by == "lines"
    assert result.output_lines == 2000
    assert result.content.endswith("line 1999")
    assert result.total_lines == 300_000
    assert result.total_bytes == len(text)


def test_tail_of_one_huge_line_keeps_exactly_max_bytes() -> None:
    text = "ab" * 5_000_000
    result = truncate_tail(text)
    assert result.last_line_partial and result.truncated_by == "bytes"
    assert result.content == text[-51200:]


def test_untruncated_input_keeps_its_trailing_newline() -> None:
    result = truncate_head("a\nb\n")
    assert not result.truncated and result.content == "a\nb\n" and result.total_lines == 2


def test_line_counting() -> None:
    assert [count_lines(s) for s in ("", "\n", "\n\n", "a", "a\n", "a\nb", "a\r\nb\r\n")] == [
        0,
        1,
        2,
        1,
        1,
        2,
        2,
    ]


def test_record_uses_pi_field_names() -> None:
    record = truncate_tail("x\n" * 3000).to_json()
    assert record["truncatedBy"] == "lines" and record["outputLines"] == 2000 and record["maxBytes"] == 51200


def test_truncate_line_counts_utf16_units() -> None:
    assert truncate_line("🙂" * 3, 4).text == "🙂🙂... [truncated]"
    assert not truncate_line("abc", 3).was_truncated


@pytest.mark.parametrize(
    ("size", "text"),
    [(0, "0B"), (1023, "1023B"), (1024, "1.0KB"), (1280, "1.3KB"), (1048575, "1024.0KB"), (1048576, "1.0MB")],
)
def test_format_size_rounds_like_javascript(size: int, text: str) -> None:
    assert format_size(size) == text
