"""``piwork inspect``: text and JSON reports, read only, with diagnostics."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.core.session.helpers import HEADER, assistant, serialize, user


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "piwork", "inspect", *args], capture_output=True, text=True)


def _session(tmp_path: Path) -> Path:
    entries = [
        user("u0", None, "hello", 1),
        assistant("a0", "u0", "hi there", 2),
        {
            "type": "label",
            "id": "l0",
            "parentId": "a0",
            "timestamp": "2024-12-03T14:00:03.000Z",
            "targetId": "u0",
            "label": "start",
        },
        user("u1", "a0", "other branch", 4),
        {
            "type": "compaction",
            "id": "c0",
            "parentId": "u1",
            "timestamp": "2024-12-03T14:00:05.000Z",
            "summary": "the story so far",
            "firstKeptEntryId": "u1",
            "tokensBefore": 1234,
        },
    ]
    path = tmp_path / "s.jsonl"
    path.write_text(
        serialize(HEADER)
        + "".join(serialize(e) for e in entries[:3])
        + "{broken\n"
        + "".join(serialize(e) for e in entries[3:]),
        encoding="utf-8",
    )
    return path


def test_json_report(tmp_path: Path) -> None:
    path = _session(tmp_path)
    before = path.read_bytes()
    result = _run(str(path), "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["entries"]["byType"] == {"message": 3, "label": 1, "compaction": 1}
    assert report["tree"]["branchPoints"] == ["a0"] and report["tree"]["labels"] == {"u0": "start"}
    assert report["compactions"][0]["tokensBefore"] == 1234
    assert report["context"]["byRole"] == {"compactionSummary": 1, "user": 1}
    assert report["context"]["estimatedTokens"] == 4 + 3  # ceil(16/4) + ceil(12/4)
    assert [(d["kind"], d["line"]) for d in report["diagnostics"]] == [("malformed_json", 5)]
    assert path.read_bytes() == before


def test_text_report_and_leaf(tmp_path: Path) -> None:
    result = _run(str(_session(tmp_path)), "--leaf", "a0")
    assert result.returncode == 0, result.stderr
    assert "Context at a0: 2 message(s) (assistant 1, user 1)" in result.stdout
    assert "label u0: start" in result.stdout
    assert "line 5" in result.stdout and "malformed_json" in result.stdout


def test_errors_are_clear(tmp_path: Path) -> None:
    assert "no such session file" in _run(str(tmp_path / "missing.jsonl")).stderr
    other = tmp_path / "x.jsonl"
    other.write_text("hello\n", encoding="utf-8")
    assert "not a valid pi session" in _run(str(other)).stderr
    assert "Entry zz not found" in _run(str(_session(tmp_path)), "--leaf", "zz").stderr


def test_legacy_file_is_described_without_migrating_it(tmp_path: Path) -> None:
    path = tmp_path / "v1.jsonl"
    path.write_text(
        '{"type":"session","id":"s1","timestamp":"2024-12-03T14:00:00.000Z","cwd":"/p"}\n'
        '{"type":"message","timestamp":"2024-12-03T14:00:01.000Z","message":{"role":"user","content":"v1"}}\n',
        encoding="utf-8",
    )
    before = path.read_bytes()
    report = json.loads(_run(str(path), "--json").stdout)
    assert report["context"]["byRole"] == {"user": 1} and report["header"]["version"] == 3
    assert path.read_bytes() == before and not list(tmp_path.glob("*.bak-*"))


def test_each_unreadable_line_is_listed_once_on_and_off_the_context(tmp_path: Path) -> None:
    """Lines in the usual layout are indexed from their bytes; damage further along a line is found
    when it is parsed: on the leaf's branch (while the context is built) and on a side branch (by the
    check of the other lines), each reported once with its line number."""
    entries = [
        user("u0", None, "hello", 1),
        assistant("a0", "u0", "hi", 2),
        user("s0", "u0", "side", 3),
        assistant("s1", "s0", "side reply", 4),
        user("u1", "a0", "more", 5),
        assistant("a1", "u1", "done", 6),
    ]
    lines = [serialize(e).rstrip("\n") for e in [HEADER, *entries]]
    for at in (3, 5):  # s0 (a side branch) and u1 (on the leaf's branch): a number cut by a space
        lines[at] = lines[at].replace('"timestamp":17332344', '"timestamp":17332 344')
    path = tmp_path / "s.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    done = _run(str(path), "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert [d["line"] for d in report["diagnostics"]] == [4, 6]
    assert report["context"]["messages"] == 3  # u0, a0, a1: the unreadable u1 is left out
    assert path.read_text(encoding="utf-8") == "\n".join(lines) + "\n"
