"""The chat area: conversation view, queued-message strip, composer with Send/Stop, and the footer."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from piwork.gui.chat.chat_model import ChatModel
from piwork.gui.chat.chat_view import ChatView
from piwork.gui.chat.composer import Composer
from piwork.gui.chat.footer import ChatFooter
from piwork.gui.chat.presenter import ChatPresenter
from piwork.gui.chat.slash_commands import SlashCommand, parse_slash
from piwork.gui.theme import Theme


class ChatPanel(QWidget):
    promptSubmitted = Signal(str)
    commandSubmitted = Signal(object)  # SlashCommand
    stopRequested = Signal()

    def __init__(self, theme: Theme | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("chatPanel")
        # Qt parents everywhere: a QObject left to Python's garbage collector may be destroyed on another
        # thread, where Qt cannot unregister its timers.
        self.model = ChatModel(parent=self)
        self.view = ChatView(self.model, theme, self)
        self.presenter = ChatPresenter(self.model, parent=self)
        self.composer = Composer(self)
        self.send_button = QPushButton("Send", self)
        self.send_button.setObjectName("sendButton")
        self.send_button.setDefault(False)
        self.send_button.setAutoDefault(False)
        self.queue_label = QLabel(self)
        self.queue_label.setObjectName("queueLabel")
        self.queue_label.setWordWrap(True)
        self.queue_label.hide()
        self.footer = ChatFooter(self)

        editor_row = QHBoxLayout()
        editor_row.setContentsMargins(8, 0, 8, 0)
        editor_row.addWidget(self.composer, 1)
        editor_row.addWidget(self.send_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 4)
        layout.setSpacing(4)
        layout.addWidget(self.view, 1)
        layout.addWidget(self.queue_label)
        layout.addLayout(editor_row)
        layout.addWidget(self.footer)

        self.composer.submitted.connect(self._on_submitted)
        self.composer.stopRequested.connect(self._on_escape)
        self.send_button.clicked.connect(self._on_send_clicked)
        self.presenter.busyChanged.connect(self.set_busy)
        self.presenter.queueChanged.connect(self.show_queue)
        self.presenter.tick.connect(self.view.viewport().update)
        self.busy = False

    def set_theme(self, theme: Theme) -> None:
        self.view.set_theme(theme)

    def set_busy(self, busy: bool) -> None:
        self.busy = busy
        self.send_button.setText("Stop" if busy else "Send")
        self.send_button.setToolTip("Stop the agent (Esc)" if busy else "Send (Enter)")
        self.composer.setPlaceholderText(
            "Steer the agent — Enter queues a message for after the current tool calls"
            if busy
            else "Message the agent — Enter sends, Shift+Enter adds a line, / for commands"
        )

    def show_queue(self, steering: list[str], follow_up: list[str]) -> None:
        lines = [f"↳ steering: {t}" for t in steering] + [f"↳ follow-up: {t}" for t in follow_up]
        self.queue_label.setText("\n".join(line if len(line) < 160 else line[:157] + "…" for line in lines))
        self.queue_label.setVisible(bool(lines))

    def _on_send_clicked(self) -> None:
        if self.busy and not self.composer.toPlainText().strip():
            self.stopRequested.emit()
        else:
            self.composer.submit()

    def _on_escape(self) -> None:
        if self.busy:
            self.stopRequested.emit()

    def _on_submitted(self, text: str) -> None:
        command = parse_slash(text)
        if command is not None and command.known and command.name != "skill":
            self.commandSubmitted.emit(command)
            return
        self.promptSubmitted.emit(text)

    def run_command(self, command: SlashCommand) -> None:
        self.commandSubmitted.emit(command)
