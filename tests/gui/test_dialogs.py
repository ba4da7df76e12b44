"""Questions asked from a coroutine open their dialog and await it: the event loop keeps turning (tasks
advance, timers tick) while the dialog waits, and the answer comes back to the coroutine."""

from __future__ import annotations

import asyncio

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QDialog, QInputDialog, QMessageBox, QWidget
from pytestqt.qtbot import QtBot

from piwork.gui.dialogs import ask, ask_item, ask_text, ask_yes_no, tell
from tests.support.heartbeat import keeps_running


def _warm_up() -> None:
    """The first text a process lays out loads its fonts (~100 ms, once; the window has done it long before
    a question is asked): here, in the test's own code, not inside an event the stall guard measures."""
    box = QMessageBox(QMessageBox.Icon.Question, "Warm", "up")
    box.ensurePolished()
    box.sizeHint()
    box.deleteLater()


def _open(kind: type[QDialog]) -> QDialog:
    found = [w for w in QApplication.topLevelWidgets() if isinstance(w, kind) and w.isVisible()]
    assert len(found) == 1
    return found[0]


def test_a_yes_no_question_waits_without_a_nested_loop_and_says_which_button(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop
) -> None:
    _warm_up()
    parent = QWidget()
    qtbot.addWidget(parent)
    parent.show()
    for button, expected in ((QMessageBox.StandardButton.Yes, True), (QMessageBox.StandardButton.No, False)):
        answer = qloop.create_task(ask_yes_no(parent, "Delete?", "Delete it for good?"))
        qtbot.waitUntil(lambda: parent.findChild(QMessageBox) is not None)
        box = parent.findChild(QMessageBox)
        assert isinstance(box, QMessageBox) and box.windowModality() == Qt.WindowModality.WindowModal
        assert box.defaultButton() is box.button(QMessageBox.StandardButton.No)
        ticking = qloop.create_task(asyncio.sleep(0.01))  # other tasks go on while the box waits
        qtbot.waitUntil(ticking.done)
        keeps_running(qtbot)
        assert not answer.done()
        box.button(button).click()
        qtbot.waitUntil(answer.done)
        assert answer.result() is expected
        qtbot.waitUntil(lambda: parent.findChild(QMessageBox) is None)  # deleted once closed


def test_text_and_item_questions_give_the_answer_or_none_when_cancelled(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop
) -> None:
    _warm_up()
    named = qloop.create_task(ask_text(None, "Name", "Session name:", "old name"))
    qtbot.waitUntil(
        lambda: any(isinstance(w, QInputDialog) and w.isVisible() for w in QApplication.topLevelWidgets())
    )
    dialog = _open(QInputDialog)
    assert isinstance(dialog, QInputDialog) and dialog.textValue() == "old name"
    dialog.setTextValue("new name")
    dialog.accept()
    qtbot.waitUntil(named.done)
    assert named.result() == "new name"

    cancelled = qloop.create_task(ask_text(None, "Name", "Session name:"))
    qtbot.waitUntil(
        lambda: any(isinstance(w, QInputDialog) and w.isVisible() for w in QApplication.topLevelWidgets())
    )
    _open(QInputDialog).reject()
    qtbot.waitUntil(cancelled.done)
    assert cancelled.result() is None

    picked = qloop.create_task(ask_item(None, "Fork", "Before which message?", ["1. first", "2. second"]))
    qtbot.waitUntil(
        lambda: any(isinstance(w, QInputDialog) and w.isVisible() for w in QApplication.topLevelWidgets())
    )
    dialog = _open(QInputDialog)
    assert isinstance(dialog, QInputDialog) and dialog.comboBoxItems() == ["1. first", "2. second"]
    dialog.setTextValue("2. second")
    dialog.accept()
    qtbot.waitUntil(picked.done)
    assert picked.result() == 1


def test_a_dialog_deleted_or_a_wait_cancelled_never_leaves_the_coroutine_hanging(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop
) -> None:
    dialog = QDialog()
    waiting = qloop.create_task(ask(dialog))
    qtbot.waitUntil(dialog.isVisible)
    dialog.deleteLater()
    qtbot.waitUntil(waiting.done)
    assert waiting.result() == QDialog.DialogCode.Rejected.value

    kept = QDialog()
    qtbot.addWidget(kept)
    waiting = qloop.create_task(ask(kept))
    qtbot.waitUntil(kept.isVisible)
    waiting.cancel()
    qtbot.waitUntil(waiting.done)
    assert waiting.cancelled() and not kept.isVisible() and kept.result() == QDialog.DialogCode.Rejected.value


def test_tell_shows_a_message_and_returns_at_once(qtbot: QtBot) -> None:
    parent = QWidget()
    qtbot.addWidget(parent)
    parent.show()
    box = tell(parent, "Rename failed", "The file <b>is</b> read-only")
    assert box.isVisible() and box.icon() == QMessageBox.Icon.Warning
    assert "&lt;b&gt;" in box.text()  # shown as it is, never as markup
    box.button(QMessageBox.StandardButton.Ok).click()
    qtbot.waitUntil(lambda: parent.findChild(QMessageBox) is None)
