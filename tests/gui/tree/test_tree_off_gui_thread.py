"""The tree dock on a large real session file keeps the GUI thread free (the stall guard of
tests/gui/conftest.py fails any test here whose GUI thread runs 50 ms without its event loop): row
titles whose text is not in the light index are read in a worker thread while the row shows a
placeholder; the graph's tooltips likewise; a search, a filter change and an opened fold are laid out in
worker threads and swapped in, keeping the selection."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QModelIndex, Qt, QTimer
from pytestqt.qtbot import QtBot

from piwork.core.session import Fold, open_session
from piwork.gui.tree.compare_dialog import CompareDialog
from piwork.gui.tree.display_tree import entry_title, is_pure_tool_call_turn
from piwork.gui.tree.files_dialog import FilesTouchedDialog
from piwork.gui.tree.graph_model import TOOLTIP_READING
from piwork.gui.tree.title_reader import PENDING_TITLE
from piwork.gui.tree.tree_model import ENTRY_ID_ROLE
from piwork.gui.tree.tree_panel import SessionTreePanel
from piwork.gui.tree.tree_search import SearchCancelled, search_entries, search_text
from tests.benchmarks.session_fixture import write_large_session

ENTRIES = 50_000
TURN_ENTRIES = 21  # a prompt, then ten tool steps: long runs to fold


@pytest.fixture(scope="module")
def large_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("large") / "large.jsonl"
    write_large_session(path, entries=ENTRIES, body_chars=300, turn_entries=TURN_ENTRIES)
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
    assert panel.model is not None
    panel.view.expand(panel.model.index(0, 0))  # the first group of 1,000 entries
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
    qtbot.waitUntil(
        lambda: panel.graph.model is not None and not panel.graph.laying_out
    )  # laid out in a worker
    model = panel.graph.model
    assert model is not None and panel.tree is not None
    view = panel.graph.list
    panel.graph.fold_box.setChecked(False)  # every entry its own row (laid out in a worker)
    qtbot.waitUntil(lambda: not panel.graph.laying_out)
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


def _outline_ids(panel: SessionTreePanel) -> set[str]:
    model = panel.model
    assert model is not None
    display = model.display
    return {str(model.tree.records[seq].id) for seq in display.container if not display.is_group(seq)}


def _graph_ids(panel: SessionTreePanel) -> set[str]:
    model = panel.graph.model
    assert model is not None
    return {str(model.tree.records[seq].id) for seq in model.layout.lane}


def test_a_search_runs_in_a_worker_once_for_both_views_and_a_newer_one_replaces_it(
    panel: SessionTreePanel, qtbot: QtBot
) -> None:
    tree = panel.tree
    assert tree is not None and tree.leaf_id is not None and panel.model is not None
    leaf = tree.record(tree.leaf_id)
    assert leaf is not None and panel.current_entry_id() == leaf.id
    words = " ".join(leaf.preview.split()[:2])
    # typed words are searched when the field's timer fires (an event: the stall guard measures it)
    panel.search_field.setText("nothing-has-this-word")
    qtbot.waitUntil(lambda: panel.laying_out or panel.model.query != "")  # (a fast machine may finish)
    panel.search_field.setText(words)  # replaces the search still running
    qtbot.waitUntil(lambda: panel.model is not None and panel.model.query == words, timeout=30000)
    assert not panel.laying_out
    assert panel.model.query == words
    tokens = words.lower().split()
    expected = {
        str(record.id)
        for record in tree.records
        if record.type == "message"
        and (record is leaf or not is_pure_tool_call_turn(record))
        and all(token in search_text(tree.details(record), tree.label(record.id)) for token in tokens)
    }
    assert leaf.id in expected and _outline_ids(panel) == expected
    assert panel.current_entry_id() == leaf.id  # the selection stays on the entry
    panel.show_graph()  # the graph lays itself out with the outline's search result
    qtbot.waitUntil(
        lambda: panel.graph.model is not None and not panel.graph.laying_out
    )  # laid out in a worker
    graph = panel.graph.model
    assert graph is not None
    qtbot.waitUntil(lambda: not panel.graph.laying_out and graph.query == words, timeout=30000)
    assert _graph_ids(panel) == expected
    assert panel.graph.current_entry_id() == leaf.id


def test_a_filter_change_and_an_opened_fold_are_laid_out_in_workers(
    panel: SessionTreePanel, qtbot: QtBot
) -> None:
    tree = panel.tree
    assert tree is not None and tree.leaf_id is not None and panel.model is not None
    panel.show_graph()
    qtbot.waitUntil(
        lambda: panel.graph.model is not None and not panel.graph.laying_out
    )  # laid out in a worker
    with qtbot.waitSignal(panel.laid_out, timeout=30000):  # from an event, so the stall guard measures it
        QTimer.singleShot(0, lambda: panel.set_filter_mode("user-only"))
    qtbot.waitUntil(lambda: not panel.graph.laying_out, timeout=30000)
    users = {str(r.id) for r in tree.records if r.type == "message" and r.role == "user"}
    assert _outline_ids(panel) == users == _graph_ids(panel)
    nearest = next(r for r in reversed(tree.path()) if r.role == "user")
    assert panel.current_entry_id() == nearest.id == panel.view.currentIndex().data(ENTRY_ID_ROLE)
    with qtbot.waitSignal(panel.laid_out, timeout=30000):
        QTimer.singleShot(0, lambda: panel.set_filter_mode("default"))
    qtbot.waitUntil(lambda: not panel.graph.laying_out, timeout=30000)
    model = panel.graph.model
    assert model is not None
    fold_row = next(row for row, item in enumerate(model.rows.rows) if isinstance(item, Fold))
    fold = model.rows.rows[fold_row]
    assert isinstance(fold, Fold)
    rows_before = model.rowCount()
    double_click = lambda: panel.graph.list.activated.emit(model.index(fold_row, 0))  # noqa: E731
    QTimer.singleShot(0, double_click)  # what a double-click on the fold does
    qtbot.waitUntil(lambda: model.rowCount() != rows_before and not panel.graph.laying_out, timeout=30000)
    assert model.rowCount() == rows_before + fold.count - 1
    assert panel.graph.current_entry_id() == tree.records[fold.first].id


def test_a_search_stops_soon_after_a_newer_one_asks_it_to(large_file: Path) -> None:
    session = open_session(large_file)
    try:
        stop = threading.Event()
        stop.set()
        with pytest.raises(SearchCancelled):
            search_entries(session.tree, "gamma", stop)
        found = search_entries(session.tree, "gamma delta")
        assert found.upto == len(session.tree.records) and found.seqs
        assert all("gamma" in session.tree.records[seq].preview.lower() for seq in found.seqs)
    finally:
        session.close()


def test_the_compare_dialogs_entry_list_reads_its_titles_in_a_worker(
    panel: SessionTreePanel, qtbot: QtBot
) -> None:
    """Comparing an early entry with the leaf lists thousands of entries on one side; a row asked for
    shows "(reading…)" without reading the file, a 5 ms timer keeps ticking, then the worker's text arrives."""
    tree = panel.tree
    assert tree is not None and tree.leaf_id is not None
    panel.branch_tools.compare(tree.path(tree.leaf_id)[10].id, tree.leaf_id)
    qtbot.waitUntil(
        lambda: any(isinstance(d, CompareDialog) for d in panel.branch_tools.dialogs), timeout=30_000
    )
    dialog = next(d for d in panel.branch_tools.dialogs if isinstance(d, CompareDialog))
    side = dialog.side_b
    model = side.messages.model()
    assert model.rowCount() > 1_000
    ids = side.activity.entry_ids
    records = [tree.record(entry_id) for entry_id in ids]
    rows = [row for row in range(len(ids) // 2, len(ids)) if not records[row].has_details][:40]  # type: ignore[union-attr]
    assert len(rows) == 40  # bodies on disk, never painted yet
    titles = [model.index(row, 0).data() for row in rows]
    assert titles == [PENDING_TITLE] * 40
    assert not any(records[row].has_details for row in rows)  # type: ignore[union-attr]  # asking read nothing
    ticks = [0]
    timer = QTimer()
    timer.setInterval(5)
    timer.timeout.connect(lambda: ticks.__setitem__(0, ticks[0] + 1))
    timer.start()
    try:
        qtbot.waitUntil(
            lambda: PENDING_TITLE not in [model.index(row, 0).data() for row in rows], timeout=10_000
        )
        qtbot.waitUntil(lambda: ticks[0] >= 10)
    finally:
        timer.stop()
    for row in rows:
        record = records[row]
        assert record is not None and record.has_details
        assert model.index(row, 0).data() == entry_title(record, tree)
    dialog.close()


def test_marking_an_entry_and_its_files_heading_read_its_text_in_a_worker(
    panel: SessionTreePanel, qtbot: QtBot
) -> None:
    """'Mark for comparison' and the Files Touched heading name an entry whose text is still on disk: it is
    read in a worker (the entry stays unread right after the call), then the status and heading name it."""
    tree = panel.tree
    assert tree is not None and tree.leaf_id is not None
    path = tree.path(tree.leaf_id)
    unread = [
        e.id for e in path[: len(path) // 2] if (r := tree.record(e.id)) is not None and not r.has_details
    ]
    marked, files_of = unread[5], unread[7]
    panel.branch_tools.mark(marked)
    record = tree.record(marked)
    assert record is not None and not record.has_details  # nothing was read on the GUI thread
    qtbot.waitUntil(lambda: record.has_details, timeout=10_000)
    qtbot.waitUntil(lambda: panel.status.text() == f"Marked for comparison: {entry_title(record, tree)}")

    task = panel.branch_tools.files_touched(files_of)
    other = tree.record(files_of)
    assert task is not None and other is not None and not other.has_details
    qtbot.waitUntil(task.done, timeout=30_000)
    dialog = next(d for d in panel.branch_tools.dialogs if isinstance(d, FilesTouchedDialog))
    assert dialog.heading.text().startswith(f"The path to “{entry_title(other, tree)}”")
    dialog.close()
