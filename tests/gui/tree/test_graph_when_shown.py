"""The branch graph is laid out when it is on screen: a session shown while the Outline tab is in front
leaves the graph empty (a long session's graph is hundreds of thousands of objects) until its tab is
chosen, and then it shows the session as it would have at once."""

from __future__ import annotations

import asyncio
from pathlib import Path

from pytestqt.qtbot import QtBot

from piwork.gui.tree.tree_panel import SessionTreePanel
from tests.gui.tree.test_graph_follows_outline import _explorations, _graph_ids, _session_file


def test_the_graph_is_laid_out_once_its_tab_is_shown(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, tmp_path: Path
) -> None:
    entries, ids = _explorations()
    session = _session_file(tmp_path, entries)
    panel = SessionTreePanel()
    qtbot.addWidget(panel)
    panel.resize(420, 700)
    panel.show()
    assert panel.views.currentWidget() is panel.view  # the Outline in front
    panel.set_session(session)
    assert panel.graph.model is None  # nothing laid out for the graph out of view
    panel.show_graph()
    assert panel.graph.laying_out  # in a worker
    qtbot.waitUntil(lambda: not panel.graph.laying_out)
    assert panel.graph.model is not None
    shown = _graph_ids(panel.graph)
    assert ids["leaf"] in shown and panel.graph.current_entry_id() == ids["leaf"]

    other = SessionTreePanel()  # the same session shown with the graph in front from the start
    qtbot.addWidget(other)
    other.resize(420, 700)
    other.show()
    other.show_graph()
    other.set_session(session)
    qtbot.waitUntil(lambda: not other.graph.laying_out)
    assert _graph_ids(other.graph) == shown
    panel.shutdown()
    other.shutdown()
    session.close()
