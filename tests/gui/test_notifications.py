"""Unexpected errors from the GUI thread, worker threads and asyncio tasks end in a visible message."""

from __future__ import annotations

import asyncio
import gc
import logging
import sys
import threading

from PySide6.QtWidgets import QMessageBox, QWidget
from pytestqt.qtbot import QtBot

from piwork.core.errors import PiworkError
from piwork.gui.notifications import MAX_OPEN_BOXES, NOTIFIED, NotificationCenter, describe_exception


def _center(qtbot: QtBot) -> NotificationCenter:
    parent = QWidget()
    qtbot.addWidget(parent)
    center = NotificationCenter(parent)
    return center


def test_excepthook_shows_a_box_with_details(qtbot: QtBot) -> None:
    center = _center(qtbot)
    center.install()
    try:
        try:
            raise ValueError("broken widget state")
        except ValueError:
            sys.excepthook(*sys.exc_info())  # what Qt does with an exception escaping a slot
    finally:
        center.uninstall()
    assert len(center.open_boxes) == 1
    box = center.open_boxes[0]
    assert box.isVisible() and box.icon() == QMessageBox.Icon.Critical
    assert "broken widget state" in box.text()
    assert "Traceback" in box.detailedText() and "ValueError" in box.detailedText()
    center.close_all()


def test_worker_thread_errors_reach_the_gui_thread(qtbot: QtBot) -> None:
    center = _center(qtbot)
    center.install()
    try:

        def work() -> None:
            raise RuntimeError("worker failed")

        with qtbot.waitSignal(center.posted, timeout=5000) as posted:
            thread = threading.Thread(target=work)
            thread.start()
            thread.join()
    finally:
        center.uninstall()
    assert "worker failed" in posted.args[0].text
    assert center.open_boxes and center.open_boxes[0].isVisible()
    center.close_all()


def test_asyncio_task_errors_use_the_loop_handler(qtbot: QtBot) -> None:
    center = _center(qtbot)
    loop = asyncio.new_event_loop()
    center.install(loop)
    try:

        async def fail() -> None:
            raise OSError("disk gone")

        task = loop.create_task(fail())
        loop.run_until_complete(asyncio.wait([task]))
        del task  # an exception nobody retrieved reaches the loop's handler when the task is collected
        gc.collect()
    finally:
        center.uninstall()
        loop.close()
    assert "disk gone" in center.history[-1].text
    center.close_all()


def test_engine_errors_are_shown_as_written_and_bursts_are_capped(qtbot: QtBot) -> None:
    center = _center(qtbot)
    note = describe_exception(PiworkError("The session file is locked by another piwork."))
    assert note.text == "The session file is locked by another piwork."
    for _ in range(MAX_OPEN_BOXES + 3):
        center.post(note)
    assert len(center.open_boxes) == MAX_OPEN_BOXES and center.suppressed == 3
    assert len(center.history) == MAX_OPEN_BOXES + 3
    center.close_all()


def test_uninstall_restores_the_previous_hooks(qtbot: QtBot) -> None:
    before_sys, before_thread = sys.excepthook, threading.excepthook
    center = _center(qtbot)
    center.install()
    assert sys.excepthook is not before_sys
    center.uninstall()
    assert sys.excepthook is before_sys and threading.excepthook is before_thread


def test_errors_logged_by_piwork_reach_the_screen_once_from_any_thread(qtbot: QtBot) -> None:
    center = _center(qtbot)
    center.install()
    try:
        engine = logging.getLogger("piwork.core.agent.events")
        try:
            raise KeyError("listener state")
        except KeyError:
            engine.exception("event listener failed on %s", "message_end")
        assert len(center.history) == 1
        shown = center.history[0]
        assert "event listener failed on message_end" in shown.text and "KeyError" in shown.text
        assert "Traceback" in shown.details and "piwork.core.agent.events" in shown.details

        def work() -> None:  # a worker's record is shown on the GUI thread
            logging.getLogger("piwork.gui.logs").error("index of %s lost", "bash.log")

        with qtbot.waitSignal(center.posted, timeout=5000) as posted:
            thread = threading.Thread(target=work)
            thread.start()
            thread.join()
        assert "index of bash.log lost" in posted.args[0].text

        logging.getLogger("piwork.core").warning("only a warning")  # below ERROR: the log keeps it
        logging.getLogger("httpx").error("another library's error")  # not piwork's
        logging.getLogger("piwork.gui").error("already shown", extra={NOTIFIED: True})
        try:
            raise ValueError("slot failed")
        except ValueError:
            sys.excepthook(*sys.exc_info())  # the hook logs it and shows it: once, not twice
        assert len(center.history) == 3 and "slot failed" in center.history[-1].text
    finally:
        center.uninstall()
    logging.getLogger("piwork.core").error("after uninstall")
    assert len(center.history) == 3
    center.close_all()
