"""The chat area: conversation view, queued-message strip, composer with Send/Stop, and the footer."""

from __future__ import annotations

from itertools import pairwise
from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QObject, Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QPushButton, QVBoxLayout, QWidget

from piwork.gui.chat.chat_model import ChatModel
from piwork.gui.chat.chat_view import ChatView
from piwork.gui.chat.composer import Composer
from piwork.gui.chat.empty_state import CHECKING, READY, EmptyState
from piwork.gui.chat.footer import ChatFooter
from piwork.gui.chat.owner_banner import OwnerBanner
from piwork.gui.chat.presenter import ChatPresenter
from piwork.gui.chat.trust_banner import TrustBanner
from piwork.gui.commands import SlashCommand, parse_slash
from piwork.gui.inert_text import plain_label, plain_tip

if TYPE_CHECKING:
    from piwork.gui.theme import Theme

IDLE_PLACEHOLDER = "Message the agent — Enter sends, Shift+Enter adds a line, / for commands"
STREAMING_PLACEHOLDER = (
    "Steer or queue a follow-up — Enter steers after the current tool calls, Alt+Enter queues for when "
    "the agent is done"
)
NO_MODEL_PLACEHOLDER = (
    "No model to answer — add a local server or a provider key in Settings → Providers (Ctrl+,), "
    "then pick a model"
)
CHECKING_PLACEHOLDER = "Checking for API keys… (the system keyring has not answered yet)"
READ_ONLY_PLACEHOLDER = "This session is read-only: {reason}"


def user_command(text: str) -> tuple[str, bool] | None:
    """``!cmd`` -> (cmd, False); ``!!cmd`` -> (cmd, True): its output is kept from the model. A lone ``!``
    or ``!!`` is an ordinary message."""
    stripped = text.strip()
    if not stripped.startswith("!"):
        return None
    excluded = stripped.startswith("!!")
    command = stripped[2 if excluded else 1 :].strip()
    return (command, excluded) if command else None


class ChatPanel(QWidget):
    promptSubmitted = Signal(str)
    followUpSubmitted = Signal(str)  # Alt+Enter: deliver when the agent would otherwise stop
    commandSubmitted = Signal(object)  # SlashCommand
    userCommandSubmitted = Signal(
        str, bool
    )  # ``!cmd`` / ``!!cmd``: the command, and whether it is kept from the model
    stopRequested = Signal()
    addServerRequested = Signal()  # the empty state's buttons: open Settings → Providers
    addKeyRequested = Signal()

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
        self.send_button.setAccessibleDescription(
            "Send the message (Enter); while the agent works it stops it (Esc)"
        )
        self.send_button.setObjectName("sendButton")
        self.send_button.setDefault(False)
        self.send_button.setAutoDefault(False)
        # Queued messages and the waiting indicator float over the bottom of the conversation, so showing
        # them never moves the composer or its buttons.
        self.queue_label = plain_label(parent=self.view)
        self.queue_label.setObjectName("queueLabel")
        self.queue_label.setAccessibleName("Queued messages")
        self.queue_label.setAutoFillBackground(True)
        self.queue_label.setFrameShape(QFrame.Shape.StyledPanel)
        self.queue_label.setContentsMargins(8, 3, 8, 3)
        self.queue_label.hide()
        self.waiting_label = plain_label(parent=self.view)
        self.waiting_label.setObjectName("waitingLabel")
        self.waiting_label.setAccessibleName("Waiting for the model")
        self.waiting_label.setAutoFillBackground(True)
        self.waiting_label.setFrameShape(QFrame.Shape.StyledPanel)
        self.waiting_label.setContentsMargins(8, 3, 8, 3)
        self.waiting_label.hide()
        self.view.installEventFilter(self)
        self.footer = ChatFooter(self)
        self.empty_state = EmptyState(self)
        self.empty_state.hide()
        self.trust_banner = TrustBanner(self)  # a trust question waiting while the user types
        self.owner_banner = OwnerBanner(self)  # another program writes the open session file
        self.model_state = READY
        self.user_command_running = False

        editor_row = QHBoxLayout()
        editor_row.setContentsMargins(8, 0, 8, 0)
        editor_row.addWidget(self.composer, 1)
        editor_row.addWidget(self.send_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 4)
        layout.setSpacing(4)
        layout.addWidget(self.empty_state, 1)
        layout.addWidget(self.view, 1)
        banner_row = QHBoxLayout()
        banner_row.setContentsMargins(8, 0, 8, 0)
        banner_row.addWidget(self.trust_banner)
        layout.addLayout(banner_row)
        owner_row = QHBoxLayout()
        owner_row.setContentsMargins(8, 0, 8, 0)
        owner_row.addWidget(self.owner_banner)
        layout.addLayout(owner_row)
        layout.addLayout(editor_row)
        layout.addWidget(self.footer)

        self.composer.submitted.connect(self._on_submitted)
        self.composer.followUpSubmitted.connect(self._on_follow_up)
        self.composer.stopRequested.connect(self._on_escape)
        self.send_button.clicked.connect(self._on_send_clicked)
        self.composer.textChanged.connect(self._update_send_button)
        self.presenter.busyChanged.connect(self.set_busy)
        self.presenter.userCommandRunning.connect(self._set_user_command_running)
        self.presenter.queueChanged.connect(self.show_queue)
        self.presenter.waitingChanged.connect(self.show_waiting)
        self.presenter.tick.connect(self.view.viewport().update)
        self.empty_state.addServerRequested.connect(self.addServerRequested)
        self.empty_state.addKeyRequested.connect(self.addKeyRequested)
        self.model.modelReset.connect(self._update_empty_state)
        self.model.rowsInserted.connect(self._update_empty_state)
        self.model.rowsRemoved.connect(self._update_empty_state)
        self.composer.gate = self._can_send
        # Keyboard order: conversation, message, Send, then the model, thinking level and context meter under it.
        chain = (
            self.view,
            self.composer,
            self.send_button,
            self.footer.model_picker,
            self.footer.thinking_picker,
            self.footer.meter,
        )
        for first, second in pairwise(chain):
            QWidget.setTabOrder(first, second)
        self.busy = False
        self.read_only_reason: str | None = None
        self.has_model = True
        self._update_placeholder()

    # ---- no model yet ------------------------------------------------------------------------

    def set_model_state(self, state: str) -> None:
        """``ready``, ``choose``, ``missing`` or ``checking`` (see empty_state): what the chat says while
        nothing can answer."""
        self.model_state = state
        self.empty_state.set_state(state)
        self._update_empty_state()
        self._update_placeholder()

    def _update_empty_state(self, *_args: object) -> None:
        waiting = self.model_state != READY
        # The button that opened Settings goes with the empty state: give the keyboard to the composer
        # instead of whatever control comes next (this also holds while the Settings dialog is in front).
        focused = self.window().focusWidget()
        hand_over = not waiting and focused is not None and self.empty_state.isAncestorOf(focused)
        self.empty_state.setVisible(waiting)
        if hand_over:
            self.composer.setFocus()
        # With nothing in the conversation the empty state takes the whole area; over a conversation it is a
        # banner at the top and the conversation keeps the rest.
        has_rows = self.model.rowCount() > 0
        self.view.setVisible(not waiting or has_rows)
        layout = self.layout()
        if isinstance(layout, QVBoxLayout):
            layout.setStretchFactor(self.empty_state, 0 if has_rows else 1)

    def _can_send(self, text: str) -> bool:
        command = parse_slash(text)
        if self.model_state == READY or (command is not None and command.runs_in_window):
            return True
        if user_command(text) is not None:  # the user's own command needs no model
            return True
        self.empty_state.note_kept_message()
        self.empty_state.show()
        return False

    def set_theme(self, theme: Theme) -> None:
        self.view.set_theme(theme)

    def set_busy(self, busy: bool) -> None:
        self.busy = busy
        self._update_send_button()
        self._update_placeholder()

    def _update_send_button(self) -> None:
        """The button does what it says: Stop while the agent works and the editor is empty, else Send
        (which, while the agent works, delivers the text after the current tool calls)."""
        stops = self.busy and not self.composer.toPlainText().strip()
        self.send_button.setText("Stop" if stops else "Send")
        if stops:
            tip = "Stop the agent (Esc)"
        elif self.busy:
            tip = "Send after the current tool calls (Enter); Esc stops the agent"
        else:
            tip = "Send (Enter)"
        self.send_button.setToolTip(tip)

    def set_session_state(self, read_only_reason: str | None, has_model: bool) -> None:
        """What the open session allows: the composer's placeholder says it before anyone types."""
        self.read_only_reason = read_only_reason
        self.has_model = has_model
        self._update_placeholder()

    def _update_placeholder(self) -> None:
        if self.read_only_reason:
            text = READ_ONLY_PLACEHOLDER.format(reason=self.read_only_reason)
        elif self.busy:
            text = STREAMING_PLACEHOLDER
        elif self.model_state == CHECKING:
            text = CHECKING_PLACEHOLDER
        elif not self.has_model or self.model_state != READY:
            text = NO_MODEL_PLACEHOLDER
        else:
            text = IDLE_PLACEHOLDER
        if text != self.composer.placeholderText():
            self.composer.setPlaceholderText(text)
            self.composer.viewport().update()  # Qt repaints a placeholder only when it appears or goes
        self.composer.setToolTip(plain_tip(text))  # a long placeholder may be cut off in a narrow window

    def show_waiting(self, text: str) -> None:
        """The model has been silent for a while: say so, and for how long (the presenter updates it)."""
        self.waiting_label.setText(("⏳ " + text) if text else "")
        self.waiting_label.setVisible(bool(text))
        self._place_overlays()

    def _place_overlays(self) -> None:
        """Queued messages at the bottom of the conversation, the waiting indicator just above them."""
        margin = 8
        bottom = self.view.height() - margin
        for label in (self.queue_label, self.waiting_label):
            if not label.isVisible():
                continue
            label.setMaximumWidth(max(100, self.view.width() - 2 * margin))
            label.adjustSize()
            label.move(margin, max(0, bottom - label.height()))
            label.raise_()
            bottom -= label.height() + 4

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.view and event.type() == QEvent.Type.Resize:
            self._place_overlays()
        return super().eventFilter(watched, event)

    def show_queue(self, steering: list[str], follow_up: list[str]) -> None:
        lines = [f"↳ after the current step: {t}" for t in steering]
        lines += [f"↳ when the agent is done: {t}" for t in follow_up]
        self.queue_label.setText("\n".join(line if len(line) < 160 else line[:157] + "…" for line in lines))
        self.queue_label.setVisible(bool(lines))
        self._place_overlays()

    def _on_send_clicked(self) -> None:
        if self.busy and not self.composer.toPlainText().strip():
            self.stopRequested.emit()
        else:
            self.composer.submit()

    def _on_escape(self) -> None:
        if self.busy or self.user_command_running:
            self.stopRequested.emit()

    def _set_user_command_running(self, running: bool) -> None:
        self.user_command_running = running

    def _on_submitted(self, text: str) -> None:
        self.view.scroll_to_latest()  # what was sent, and the answer, come into view
        shell = user_command(text)
        if shell is not None:
            self.userCommandSubmitted.emit(*shell)
            return
        command = parse_slash(text)
        if command is not None and command.runs_in_window:
            self.commandSubmitted.emit(command)
            return
        self.promptSubmitted.emit(text)

    def _on_follow_up(self, text: str) -> None:
        self.view.scroll_to_latest()
        shell = user_command(text)
        if shell is not None:
            self.userCommandSubmitted.emit(*shell)
            return
        command = parse_slash(text)
        if command is not None and command.runs_in_window:
            self.commandSubmitted.emit(command)
            return
        self.followUpSubmitted.emit(text)

    def run_command(self, command: SlashCommand) -> None:
        self.commandSubmitted.emit(command)
