"""Asking the user from a coroutine: open the dialog, await its answer, never a nested event loop.

``QDialog.exec()`` (and the static ``QInputDialog.getText``, ``QFileDialog.getSaveFileName``,
``QMessageBox.warning``... that call it) spins a second Qt event loop inside the caller. Under qasync the
loop's callbacks then run inside whatever asyncio callback or task step called ``exec``: a task resumed
there re-enters the loop ("Cannot enter into task ... while another task ... is being executed") and a
callback that finishes the outer step runs twice. :func:`ask` instead opens the dialog window-modally and
awaits a future that its ``finished`` signal settles, so the one event loop keeps turning. The helpers
below give the usual questions (a line of text, one item of a list, a file to read or write, yes or no)
in that form; :func:`tell` shows a message without waiting for it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import shiboken6
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialog, QFileDialog, QInputDialog, QLineEdit, QMessageBox, QWidget

from piwork.gui.inert_text import plain_tip
from piwork.gui.window_flags import dialog_buttons


async def ask(dialog: QDialog) -> int:
    """Open ``dialog`` (window-modal to its parent) and wait for its result code without blocking the
    event loop. A dialog deleted before it answers counts as rejected; cancelling the wait rejects it."""
    if dialog.parent() is not None:
        dialog.setWindowModality(Qt.WindowModality.WindowModal)
    future: asyncio.Future[int] = asyncio.get_running_loop().create_future()

    def settle(result: int) -> None:
        if not future.done():
            future.set_result(result)

    dialog.finished.connect(settle)
    dialog.destroyed.connect(lambda *_: settle(QDialog.DialogCode.Rejected.value))
    dialog.open()
    try:
        return await future
    except asyncio.CancelledError:
        if shiboken6.isValid(dialog):
            dialog.reject()
        raise


async def _accepted(dialog: QDialog) -> bool:
    """Ask, and leave ``dialog`` to be deleted once the caller has read its answer (after this turn)."""
    try:
        return await ask(dialog) == QDialog.DialogCode.Accepted.value
    finally:
        if shiboken6.isValid(dialog):
            dialog.deleteLater()


async def ask_text(parent: QWidget | None, title: str, label: str, text: str = "") -> str | None:
    """A line of text (None: cancelled); starts with ``text`` selected."""
    dialog = QInputDialog(parent)
    dialog_buttons(dialog)
    dialog.setWindowTitle(title)
    dialog.setLabelText(label)
    dialog.setTextEchoMode(QLineEdit.EchoMode.Normal)
    dialog.setTextValue(text)
    if not await _accepted(dialog):
        return None
    return dialog.textValue()


async def ask_item(parent: QWidget | None, title: str, label: str, items: Sequence[str]) -> int | None:
    """The index of the item chosen from ``items`` (None: cancelled); the first is preselected."""
    dialog = QInputDialog(parent)
    dialog_buttons(dialog)
    dialog.setWindowTitle(title)
    dialog.setLabelText(label)
    dialog.setComboBoxItems(list(items))
    dialog.setComboBoxEditable(False)
    if items:
        dialog.setTextValue(items[0])
    if not await _accepted(dialog):
        return None
    chosen = dialog.textValue()
    return list(items).index(chosen) if chosen in items else None


async def ask_open_file(parent: QWidget | None, caption: str, folder: str, filters: str) -> str | None:
    """An existing file to read (None: cancelled)."""
    dialog = QFileDialog(parent, caption, folder, filters)
    dialog_buttons(dialog, maximize=True)  # a file browser can use the room; no minimise
    dialog.setFileMode(QFileDialog.FileMode.ExistingFile)
    dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptOpen)
    if not await _accepted(dialog):
        return None
    files = dialog.selectedFiles()
    return files[0] if files else None


async def ask_folder(parent: QWidget | None, caption: str, folder: str) -> str | None:
    """An existing folder (None: cancelled)."""
    dialog = QFileDialog(parent, caption, folder)
    dialog_buttons(dialog, maximize=True)  # a file browser can use the room; no minimise
    dialog.setFileMode(QFileDialog.FileMode.Directory)
    dialog.setOption(QFileDialog.Option.ShowDirsOnly, True)
    if not await _accepted(dialog):
        return None
    folders = dialog.selectedFiles()
    return folders[0] if folders else None


async def ask_save_file(
    parent: QWidget | None, caption: str, start: str, filters: str
) -> tuple[str, str] | None:
    """A file to write and the filter chosen for it (None: cancelled); asks before replacing a file."""
    dialog = QFileDialog(parent, caption, start, filters)
    dialog_buttons(dialog, maximize=True)  # a file browser can use the room; no minimise
    dialog.setFileMode(QFileDialog.FileMode.AnyFile)
    dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
    if not await _accepted(dialog):
        return None
    files = dialog.selectedFiles()
    return (files[0], dialog.selectedNameFilter()) if files else None


def yes_no_box(parent: QWidget | None, title: str, question: str) -> QMessageBox:
    """A question whose default is No: a reflexive Enter changes nothing."""
    no, yes = QMessageBox.StandardButton.No, QMessageBox.StandardButton.Yes
    box = QMessageBox(QMessageBox.Icon.Question, title, plain_tip(question), yes | no, parent)
    box.setDefaultButton(no)
    return box


async def ask_yes_no(parent: QWidget | None, title: str, question: str) -> bool:
    """Yes or No (closing the box is No)."""
    box = yes_no_box(parent, title, question)
    box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    return await ask(box) == QMessageBox.StandardButton.Yes.value


def tell(
    parent: QWidget | None, title: str, text: str, *, icon: QMessageBox.Icon = QMessageBox.Icon.Warning
) -> QMessageBox:
    """Show a message box window-modally and return at once (it deletes itself when closed)."""
    box = QMessageBox(icon, title, plain_tip(text), QMessageBox.StandardButton.Ok, parent)
    box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    if parent is not None:
        box.setWindowModality(Qt.WindowModality.WindowModal)
    box.open()
    return box
