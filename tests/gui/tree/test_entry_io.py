"""The tree panel's file work runs off the GUI thread: an entry read back from a large session file, and
label entries written by the session file's writer lane (in order, errors shown)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from pytestqt.qtbot import QtBot

from piwork.core.session.store import Session, open_session
from piwork.gui.tree.entry_io import READING
from piwork.gui.tree.tree_panel import SessionTreePanel
from tests.core.session.helpers import assistant, conversation, user, write_session


def _panel(qtbot: QtBot, session: Session) -> SessionTreePanel:
    panel = SessionTreePanel()
    qtbot.addWidget(panel)
    panel.resize(700, 600)
    panel.show()
    panel.set_session(session)
    return panel


def _heavy_entry(entry_id: str, parent: str) -> dict[str, Any]:
    """A compaction whose details (kept, never shown) take long to parse: many small objects."""
    notes = [{"path": f"src/module_{n}.py", "line": n, "hit": "x"} for n in range(300_000)]
    return {
        "type": "compaction",
        "id": entry_id,
        "parentId": parent,
        "timestamp": "2024-12-03T14:10:00.000Z",
        "summary": "Searched 300000 places.",
        "firstKeptEntryId": parent,
        "tokensBefore": 90000,
        "details": {"notes": notes},
    }


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_an_entry_read_back_from_a_large_file_arrives_without_stalling_the_window(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, tmp_path: Path
) -> None:
    entries = [*conversation(1), _heavy_entry("big", "a0"), assistant("end", "big", "all found", 30)]
    path = write_session(tmp_path / "s.jsonl", entries)
    session = open_session(path, writable=False)  # bodies stay in the file until asked for
    panel = _panel(qtbot, session)
    qtbot.waitUntil(lambda: "all found" in panel.detail.toPlainText())  # the leaf, read in a worker
    panel.select_entry("big")
    assert panel.details.reading and panel.detail.placeholderText() == READING
    qtbot.waitUntil(lambda: "Searched 300000 places." in panel.detail.toPlainText(), timeout=20000)
    assert "Compacted 90000 tokens" in panel.detail.toPlainText()
    # a newer selection wins over a read still running
    panel.select_entry("big")
    panel.select_entry("u0")
    qtbot.waitUntil(lambda: not panel.details.reading)
    assert "question 0" in panel.detail.toPlainText() and "300000" not in panel.detail.toPlainText()
    panel.shutdown()
    session.close()


def test_two_quick_label_edits_are_written_in_order(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, tmp_path: Path
) -> None:
    path = write_session(tmp_path / "s.jsonl", conversation(2))
    session = open_session(path)
    panel = _panel(qtbot, session)
    assert panel.set_label("u0", "first") and panel.set_label("u0", "second")
    assert panel.set_label("u1", "other") and panel.set_label("u1", None)
    assert session.tree.label("u0") == "second"  # the tree (and its views) change at once
    qtbot.waitUntil(lambda: not panel.labels.writing)
    labels = [(e["targetId"], e.get("label")) for e in _lines(path) if e["type"] == "label"]
    assert labels == [("u0", "first"), ("u0", "second"), ("u1", "other"), ("u1", None)]
    session.close()
    with open_session(path, writable=False) as again:
        assert again.tree.label("u0") == "second" and again.tree.label("u1") is None
    panel.shutdown()


def test_a_label_the_file_cannot_take_is_reported_and_nothing_is_lost(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, tmp_path: Path
) -> None:
    path = write_session(tmp_path / "s.jsonl", [user("u0", None, "hello"), assistant("a0", "u0", "hi")])
    session = open_session(path)
    panel = _panel(qtbot, session)
    moved = path.rename(tmp_path / "moved-away.jsonl")  # another program moved the file
    assert not panel.set_label("u0", "keep")
    assert "Label not saved" in panel.status.text() and "moved" in panel.status.text()
    assert session.tree.label("u0") is None
    assert [e["type"] for e in _lines(moved)] == ["session", "message", "message"]
    panel.shutdown()
    session.close()
