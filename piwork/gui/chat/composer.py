"""The message editor: Enter sends, Alt+Enter queues a follow-up, Shift+Enter breaks the line, Up/Down walk
the history, Esc asks to stop."""

from __future__ import annotations

import time
from collections.abc import Callable

from PySide6.QtCore import QObject, QSize, Qt, Signal
from PySide6.QtGui import QKeyEvent, QStandardItem, QStandardItemModel, QTextCursor
from PySide6.QtWidgets import QAbstractItemView, QCompleter, QPlainTextEdit, QTreeView, QWidget

from piwork.gui.commands import BUILTIN

MAX_HISTORY = 200


def command_model(extra: list[str], parent: QObject) -> QStandardItemModel:
    """``/command`` and what it does, one row each: the window's commands, then skills and templates.
    The ``/skill:`` row shows only when skills are offered as commands (``extra`` names some)."""
    model = QStandardItemModel(parent)
    offers_skills = any(name.startswith("skill:") for name in extra)
    rows = [
        ("/" + command.name, f"{command.hint}  {command.about}".strip())
        for command in BUILTIN
        if command.name != "skill:" or offers_skills
    ]
    rows += [("/" + name, "skill" if name.startswith("skill:") else "prompt template") for name in extra]
    seen: set[str] = set()
    for word, about in sorted(rows, key=lambda row: row[0]):
        if word in seen:
            continue
        seen.add(word)
        description = QStandardItem(about)
        description.setEnabled(False)  # dimmed: the command is what gets inserted
        model.appendRow([QStandardItem(word), description])
    return model


def _command_popup() -> QTreeView:
    popup = QTreeView()
    popup.setObjectName("commandCompleter")
    popup.setHeaderHidden(True)
    popup.setRootIsDecorated(False)
    popup.setUniformRowHeights(True)
    popup.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    popup.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    popup.header().setStretchLastSection(True)
    popup.setColumnWidth(0, 170)
    return popup


class Composer(QPlainTextEdit):
    submitted = Signal(str)
    followUpSubmitted = Signal(str)  # Alt+Enter
    stopRequested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("composer")
        self.setAccessibleName("Message")
        self.setAccessibleDescription(
            "Your message to the agent. Enter sends, Shift+Enter adds a line, / lists commands."
        )
        self.setPlaceholderText("Message the agent — Enter sends, Shift+Enter adds a line, / for commands")
        self.setTabChangesFocus(True)
        # Asked before a message leaves the editor; False keeps the text where it is (e.g. no model yet).
        self.gate: Callable[[str], bool] | None = None
        self.history: list[str] = []
        self._history_pos: int | None = None  # index into history while browsing it
        self._draft = ""
        self._last_key_at = -1e9  # time.monotonic() of the last key pressed here
        self._completer = QCompleter(self)
        self._completer.setModel(command_model([], self._completer))
        self._completer.setPopup(_command_popup())
        self._completer.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self._completer.setWidget(self)
        self._completer.activated.connect(self._insert_completion)
        self.textChanged.connect(self._maybe_complete)

    def sizeHint(self) -> QSize:
        line = self.fontMetrics().lineSpacing()
        return QSize(400, line * 3 + 16)

    def set_extra_commands(self, names: list[str]) -> None:
        """Add skill and prompt-template commands (e.g. ``skill:review``) to the completer (the skills the
        engine offers as commands: none when ``enableSkillCommands`` is false)."""
        self._completer.setModel(command_model(names, self._completer))

    def completion_words(self) -> list[str]:
        """Every ``/command`` the completer offers."""
        model = self._completer.model()
        return [str(model.index(row, 0).data()) for row in range(model.rowCount())]

    # ---- keys --------------------------------------------------------------------------------

    def is_typing(self, quiet_s: float = 2.0) -> bool:
        """The user is writing here: a key within ``quiet_s`` seconds, or a draft in the focused editor.
        A dialog popping up now would take the keys meant for the message."""
        recent = time.monotonic() - self._last_key_at < quiet_s
        return recent or (self.hasFocus() and bool(self.toPlainText().strip()))

    def keyPressEvent(self, event: QKeyEvent) -> None:
        self._last_key_at = time.monotonic()
        key = event.key()
        mods = event.modifiers()
        popup = self._completer.popup()
        if popup is not None and popup.isVisible():
            whole = key in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and self._typed_in_full()
            if key == Qt.Key.Key_Escape or (
                key in (Qt.Key.Key_Return, Qt.Key.Key_Enter, Qt.Key.Key_Tab) and not whole
            ):
                event.ignore()  # the completer handles it: Esc closes the list, Enter/Tab take the match
                return
            if whole:  # "/compact" typed to the end: Enter runs it rather than adding a space
                popup.hide()
        if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            if mods & Qt.KeyboardModifier.ShiftModifier:
                self.insertPlainText("\n")
                return
            if mods & Qt.KeyboardModifier.AltModifier and not mods & Qt.KeyboardModifier.ControlModifier:
                self.submit(follow_up=True)
                return
            if not mods & (Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.AltModifier):
                self.submit()
                return
        if key == Qt.Key.Key_Escape and not mods:
            self.stopRequested.emit()
            return
        if key == Qt.Key.Key_Up and not mods and self._on_first_line() and self.history_back():
            return
        if key == Qt.Key.Key_Down and not mods and self._on_last_line() and self.history_forward():
            return
        super().keyPressEvent(event)

    def submit(self, follow_up: bool = False) -> None:
        text = self.toPlainText()
        if not text.strip():
            return
        if self.gate is not None and not self.gate(text):
            return
        self.remember(text)
        self.clear()
        (self.followUpSubmitted if follow_up else self.submitted).emit(text)

    def remember(self, text: str) -> None:
        if not self.history or self.history[-1] != text:
            self.history.append(text)
            del self.history[:-MAX_HISTORY]
        self._history_pos = None
        self._draft = ""

    # ---- history -----------------------------------------------------------------------------

    def _on_first_line(self) -> bool:
        return self.textCursor().block().blockNumber() == 0

    def _on_last_line(self) -> bool:
        return self.textCursor().block().blockNumber() == self.document().blockCount() - 1

    def history_back(self) -> bool:
        if not self.history:
            return False
        if self._history_pos is None:
            self._draft = self.toPlainText()
            self._history_pos = len(self.history)
        if self._history_pos == 0:
            return True
        self._history_pos -= 1
        self._show(self.history[self._history_pos])
        return True

    def history_forward(self) -> bool:
        if self._history_pos is None:
            return False
        self._history_pos += 1
        if self._history_pos >= len(self.history):
            self._history_pos = None
            self._show(self._draft)
        else:
            self._show(self.history[self._history_pos])
        return True

    def _show(self, text: str) -> None:
        self.setPlainText(text)
        self.moveCursor(QTextCursor.MoveOperation.End)

    def set_text(self, text: str) -> None:
        """Put ``text`` in the editor for editing (e.g. a message picked in the tree)."""
        self._history_pos = None
        self._show(text)
        self.setFocus()

    def insert_text(self, text: str) -> None:
        """Add ``text`` to the draft at the cursor, on lines of its own (e.g. log lines sent to chat)."""
        self._history_pos = None
        cursor = self.textCursor()
        before = self.toPlainText()[: cursor.position()]
        if before and not before.endswith("\n"):
            text = "\n" + text
        cursor.insertText(text)
        self.setTextCursor(cursor)
        self.ensureCursorVisible()
        self.setFocus()

    # ---- completion --------------------------------------------------------------------------

    def _maybe_complete(self) -> None:
        text = self.toPlainText()
        if text.startswith("/") and " " not in text and "\n" not in text and len(text) >= 1:
            self._completer.setCompletionPrefix(text)
            if self._completer.completionCount() and self.hasFocus():
                rect = self.cursorRect()
                rect.setWidth(min(640, max(360, self.width() - rect.left())))
                popup = self._completer.popup()
                if isinstance(popup, QTreeView):
                    popup.setColumnWidth(0, 170)
                self._completer.complete(rect)
                if popup is not None:  # Enter or Tab takes the first match without moving to it
                    popup.setCurrentIndex(self._completer.completionModel().index(0, 0))
                return
        popup = self._completer.popup()
        if popup is not None:
            popup.hide()

    def _typed_in_full(self) -> bool:
        popup = self._completer.popup()
        index = popup.currentIndex() if popup is not None else None
        match = index.sibling(index.row(), 0).data() if index is not None and index.isValid() else None
        return isinstance(match, str) and not match.endswith(":") and self.toPlainText() == match

    def _insert_completion(self, completion: str) -> None:
        self._show(completion + ("" if completion.endswith(":") else " "))
