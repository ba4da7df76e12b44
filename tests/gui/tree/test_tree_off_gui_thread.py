"""The tree dock on a large real session file keeps the GUI thread free (the stall guard of
tests/gui/conftest.py fails any test here whose GUI thread runs 50 ms without its event loop): row
titles whose text is not in the light index are read in a worker thread while the row shows a
placeholder; the graph's tooltips likewise."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QModelIndex, Qt
from pytestqt.qtbot import QtBot

from piwork.gui.tree.graph_model import TOOLTIP_READING
from piwork.gui.tree.title_reader import PENDING_TITLE
from piwork.gui.tree.tree_model import ENTRY_ID_ROLE
from piwork.gui.tree.tree_panel import SessionTreePanel
from tests.benchmarks.session_fixture import write_large_session

ENTRIES = 20_000


@pytest.fixture(scope="module")
def large_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("large") / "large.jsonl"
    write_large_session(path, entries=ENTRIES, body_chars=300)
    return path


@pytest.fixture
def panel(qtbot: QtBot, qloop: asyncio.AbstractEventLoop, large_file: Path) -> Iterator[SessionTreePanel]:
    panel = SessionTreePanel()
    qtbot.addWidget(panel)
    panel.resize(500, 700)
    panel.show()
    with qtbot.waitSignal(panel.loaded, timeout=30000):
        qloop.create_task(panel.open_file(str(large_file)))
    yield panel
    panel.shutdown()
    if panel.session is not None:
        panel.session.close()


def _visible_rows(view: Any) -> list[QModelIndex]:
    rows = []
    index = view.indexAt(view.viewport().rect().topLeft())
    while index.isValid() and view.visualRect(index).top() < view.viewport().height():
        rows.append(index)
        index = view.indexBelow(index) if hasattr(view, "indexBelow") else index.siblingAtRow(index.row() + 1)
    return rows


def _titles(rows: list[QModelIndex]) -> list[str]:
    return [str(index.data(Qt.ItemDataRole.DisplayRole)) for index in rows]


def test_outline_rows_show_a_placeholder_until_a_worker_has_read_their_text(
    panel: SessionTreePanel, qtbot: QtBot
) -> None:
    tree = panel.tree
    assert tree is not None and tree.body_loader is not None
    panel.view.scrollToTop()  # rows not read yet (those around the leaf were, when they were painted)
    rows = [index for index in _visible_rows(panel.view) if index.data(ENTRY_ID_ROLE) is not None]
    assert len(rows) > 10
    records = [tree.record(index.data(ENTRY_ID_ROLE)) for index in rows]
    assert any(record is not None and not record.has_details for record in records)  # bodies on disk
    titles = _titles(rows)
    assert any(PENDING_TITLE in title for title in titles)  # painting did not read them
    qtbot.waitUntil(lambda: not any(PENDING_TITLE in t for t in _titles(rows)))
    assert all(record is not None and record.has_details for record in records)
    for index, record in zip(rows, records, strict=True):
        assert record is not None and record.preview in str(index.data(Qt.ItemDataRole.DisplayRole))


def test_graph_rows_and_tooltips_are_read_in_a_worker(panel: SessionTreePanel, qtbot: QtBot) -> None:
    panel.show_graph()
    model = panel.graph.model
    assert model is not None and panel.tree is not None
    view = panel.graph.list
    panel.graph.fold_box.setChecked(False)
    view.scrollToTop()
    rows = _visible_rows(view)
    assert any(PENDING_TITLE in title for title in _titles(rows))
    qtbot.waitUntil(lambda: not any(PENDING_TITLE in t for t in _titles(rows)))
    index = rows[len(rows) // 2]
    record = panel.tree.record(index.data(ENTRY_ID_ROLE))
    assert record is not None and record.body is None  # the body stays on disk
    first = index.data(Qt.ItemDataRole.ToolTipRole)
    assert first == TOOLTIP_READING
    qtbot.waitUntil(lambda: index.data(Qt.ItemDataRole.ToolTipRole) != TOOLTIP_READING)
    assert record.preview.rstrip("…")[:40] in " ".join(str(index.data(Qt.ItemDataRole.ToolTipRole)).split())
