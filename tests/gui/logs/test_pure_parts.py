"""The Qt-free parts of the log viewer: ANSI parsing, the sparse line index, file search, and the
collection of cut tool outputs from session messages."""

from __future__ import annotations

import re
import threading
from pathlib import Path

import pytest

from piwork.gui.logs.line_index import BLOCK_SIZE, LineIndex, LogFileError
from piwork.gui.logs.search import compile_search, search_file_lines
from piwork.gui.logs.sgr import PLAIN, SgrStyle, Span, colour_rgb, parse_sgr_spans, strip_ansi
from piwork.gui.logs.truncated_results import collect_truncated_outputs


def test_sgr_colours_weights_and_reset() -> None:
    spans = parse_sgr_spans("a\x1b[1;31mred\x1b[0m b\x1b[38;5;208mx\x1b[48;2;1;2;3my\x1b[39;49m z")
    assert spans == [
        Span("a", PLAIN),
        Span("red", SgrStyle(fg=1, bold=True)),
        Span(" b", PLAIN),
        Span("x", SgrStyle(fg=208)),
        Span("y", SgrStyle(fg=208, bg=(1, 2, 3))),
        Span(" z", PLAIN),
    ]
    assert colour_rgb(208) == (255, 135, 0)
    assert colour_rgb(244) == (128, 128, 128)


def test_non_sgr_escapes_are_dropped_and_bright_colours_kept() -> None:
    text = "\x1b]0;title\x07\x1b[2K\x1b[92mok\x1b(B\x1b[m!"
    assert parse_sgr_spans(text) == [Span("ok", SgrStyle(fg=10)), Span("!", PLAIN)]
    assert strip_ansi(text) == "ok!"
    assert parse_sgr_spans("\x1b[31") == [Span("1", PLAIN)] or strip_ansi("\x1b[31") != "\x1b[31"


def _write(path: Path, data: bytes) -> str:
    path.write_bytes(data)
    return str(path)


@pytest.mark.parametrize(
    ("data", "lines"),
    [
        (b"", []),
        (b"\n", [""]),
        (b"a\nb\n", ["a", "b"]),
        (b"a\nb", ["a", "b"]),
        (b"\n\nx\r\n", ["", "", "x\r"]),
    ],
)
def test_line_index_small_files(tmp_path: Path, data: bytes, lines: list[str]) -> None:
    index = LineIndex(_write(tmp_path / "f.log", data))
    index.index_all()
    assert index.complete
    assert [index.line_text(i) for i in range(index.line_count)] == lines
    index.close()


def test_line_index_across_blocks_and_partial_progress(tmp_path: Path) -> None:
    lines = [f"line {i} " + "x" * (i % 97) for i in range(20000)]
    data = ("\n".join(lines) + "\n").encode()
    assert len(data) > 3 * BLOCK_SIZE
    index = LineIndex(_write(tmp_path / "f.log", data))
    from piwork.gui.logs.line_index import count_block_newlines

    first = count_block_newlines(index.path, 0, 2, index.size)
    index.add_block_counts(first)
    assert not index.complete
    partial = index.line_count
    assert 0 < partial < len(lines)
    assert index.line_text(partial - 1) == lines[partial - 1]
    index.index_all()
    assert index.line_count == len(lines)
    for i in (0, 1, partial, 9999, 19999):
        assert index.line_text(i) == lines[i]
    data_part, length = index.line_bytes(19998, limit=4)
    assert data_part == lines[19998][:4].encode() and length == len(lines[19998])
    with pytest.raises(IndexError):
        index.line_span(len(lines))
    index.close()


def test_missing_and_unreadable_files_raise_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(LogFileError, match="no longer exists"):
        LineIndex(str(tmp_path / "gone.log"))
    with pytest.raises(LogFileError, match="cannot be read"):
        LineIndex(str(tmp_path))  # a directory


def test_search_reports_each_matching_line_once(tmp_path: Path) -> None:
    data = b"alpha\nbeta beta\n\x1b[31merror\x1b[0m one\ngamma\nERROR two\n" + "ünï error\n".encode()
    path = _write(tmp_path / "f.log", data)
    batches: list[list[int]] = []
    found, capped = search_file_lines(
        path,
        compile_search("error", False, False),
        len(data),
        lambda b, _d: batches.append(b),
        threading.Event(),
    )
    assert (found, capped) == (3, False)
    assert [line for batch in batches for line in batch] == [2, 4, 5]
    lines: list[int] = []
    search_file_lines(
        path,
        compile_search(r"^b\w+ (b)", True, True),
        len(data),
        lambda b, _d: lines.extend(b),
        threading.Event(),
    )
    assert lines == [1]
    with pytest.raises(re.error):
        compile_search("(", True, True)


def test_search_over_chunk_boundaries_and_cap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import piwork.gui.logs.search as search

    monkeypatch.setattr(search, "PIECE", 64)
    monkeypatch.setattr(search, "HUGE_LINE", 256)
    lines = [f"row {i} {'hit' if i % 7 == 0 else 'miss'}" for i in range(200)] + ["y" * 1000 + "hit"]
    data = "\n".join(lines).encode()
    path = _write(tmp_path / "f.log", data)
    got: list[int] = []
    found, capped = search.search_file_lines(
        path, compile_search("hit", False, True), len(data), lambda b, _d: got.extend(b), threading.Event()
    )
    assert got == [i for i in range(200) if i % 7 == 0] + [200]
    assert not capped and found == len(got)
    got.clear()
    found, capped = search.search_file_lines(
        path, compile_search("hit", False, True), len(data), lambda b, _d: got.extend(b), threading.Event(), 5
    )
    assert capped and got == [0, 7, 14, 21, 28]
    cancel = threading.Event()
    cancel.set()
    assert search.search_file_lines(
        path, compile_search("hit", False, True), len(data), lambda b, _d: None, cancel
    ) == (
        0,
        False,
    )


def test_collect_truncated_outputs_joins_calls_and_describes_the_cut() -> None:
    truncation = {
        "truncated": True, "truncatedBy": "lines", "totalLines": 3000, "totalBytes": 13926,
        "outputLines": 2000, "outputBytes": 10035, "lastLinePartial": False, "firstLineExceedsLimit": False,
    }  # fmt: skip
    messages = [
        {"role": "user", "content": "go", "timestamp": 1},
        {
            "role": "assistant",
            "content": [
                {"type": "toolCall", "id": "c1", "name": "bash", "arguments": {"command": "seq 3000"}},
                {"type": "toolCall", "id": "c2", "name": "read", "arguments": {"path": "big.txt"}},
                {"type": "toolCall", "id": "c3", "name": "ls", "arguments": {}},
                {"type": "toolCall", "id": "c4", "name": "grep", "arguments": {"pattern": "x", "path": "src"}},
            ],
        },
        {"role": "toolResult", "toolCallId": "c1", "toolName": "bash", "isError": False, "timestamp": 2,
         "content": [{"type": "text", "text": "1001\n..."}],
         "details": {"truncation": truncation, "fullOutputPath": "/tmp/x.log"}},
        {"role": "toolResult", "toolCallId": "c2", "toolName": "read", "isError": False,
         "content": [{"type": "text", "text": "head"}], "details": {"truncation": truncation}},
        {"role": "toolResult", "toolCallId": "c3", "toolName": "ls", "isError": False,
         "content": [{"type": "text", "text": "a"}], "details": {"truncation": {**truncation, "truncated": False}}},
        {"role": "toolResult", "toolCallId": "c4", "toolName": "grep", "isError": False,
         "content": [{"type": "text", "text": "m"}], "details": {"matchLimitReached": 100}},
        {"role": "bashExecution", "command": "make", "output": "tail", "exitCode": 2, "cancelled": False,
         "truncated": True, "fullOutputPath": "/tmp/y.log", "timestamp": 5},
    ]  # fmt: skip
    found = collect_truncated_outputs(messages)
    assert [(f.tool_name, f.title, f.full_output_path) for f in found] == [
        ("bash", "seq 3000", "/tmp/x.log"),
        ("read", "big.txt", None),
        ("grep", "x in src", None),
        ("!bash", "make", "/tmp/y.log"),
    ]
    assert found[0].cut_summary() == "kept lines 1001–3000 of 3000, 9.8KB of 13.6KB (limit: lines)"
    assert found[1].cut_summary() == "kept lines 1–2000 of 3000, 9.8KB of 13.6KB (limit: lines)"
    assert found[2].cut_summary() == "match limit reached"
    assert found[0].model_text == "1001\n..."
    assert found[3].is_error


def _reference_lines(data: bytes, pattern: str, use_regex: bool, case_sensitive: bool) -> list[int]:
    """What a line-by-line search over the decoded text finds."""
    regex = compile_search(pattern, use_regex, case_sensitive).text
    lines = data.decode("utf-8", errors="replace").split("\n")
    last = len(lines) - 1
    return [n for n, line in enumerate(lines) if regex.search(line if n == last else line + "\n")]


@pytest.mark.parametrize(
    ("pattern", "use_regex", "case_sensitive"),
    [
        ("Error", False, True),
        ("error", False, False),
        ("ÜNÏ", False, False),
        ("x.y", True, True),
        (r"\bw\w+d\b", True, False),
        (r"id=\d{3}7$", True, True),
        ("\\N{LATIN SMALL LETTER U WITH DIAERESIS}", True, True),
        ("ä", True, False),
    ],
)
def test_bytes_search_agrees_with_a_text_search(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pattern: str, use_regex: bool, case_sensitive: bool
) -> None:
    import piwork.gui.logs.search as search

    monkeypatch.setattr(search, "PIECE", 50_000)  # many pieces, some pure ASCII and some not
    rows = []
    for i in range(40_000):
        accented = 20_000 < i < 21_000  # most pieces stay pure ASCII
        word = ("Wörd" if accented and i % 11 == 0 else "word") if i % 5 else ("xäy" if accented else "xzy")
        level = "ERROR" if i % 13 == 0 else ("Error" if i % 17 == 0 else "info")
        extra = " ünï Ä" if 15_000 < i < 15_050 else (" x.y" if i % 101 == 0 else "")
        rows.append(f"\x1b[3{i % 8}m{level}\x1b[0m {word} id={i}{extra}")
    data = "\n".join(rows).encode() + b"\n"
    path = _write(tmp_path / "mixed.log", data)
    index = LineIndex(path)
    index.index_all()
    expected = _reference_lines(data, pattern, use_regex, case_sensitive)
    assert expected
    query = compile_search(pattern, use_regex, case_sensitive)
    for snapshot in (None, index.newline_counts(), index.newline_counts()[:10]):
        got: list[int] = []
        add = got.extend
        found, capped = search.search_file_lines(
            path, query, len(data), lambda b, _d, add=add: add(b), threading.Event(), newlines_before=snapshot
        )
        assert got == expected and (found, capped) == (len(expected), False)
    index.close()


def test_empty_matches_and_lines_cut_in_two(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import piwork.gui.logs.search as search

    path = _write(tmp_path / "f.log", b"one\n\nthree\n")
    got: list[int] = []
    search.search_file_lines(
        path, compile_search("^$", True, True), 12, lambda b, _d: got.extend(b), threading.Event()
    )
    assert got == [1]  # no phantom line after the final newline
    monkeypatch.setattr(search, "PIECE", 16)
    monkeypatch.setattr(search, "HUGE_LINE", 32)
    data = b"a" * 100 + b"\nb\n"
    path = _write(tmp_path / "long.log", data)
    got.clear()
    search.search_file_lines(
        path, compile_search("a", False, True), len(data), lambda b, _d: got.extend(b), threading.Event()
    )
    assert got == [0]
    empty = _write(tmp_path / "empty.log", b"")
    assert search.search_file_lines(
        empty, compile_search("a", False, True), 0, lambda b, _d: None, threading.Event()
    ) == (0, False)
