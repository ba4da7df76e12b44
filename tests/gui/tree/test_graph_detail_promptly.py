"""Selecting an entry in the graph of a session with many side branches shows its text promptly.

Two things held it back while a long session was open. Each row of the graph drew a line for every lane
passing it, thousands in a session with thousands of side branches, nearly all right of the view, so
each repaint took the GUI thread most of a second; and the entry's read only went to a worker once
the event loop got to it, after those repaints (and whatever else was queued there). Now a row draws
the lanes within its width, and the read is under way in a worker as soon as the entry is selected.
"""

from __future__ import annotations

import asyncio
import os
import threading
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QPointF
from PySide6.QtGui import QImage, QPainter
from PySide6.QtWidgets import QStyleOptionViewItem
from pytestqt.qtbot import QtBot

from piwork.core.session import open_session
from piwork.core.session.store import Session
from piwork.gui.tree.entry_io import READING
from piwork.gui.tree.graph_delegate import lane_x
from piwork.gui.tree.graph_model import GRAPH_ROLE, GraphCell
from piwork.gui.tree.graph_view import BranchGraphView
from piwork.gui.tree.tree_panel import SessionTreePanel
from tests.core.session.helpers import assistant, user, write_session

MAIN = 400  # entries on the main line; a one-entry side branch leaves every second one


def _many_branches(tmp_path: Path) -> Session:
    """A main line with 199 side branches: about 200 lanes pass the rows near the end of the graph."""
    entries: list[dict[str, Any]] = []
    parent = None
    for n in range(MAIN):
        make = user if n % 2 == 0 else assistant
        entries.append(make(f"m{n}", parent, f"main entry {n}", n))
        parent = f"m{n}"
        if n % 2 == 1 and n > 2:
            entries.append(user(f"s{n}", f"m{n - 1}", f"side entry {n}", n))
    path = write_session(tmp_path / "branches.jsonl", entries)
    return open_session(path, writable=False)  # bodies stay in the file until asked for


class LinesDrawn(QPainter):
    """A painter on an image that notes where each line it draws starts."""

    def __init__(self, image: QImage) -> None:
        super().__init__(image)
        self.starts: list[QPointF] = []

    def drawLine(self, *args: Any) -> None:
        self.starts.append(QPointF(args[0]))
        super().drawLine(*args)


def test_a_graph_row_draws_only_the_lanes_within_its_width(qtbot: QtBot, tmp_path: Path) -> None:
    session = _many_branches(tmp_path)
    view = BranchGraphView()
    qtbot.addWidget(view)
    view.resize(300, 400)
    view.show()
    view.set_tree(session.tree)
    assert view.model is not None
    index = view.model.index_of_id("m398")  # on the main line, near the end
    cell = index.data(GRAPH_ROLE)
    assert isinstance(cell, GraphCell) and cell.lane == 0
    assert len(cell.through) > 150  # the lines of ~200 side branches' lanes pass this row
    rect = view.list.visualRect(index)
    pitch = view.delegate.lane_width
    assert lane_x(cell.through[-1], pitch) > 5 * rect.width()  # nearly all of them far right of the view
    option = QStyleOptionViewItem()
    option.rect = rect
    option.font = view.list.font()
    option.palette = view.list.palette()
    image = QImage(rect.right() + 1, rect.bottom() + 1, QImage.Format.Format_ARGB32)
    painter = LinesDrawn(image)
    view.delegate.paint(painter, option, index)
    painter.end()
    drawn = {start.x() for start in painter.starts}
    in_view = {
        rect.left() + lane_x(lane, pitch) for lane in cell.through if lane_x(lane, pitch) <= rect.right()
    }
    assert in_view and in_view <= drawn  # every lane line in view is drawn
    assert all(x <= rect.right() + 3 for x in drawn)  # and none right of the row (at most a pen's width)
    assert len(painter.starts) <= rect.width() / pitch + 3
    view.clear()
    session.close()


class SlowLine:
    """One line of a session file on a slow disk: reading it back by its offset waits at a gate until
    the test opens it (the other lines read as usual); the threads that waited are noted."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, offset: int) -> None:
        self.gate = threading.Event()
        self.asked = threading.Event()
        self.readers: list[int] = []
        real_pread = os.pread

        def pread(fd: int, length: int, at: int) -> bytes:
            if at == offset:
                self.readers.append(threading.get_ident())
                self.asked.set()
                self.gate.wait(30)  # a test that never opens it fails instead of hanging
            return real_pread(fd, length, at)

        monkeypatch.setattr(os, "pread", pread)


def test_the_selected_entrys_read_is_under_way_before_the_gui_thread_is_free_again(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    session = _many_branches(tmp_path)
    record = session.tree.record("m100")
    assert record is not None and record.body is None  # its text is in the file only
    disk = SlowLine(monkeypatch, record.offset)
    panel = SessionTreePanel()
    qtbot.addWidget(panel)
    panel.resize(420, 700)
    panel.show()
    panel.show_graph()
    panel.set_session(session)
    qtbot.waitUntil(lambda: "side entry 399" in panel.detail.toPlainText())  # the leaf, read in a worker
    graph = panel.graph
    qtbot.waitUntil(lambda: not graph.laying_out)  # the graph too
    assert graph.model is not None and not disk.asked.is_set()

    graph.list.setCurrentIndex(graph.model.index_of_id("m100"))
    assert panel.details.reading and panel.detail.placeholderText() == READING
    # The GUI thread stays busy here, as with the repaints a selection queues: the read must already be
    # in a worker, at the disk, without the event loop having run again.
    at_the_disk = disk.asked.wait(5)
    disk.gate.set()
    assert at_the_disk
    qtbot.waitUntil(lambda: "main entry 100" in panel.detail.toPlainText())
    assert threading.get_ident() not in disk.readers and not panel.details.reading
    panel.shutdown()
    session.close()
