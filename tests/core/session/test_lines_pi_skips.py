"""A line Pi's JSON.parse rejects is not an entry: raw control characters in a string, NaN and Infinity
in a message line of the usual layout are skipped with a diagnostic naming the line, damage further
along a line is reported when the line is read (and by ``inspect``, which reads every line), and a
header version that is not a plain tag never becomes part of a file name."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest

from piwork.commands import inspect as inspect_command
from piwork.core.agent.stats import StatsTracker, session_stats
from piwork.core.session import open_session
from piwork.core.session.line_index import suspect_lines
from piwork.core.session.reader import read_session_file
from piwork.core.session.store import rewrite_atomically
from tests.core.session.helpers import HEADER, assistant, user, write_session

BROKEN = {
    "tab": lambda line: line.replace(b'"text":"answer', b'"text":"\tanswer'),
    "newline escape missing": lambda line: line.replace(b'"text":"answer', b'"text":"\ranswer'),
    "nan": lambda line: line.replace(b'"input":1', b'"input":NaN'),
    "infinity": lambda line: line.replace(b'"output":1', b'"output":-Infinity'),
}


def _lines(path: Path) -> list[bytes]:
    return path.read_bytes().split(b"\n")


def _session(tmp_path: Path) -> Path:
    entries = [user("u1", None, "question", 1), assistant("a1", "u1", "answer one", 2)]
    entries += [user("u2", "a1", "again", 3), assistant("a2", "u2", "answer two", 4)]
    return write_session(tmp_path / "s.jsonl", entries)


@pytest.mark.parametrize("kind", sorted(BROKEN))
def test_a_line_json_parse_rejects_is_skipped_with_its_line_number(tmp_path: Path, kind: str) -> None:
    path = _session(tmp_path)
    lines = _lines(path)
    lines[4] = BROKEN[kind](lines[4])  # a2, the last entry: Pi's leaf becomes u2
    path.write_bytes(b"\n".join(lines))
    loaded = read_session_file(path)
    assert [r.id for r in loaded.records] == ["u1", "a1", "u2"]
    assert [(d.kind, d.line) for d in loaded.diagnostics] == [("malformed_json", 5)]
    with open_session(path, writable=False) as session:
        assert session.tree.leaf_id == "u2"


def test_the_same_words_inside_text_are_only_parsed_in_full(tmp_path: Path) -> None:
    entries = [user("u1", None, "is it NaN or Infinity?", 1), assistant("a1", "u1", "tab\tescaped", 2)]
    path = write_session(tmp_path / "s.jsonl", entries)
    loaded = read_session_file(path)
    assert [r.id for r in loaded.records] == ["u1", "a1"] and not loaded.diagnostics


def test_suspect_lines_finds_each_line_once_and_spares_crlf() -> None:
    data = b'{"a":"x"}\r\n{"a":"\t",' + b'"b":NaN}\n{"a":"ok"}\n{"a":Infinity}\n'
    spans = suspect_lines(data, 0, len(data))
    assert [data[s:e] for s, e in spans] == [b'{"a":"\t","b":NaN}', b'{"a":Infinity}']


def test_a_huge_number_is_kept_as_pi_keeps_it(tmp_path: Path) -> None:
    path = _session(tmp_path)
    lines = _lines(path)
    lines[4] = lines[4].replace(b'"input":1', b'"input":1e400')  # JSON.parse reads Infinity
    path.write_bytes(b"\n".join(lines))
    with open_session(path, writable=False) as session:
        assert session.tree.leaf_id == "a2" and not session.tree.diagnostics
        stats = StatsTracker(session.tree).current()
    assert stats.assistant_messages == 2 and stats.tokens["input"] == float("inf")


def test_damage_past_the_prefix_is_reported_when_read_and_counted_as_nothing(tmp_path: Path) -> None:
    path = _session(tmp_path)
    lines = _lines(path)
    lines[2] = lines[2].replace(b'"text":"answer one"', b'"text":answer one"')
    path.write_bytes(b"\n".join(lines))
    with open_session(path, writable=False) as session:
        stats = StatsTracker(session.tree).current()  # reads every body; used to raise AttributeError
        assert stats.assistant_messages == 1
        assert [(d.kind, d.line) for d in session.tree.diagnostics] == [("malformed_json", 3)]
    assert session_stats([None, {"type": "message", "message": {"role": "user"}}]).user_messages == 1


def test_inspect_reads_every_line_and_lists_each_problem(tmp_path: Path) -> None:
    path = _session(tmp_path)
    lines = _lines(path)
    lines[2] = lines[2].replace(b'"text":"answer one"', b'"text":answer one"')
    lines[3] = lines[3].replace(b'"content":"again"', b'"content":"ag\tain"')
    path.write_bytes(b"\n".join(lines))
    before = path.read_bytes()
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert inspect_command.main([str(path)]) == 0
    text = out.getvalue()
    assert "Problems: none" not in text
    assert "line 3 (byte" in text and "line 4 (byte" in text
    assert path.read_bytes() == before


def test_a_header_version_is_never_a_path(tmp_path: Path) -> None:
    for version in ("1/x", "../../x", "1" * 40, None):
        path = write_session(tmp_path / "v.jsonl", [user("u1", None, "q", 1)], {**HEADER, "version": version})
        original = path.read_bytes()
        backup = rewrite_atomically(path, [json.loads(line) for line in original.splitlines()], version)
        assert backup.parent == tmp_path and backup.read_bytes() == original
        assert backup.name.startswith("v.jsonl.bak-v")
    with open_session(write_session(tmp_path / "w.jsonl", [], {**HEADER, "version": "1/x"})) as session:
        assert session.header is not None and session.header["version"] == 3
    assert [p.name for p in tmp_path.glob("w.jsonl.bak-v*")] == ["w.jsonl.bak-vunknown"]
