"""The active branch as a new session file (same context, new id, consistent parent chain) and
importing a session file into the sessions folder without touching the source."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from piwork.core.export.branch_file import export_branch_jsonl
from piwork.core.export.html_export import ExportError
from piwork.core.export.session_import import ImportRefused, import_session
from piwork.core.session.reader import read_session_file
from piwork.core.session.store import open_session
from tests.support.rich_session import write_rich_session


def _lines(path: Path) -> list[dict]:  # type: ignore[type-arg]
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_active_branch_opens_with_the_same_context(tmp_path: Path) -> None:
    source = write_rich_session(tmp_path / "rich.jsonl")
    before = source.read_bytes()
    out = export_branch_jsonl(source, tmp_path / "branch.jsonl")
    assert source.read_bytes() == before
    lines = _lines(out)
    header, entries = lines[0], lines[1:]
    assert header["type"] == "session" and header["version"] == 3
    assert header["id"] != _lines(source)[0]["id"] and header["parentSession"] == str(source)
    # One chain: each entry's parent is the entry before it; the abandoned branch is gone.
    ids = [e["id"] for e in entries]
    assert "u2" not in ids and "a2" not in ids
    chain = [e for e in entries if e["type"] != "label"]
    assert chain[0]["parentId"] is None
    for previous, entry in itertools.pairwise(chain):
        assert entry["parentId"] == previous["id"]
    labels = [e for e in entries if e["type"] == "label"]
    assert [(lab["targetId"], lab["label"]) for lab in labels] == [("u1", "start here")]
    loaded = read_session_file(out)
    assert loaded.status == "ok" and loaded.diagnostics == []
    # Entries the branch keeps as they were are copied line for line; u3 hung under the label, so
    # its line is written anew with its new parent.
    source_lines = source.read_text(encoding="utf-8").splitlines()
    out_lines = out.read_text(encoding="utf-8").splitlines()
    assert source_lines[1] in out_lines and source_lines[-1] in out_lines
    assert not any(line.startswith('{"type":"message","id":"u3","parentId":"l1"') for line in out_lines)

    original = open_session(source, writable=False)
    exported = open_session(out, writable=False)
    assert exported.tree.build_context().messages == original.tree.build_context().messages
    assert exported.tree.labels() == {"u1": "start here"}
    original.close()
    exported.close()


def test_branch_to_another_leaf_and_refusals(tmp_path: Path) -> None:
    source = write_rich_session(tmp_path / "rich.jsonl")
    out = export_branch_jsonl(source, tmp_path / "zebra.jsonl", leaf_id="a2")
    assert [e["id"] for e in _lines(out)[1:] if e["type"] != "label"] == ["u1", "a1", "r1", "a1b", "u2", "a2"]
    with pytest.raises(ExportError, match="another file"):
        export_branch_jsonl(source, source)
    with pytest.raises(ExportError, match="No entry nope"):
        export_branch_jsonl(source, tmp_path / "x.jsonl", leaf_id="nope")
    assert not (tmp_path / "x.jsonl").exists()


def test_command_line_jsonl(tmp_path: Path) -> None:
    source = write_rich_session(tmp_path / "rich.jsonl")
    target = tmp_path / "b.jsonl"
    done = subprocess.run(
        [sys.executable, "-m", "piwork", "export", str(source), "-o", str(target)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert [e["id"] for e in _lines(target) if e["type"] == "message"][-1] == "a5"


def test_import_copies_without_touching_the_source(tmp_path: Path) -> None:
    (tmp_path / "elsewhere").mkdir()
    source = write_rich_session(tmp_path / "elsewhere" / "rich.jsonl")
    os.chmod(source, 0o444)  # read-only: importing must not need to write it
    stat = source.stat()
    folder = tmp_path / "sessions"
    copy = import_session(source, folder)
    assert copy.parent == folder and copy.name == "rich.jsonl"
    assert copy.read_bytes() == source.read_bytes()
    assert source.stat().st_mtime_ns == stat.st_mtime_ns
    assert import_session(source, folder) == copy  # the same file again: the same copy
    source.chmod(0o644)
    source.write_text(source.read_text(encoding="utf-8").replace("Great", "Fine"), encoding="utf-8")
    second = import_session(source, folder)
    assert second.name == "rich-2.jsonl"
    session = open_session(second)
    assert session.tree.leaf_id == "a5"
    session.close()


def test_import_refuses_what_is_not_a_session(tmp_path: Path) -> None:
    notes = tmp_path / "notes.jsonl"
    notes.write_text('{"a": 1}\n')
    with pytest.raises(ImportRefused, match="Not a session file"):
        import_session(notes, tmp_path / "sessions")
    with pytest.raises(ImportRefused, match="No such file"):
        import_session(tmp_path / "missing.jsonl", tmp_path / "sessions")
    assert not (tmp_path / "sessions").exists()  # nothing made for a refused file
