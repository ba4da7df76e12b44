"""The window's side of approvals: a call waiting for the user is its chat card, answered there.

A ``SessionPanel``: on ``attach`` it becomes the session's "ask the user" (``ApprovalGate.ask``) and the
footer's mode button follows the project's mode. Asking marks the call's card (its view shows the command
or diff and Approve, Deny…, Always allow…) and waits; the card's badges answer. Deny asks for an optional
reason, Always allow for the rule (prefilled, editable); cancelling either leaves the call waiting. Stop
cancels the wait (the engine gives the call the aborted result) and the card shows as it was. ``asked`` and
``settled`` tell others (the inbox) when a call starts and stops waiting; ``act`` answers it as a badge would.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

import shiboken6
from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QWidget

from piwork.gui.background import BackgroundTasks
from piwork.gui.chat.tool_views import CardAction
from piwork.gui.dialogs import ask_text

if TYPE_CHECKING:
    from piwork.core.approvals import (
        ApprovalAnswer,
        ApprovalGate,
        ApprovalMode,
        ApprovalRequest,
        ProjectRules,
    )
    from piwork.core.workflows import AgentRuntime
    from piwork.gui.chat.approval_mode import ApprovalModeButton
    from piwork.gui.chat.presenter import ChatPresenter
    from piwork.gui.chat.tool_card import ToolCard

log = logging.getLogger(__name__)

NO_CARD_TEXT = "The call could not be shown for approval."


def rule_prompt(request: ApprovalRequest) -> tuple[str, str]:
    """The Always allow question's title and label for ``request``."""
    if request.kind == "command":
        return (
            "Always allow commands",
            "In this project, run without asking every command that starts with these words\n"
            "(a command that chains or redirects with ; & | > < is still asked about):",
        )
    return ("Always allow changes", "In this project, edit and write without asking this file or folder:")


class WindowApprovals(QObject):
    asked = Signal(object)  # ApprovalRequest: a call waits for the user
    settled = Signal(str)  # the call id of a call that no longer waits (answered, stopped, let go)

    def __init__(self, presenter: ChatPresenter, button: ApprovalModeButton, dialogs_parent: QWidget) -> None:
        super().__init__(dialogs_parent)
        self._presenter = presenter
        self._button = button
        self._parent = dialogs_parent
        self._gate: ApprovalGate | None = None
        self._waiting: dict[str, tuple[ApprovalRequest, asyncio.Future[ApprovalAnswer]]] = {}
        self._tasks = BackgroundTasks()
        button.modeChosen.connect(self._on_mode_chosen)

    # ---- SessionPanel ------------------------------------------------------------------------

    def attach(self, runtime: AgentRuntime) -> None:
        self.detach()
        gate = runtime.approvals
        if gate is None:
            return
        self._gate = gate
        gate.ask = self.ask
        gate.listeners.append(self._on_rules)
        self._on_rules(gate.rules)
        self._button.setEnabled(True)

    def detach(self) -> None:
        gate, self._gate = self._gate, None
        if gate is not None:
            gate.ask = None
            if self._on_rules in gate.listeners:
                gate.listeners.remove(self._on_rules)
        for _request, future in list(self._waiting.values()):
            if not future.done():
                future.cancel()
        if shiboken6.isValid(self._button):  # at quit the window (and its footer) may be gone first
            self._button.setEnabled(False)

    def shutdown(self) -> None:
        self.detach()
        self._tasks.cancel_all()

    # ---- asking ------------------------------------------------------------------------------

    @property
    def waiting(self) -> list[ApprovalRequest]:
        return [request for request, _future in self._waiting.values()]

    async def ask(self, request: ApprovalRequest) -> ApprovalAnswer:
        from piwork.core.approvals import ApprovalAnswer  # the engine's, loaded with the session

        if not self._presenter.show_approval(request.call_id, request):
            return ApprovalAnswer("deny", NO_CARD_TEXT)
        future: asyncio.Future[ApprovalAnswer] = asyncio.get_running_loop().create_future()
        self._waiting[request.call_id] = (request, future)
        self.asked.emit(request)
        try:
            return await future
        finally:
            self._waiting.pop(request.call_id, None)
            if shiboken6.isValid(self):
                self.settled.emit(request.call_id)
            self._presenter.show_approval(request.call_id, None)

    def answer(self, call_id: str, answer: ApprovalAnswer) -> bool:
        """Answer the waiting call ``call_id``; False when it no longer waits."""
        waiting = self._waiting.get(call_id)
        if waiting is None or waiting[1].done():
            return False
        waiting[1].set_result(answer)
        return True

    def on_card_action(self, card: ToolCard, action: str) -> None:
        """A badge or menu entry of a waiting card was chosen."""
        self.act(card.call_id, action)

    def act(self, call_id: str, action: str) -> None:
        """Answer the waiting call ``call_id`` as its card's badge ``action`` (a ``CardAction`` value) does:
        Deny and Always allow ask their question first."""
        waiting = self._waiting.get(call_id)
        if waiting is None:
            return
        from piwork.core.approvals import ApprovalAnswer

        request = waiting[0]
        if action == CardAction.APPROVE.value:
            self.answer(call_id, ApprovalAnswer("approve"))
        elif action == CardAction.DENY.value:
            self._tasks.spawn(self._deny(request))
        elif action == CardAction.ALWAYS_ALLOW.value:
            self._tasks.spawn(self._always(request))

    async def _deny(self, request: ApprovalRequest) -> None:
        from piwork.core.approvals import ApprovalAnswer

        reason = await ask_text(
            self._parent,
            f"Deny this {request.tool} call",
            "Why not? The model reads this and goes on (optional):",
        )
        if reason is not None:
            self.answer(request.call_id, ApprovalAnswer("deny", reason.strip()))

    async def _always(self, request: ApprovalRequest) -> None:
        from piwork.core.approvals import ApprovalAnswer

        title, label = rule_prompt(request)
        rule = await ask_text(self._parent, title, label, request.suggestion)
        if rule is not None and rule.strip():
            self.answer(request.call_id, ApprovalAnswer("always", rule=rule.strip()))

    # ---- the mode ----------------------------------------------------------------------------

    def _on_rules(self, rules: ProjectRules) -> None:
        self._button.show_mode(rules.mode)

    def _on_mode_chosen(self, mode: str) -> None:
        gate = self._gate
        if gate is None:
            return
        chosen: ApprovalMode = "ask" if mode == "ask" else "read-only" if mode == "read-only" else "run"
        self._tasks.spawn(self._save_mode(gate, chosen))

    async def _save_mode(self, gate: ApprovalGate, mode: ApprovalMode) -> None:
        from piwork.core.fs import LockBusyError

        try:
            await gate.set_mode(mode)  # in a worker
        except (OSError, LockBusyError) as err:
            log.error("The approval mode could not be saved: %s", err)
            self._button.show_mode(gate.mode)
