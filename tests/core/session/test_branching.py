"""Branched sessions, clone and fork."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from piwork.core.ids import SequentialIds
from piwork.core.session.branching import (
    NOT_SAVED,
    BranchingError,
    clone_session,
    fork_session,
)
from piwork.core.session.store import create_session, open_session

from .helpers import assistant, user, write_session


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _labelled_session(tmp_path: Path) -> Path:
    entries = [
        user("u0", None, "one", 1),
        assistant("a0", "u0", "two", 2),
        {
            "type": "label",
            "id": "l1",
            "parentId": "a0",
            "timestamp": "2024-12-03T14:00:03.000Z",
            "targetId": "u0",
            "label": "start",
        },
        user("u1", "l1", "three", 4),
        {
            "type": "compaction",
            "id": "c1",
            "parentId": "u1",
            "timestamp": "2024-12-03T14:00:05.000Z",
            "summary": "S",
            "firstKeptEntryId": "l1",
            "tokensBefore": 5,
        },
        assistant("a1", "c1", "four", 6),
    ]
    return write_session(tmp_path / "src.jsonl", entries)


def test_clone_relinks_around_labels_and_recreates_them(tmp_path: Path) -> None:
    source = open_session(_labelled_session(tmp_path), new_id=SequentialIds("n"))
    clone = clone_session(source)
    assert clone.path is not None and clone.path.exists()  # has an assistant: written at once
    lines = _lines(clone.path)
    assert lines[0]["parentSession"] == str(source.path) and lines[0]["cwd"] == "/home/ana/proj"
    assert [(e["id"], e["parentId"]) for e in lines[1:]] == [
        ("u0", None),
        ("a0", "u0"),
        ("u1", "a0"),
        ("c1", "u1"),
        ("a1", "c1"),
        ("n0001", "a1"),
    ]
    assert lines[4]["firstKeptEntryId"] == "u1"  # named the dropped label, now the next kept entry
    assert lines[6]["type"] == "label" and lines[6]["targetId"] == "u0"
    assert lines[6]["timestamp"] == "2024-12-03T14:00:03.000Z"
    assert clone.tree.label("u0") == "start"


def test_fork_takes_the_user_text_and_the_path_before_it(tmp_path: Path) -> None:
    source = open_session(_labelled_session(tmp_path))
    result = fork_session(source, "u1")
    assert result.editor_text == "three"
    assert [r.id for r in result.session.tree.records][:2] == ["u0", "a0"]
    root_fork = fork_session(source, "u0")
    assert root_fork.editor_text == "one" and len(root_fork.session.tree) == 0
    assert root_fork.session.header["parentSession"] == str(source.path)
    assert root_fork.session.path is not None and not root_fork.session.path.exists()


def test_unsaved_sessions_cannot_be_cloned(tmp_path: Path) -> None:
    session = create_session(str(tmp_path), session_dir=tmp_path)
    session.tree.append_model_change("anthropic", "claude-sonnet-4-5")  # no message yet: not written
    with pytest.raises(BranchingError, match="has not been saved yet"):
        clone_session(session)
    assert NOT_SAVED.startswith("This session has not been saved yet.")


def test_branch_with_only_user_messages_is_written_at_once(tmp_path: Path) -> None:
    path = write_session(tmp_path / "s.jsonl", [user("u0", None, "one"), user("u1", "u0", "two")])
    source = open_session(path)
    clone = clone_session(source)
    assert clone.path is not None and clone.path.exists()  # Pi 1.6: a user message is enough
    clone.tree.append_message(assistant("x", None, "reply")["message"])
    assert [e["type"] for e in _lines(clone.path)] == ["session", "message", "message", "message"]
