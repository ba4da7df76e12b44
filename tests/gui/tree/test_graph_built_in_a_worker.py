"""The branch graph of a long session is laid out in a worker thread when its tab is first shown.

Laying out a 100k-entry session with thousands of side branches took the GUI thread seconds, the window
frozen meanwhile. Now the graph says it is being laid out, a worker does it, and the result is shown in
one step. Entries appended while the worker runs are in the graph once it shows (taken in after the
layout of the moment the worker started), and a move in the tree meanwhile lays it out again.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pytestqt.qtbot import QtBot

from piwork.core.session import open_session
from piwork.core.session.graph_layout import GraphLayout
from piwork.core.session.store import Session
from piwork.gui.tree.graph_model import BranchGraphModel
from piwork.gui.tree.tree_panel import SessionTreePanel
from tests.core.session.helpers import assistant, user, write_session

MAIN = 6_000  # entries on the main line; a two-entry side branch every 50
LOADING = "Laying out the graph…"


def _long_session(tmp_path: Path) -> Session:
    entries: list[dict[str, Any]] = []
    parent = None
    for n in range(MAIN):
        make = user if n % 2 == 0 else assistant
        entries.append(make(f"m{n}", parent, f"main entry {n}", n))
        parent = f"m{n}"
        if n % 50 == 49:
            entries.append(user(f"s{n}", f"m{n - 3}", f"side question {n}", n))
            entries.append(assistant(f"t{n}", f"s{n}", f"side answer {n}", n))
    path = write_session(tmp_path / "long.jsonl", entries)
    return open_session(path, writable=True)


class Layouts:
    """Notes the thread each graph layout of the real code path runs in; `hold` keeps the next one
    waiting (in its worker) until `release`."""

    def __init__(self) -> None:
        self.threads: list[threading.Thread] = []
        self.started = threading.Event()
        self.release = threading.Event()
        self.release.set()

    def hold(self) -> None:
        self.started.clear()
        self.release.clear()


@pytest.fixture
def layouts(monkeypatch: pytest.MonkeyPatch) -> Iterator[Layouts]:
    seen = Layouts()
    build = GraphLayout._build

    def noted(layout: GraphLayout) -> None:
        seen.threads.append(threading.current_thread())
        seen.started.set()
        seen.release.wait(timeout=2)
        build(layout)

    monkeypatch.setattr(GraphLayout, "_build", noted)
    yield seen
    seen.release.set()


@pytest.fixture
def panel(qtbot: QtBot, qloop: asyncio.AbstractEventLoop, tmp_path: Path) -> Iterator[SessionTreePanel]:
    session = _long_session(tmp_path)
    shown = SessionTreePanel()
    qtbot.addWidget(shown)
    shown.resize(420, 700)
    shown.show()
    shown.set_session(session)
    yield shown
    shown.shutdown()
    session.close()


def _same_as_a_fresh_layout(panel: SessionTreePanel) -> None:
    model = panel.graph.model
    assert model is not None and panel.tree is not None
    fresh = BranchGraphModel(panel.tree, fold_at=model.fold_at)
    assert list(model.rows.rows) == list(fresh.rows.rows)
    assert model.layout.lane == fresh.layout.lane and model.layout.through == fresh.layout.through
    fresh.detach()


def test_showing_the_graph_lays_it_out_in_a_worker(
    panel: SessionTreePanel, layouts: Layouts, qtbot: QtBot
) -> None:
    graph = panel.graph
    assert graph.model is None  # nothing laid out while the Outline is in front
    layouts.hold()
    panel.show_graph()
    qtbot.waitUntil(layouts.started.is_set, timeout=2_000)  # the worker is at it, the GUI thread free
    assert graph.laying_out and graph.model is None
    assert graph.notice.isVisible() and graph.notice.text() == LOADING
    layouts.release.set()
    qtbot.waitUntil(lambda: not graph.laying_out, timeout=5_000)
    assert layouts.threads and threading.main_thread() not in layouts.threads
    assert not graph.notice.isVisible()
    assert graph.model is not None and graph.model.rowCount() > 0
    assert panel.tree is not None and graph.current_entry_id() == panel.tree.leaf_id  # as before
    _same_as_a_fresh_layout(panel)


def test_entries_appended_while_the_graph_is_laid_out_are_in_it(
    panel: SessionTreePanel, layouts: Layouts, qtbot: QtBot
) -> None:
    tree = panel.tree
    assert tree is not None
    layouts.hold()
    panel.show_graph()
    qtbot.waitUntil(layouts.started.is_set, timeout=2_000)
    assert panel.graph.laying_out  # what follows comes during the layout
    asked = tree.append_message({"role": "user", "content": "one more thing", "timestamp": 1})
    answered = tree.append_message(
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "done"}],
            "stopReason": "stop",
            "timestamp": 2,
        }
    )
    layouts.release.set()
    qtbot.waitUntil(lambda: not panel.graph.laying_out, timeout=5_000)
    graph = panel.graph.model
    assert graph is not None
    assert len(layouts.threads) == 1  # taken in after the layout, not laid out again
    assert graph.index_of_id(asked).isValid() and graph.index_of_id(answered).isValid()
    assert panel.graph.current_entry_id() == answered
    _same_as_a_fresh_layout(panel)
    later = tree.append_message({"role": "user", "content": "and then", "timestamp": 3})  # streaming goes on
    assert panel.graph.current_entry_id() == later
    _same_as_a_fresh_layout(panel)


def test_a_move_in_the_tree_while_the_graph_is_laid_out_lays_it_out_again(
    panel: SessionTreePanel, layouts: Layouts, qtbot: QtBot
) -> None:
    tree = panel.tree
    assert tree is not None
    layouts.hold()
    panel.show_graph()
    qtbot.waitUntil(layouts.started.is_set, timeout=2_000)
    tree.branch("m2000")  # the leaf moves up, and a new branch starts there
    fork = tree.append_message({"role": "user", "content": "try it another way", "timestamp": 1})
    layouts.release.set()
    qtbot.waitUntil(lambda: not panel.graph.laying_out, timeout=5_000)
    assert len(layouts.threads) == 2 and threading.main_thread() not in layouts.threads
    graph = panel.graph.model
    assert graph is not None and graph.index_of_id(fork).isValid()
    assert panel.graph.current_entry_id() == fork
    _same_as_a_fresh_layout(panel)
