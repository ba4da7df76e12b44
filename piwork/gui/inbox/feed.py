"""One session's part of the inbox: what its controller waits on the user for, as ``InboxItem``s.

An approval waits from the gate's question to its answer (given on the card, in the inbox, or ended by
Stop); a trust question from the moment it is asked (held back behind the chat's bar or shown) to the
answer. A failed reply waits until the session replies again or is looked at; a run that finished while
its session was not in front waits until it is looked at. Opening another session in the controller drops
what the previous one left (failed, finished): what was looked at there is gone from the window.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable

import shiboken6
from PySide6.QtCore import QObject, Signal

from piwork.core.agent import AgentEvent, AgentSettled, AgentStart, MessageEnd
from piwork.core.approvals import ApprovalRequest
from piwork.core.workflows import AgentRuntime
from piwork.gui.approval_flow import WindowApprovals
from piwork.gui.inbox.items import InboxItem, InboxKind, approval_line, failure_line
from piwork.gui.session_controller import SessionController
from piwork.gui.trust_dialog import TrustPrompter

APPROVAL_KEY = "approval:"  # + the call id
TRUST_KEY = "trust"
FAILED_KEY = "failed"
FINISHED_KEY = "finished"
PROMPT_CHARS = 80  # of the prompt a finished run names


def _first_line(content: object) -> str:
    if isinstance(content, str):
        text = content
    elif isinstance(content, list):
        text = " ".join(
            str(part.get("text", ""))
            for part in content
            if isinstance(part, dict) and part.get("type") == "text"
        )
    else:
        text = ""
    line = " ".join(text.split())
    return line if len(line) <= PROMPT_CHARS else line[: PROMPT_CHARS - 1] + "…"


def approvals_of(controller: SessionController) -> WindowApprovals:
    """The calls waiting in ``controller``'s chat: its tab's own."""
    return controller.tab.approvals


def label_of(controller: SessionController) -> str:
    """What the inbox names a session by: its tab's title where the window shows tabs (two or more: the tab
    bar names them), else its name and project."""
    title = controller.tab.title
    if title and len(controller.window.strip.tabs) > 1:
        return title
    runtime = controller.runtime
    name = runtime.session.tree.name if runtime is not None else None
    project = os.path.basename(os.path.normpath(controller.cwd)) or controller.cwd
    return f"{name} — {project}" if name else project


class InboxFeed(QObject):
    changed = Signal()  # an item came or went

    def __init__(
        self,
        controller: SessionController,
        approvals: WindowApprovals | None = None,
        prompter: TrustPrompter | None = None,
        *,
        clock: Callable[[], float] = time.time,
    ) -> None:
        super().__init__(controller)
        self.controller = controller
        self.approvals = approvals if approvals is not None else approvals_of(controller)
        self.prompter = prompter if prompter is not None else controller.trust.prompter
        self.clock = clock
        # Whether the session is in front of the user (the inbox says; until attached: it is).
        self.in_front: Callable[[], bool] = lambda: True
        # The name the inbox lists it under (a tab's label when there are tabs).
        self.label_for: Callable[[], str] | None = None
        self._items: dict[str, InboxItem] = {}
        self._unsubscribe: Callable[[], None] | None = None
        self._running = False
        self._stop_reason: str | None = None
        self._error_text = ""
        self._prompt = ""
        self._stopped = False  # the user pressed Stop in this session's chat during the run
        self.approvals.asked.connect(self._on_asked)
        self.approvals.settled.connect(self._on_settled)
        self.prompter.pending_changed.append(self._on_trust)
        controller.sessionOpened.connect(self._follow)
        controller.chat.stopRequested.connect(self._on_stop)
        for request in self.approvals.waiting:
            self._on_asked(request)
        if self.prompter.pending is not None:
            self._on_trust(self.prompter.pending)
        if controller.runtime is not None:
            self._follow(controller.runtime)

    # ---- what waits --------------------------------------------------------------------------

    @property
    def items(self) -> list[InboxItem]:
        return list(self._items.values())

    def label(self) -> str:
        return self.label_for() if self.label_for is not None else label_of(self.controller)

    def looked_at(self) -> None:
        """The user saw the session: its failed and finished runs no longer wait."""
        self._drop(FAILED_KEY, FINISHED_KEY)

    def dismiss(self, item: InboxItem) -> None:
        """Put a failed or finished run away (an approval or a trust question waits for its answer)."""
        if item.kind in (InboxKind.FAILED, InboxKind.FINISHED):
            self._drop(item.key)

    def close(self) -> None:
        """Stop following the controller (its tab closed; its window may be gone already)."""
        self._unfollow()
        if shiboken6.isValid(self.approvals):
            self.approvals.asked.disconnect(self._on_asked)
            self.approvals.settled.disconnect(self._on_settled)
        if self._on_trust in self.prompter.pending_changed:
            self.prompter.pending_changed.remove(self._on_trust)
        if shiboken6.isValid(self.controller):
            self.controller.sessionOpened.disconnect(self._follow)
        if shiboken6.isValid(self.controller.chat):
            self.controller.chat.stopRequested.disconnect(self._on_stop)
        if self._items and shiboken6.isValid(self):
            self._items.clear()
            self.changed.emit()

    def _add(self, item: InboxItem) -> None:
        self._items[item.key] = item
        self.changed.emit()

    def _drop(self, *keys: str) -> None:
        dropped = [self._items.pop(key) for key in keys if key in self._items]
        if dropped:
            self.changed.emit()

    # ---- sources -----------------------------------------------------------------------------

    def _on_asked(self, request: ApprovalRequest) -> None:
        self._add(
            InboxItem(
                InboxKind.APPROVAL,
                APPROVAL_KEY + request.call_id,
                approval_line(request),
                self.clock(),
                request.call_id,
            )
        )

    def _on_settled(self, call_id: str) -> None:
        self._drop(APPROVAL_KEY + call_id)

    def _on_trust(self, question: str | None) -> None:
        if question is None:
            self._drop(TRUST_KEY)
        else:
            self._add(InboxItem(InboxKind.TRUST, TRUST_KEY, question, self.clock()))

    def _follow(self, runtime: AgentRuntime) -> None:
        self._unfollow()
        self.looked_at()  # what the previous session left is no longer in the window
        self._unsubscribe = runtime.session.subscribe(self._on_event)

    def _unfollow(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
        self._unsubscribe = None
        self._running = False

    def _on_stop(self) -> None:
        self._stopped = self._running

    def _on_event(self, event: AgentEvent) -> None:
        if isinstance(event, AgentStart):
            self._running, self._stop_reason, self._error_text, self._stopped = True, None, "", False
            self._drop(FAILED_KEY, FINISHED_KEY)  # it replies again
        elif isinstance(event, MessageEnd):
            message = event.message
            if message.get("role") == "user":
                self._prompt = _first_line(message.get("content"))
            elif message.get("role") == "assistant":
                reason = message.get("stopReason")
                self._stop_reason = reason if isinstance(reason, str) else None
                self._error_text = str(message.get("errorMessage") or "")
        elif isinstance(event, AgentSettled) and self._running:
            self._running = False
            if self._stop_reason == "error":
                self._add(
                    InboxItem(InboxKind.FAILED, FAILED_KEY, failure_line(self._error_text), self.clock())
                )
            elif self._stop_reason != "aborted" and not self._stopped and not self.in_front():
                # a run the user stopped (even while a call waited for approval) was seen ending
                what = f"Replied to “{self._prompt}”" if self._prompt else "The agent finished replying"
                self._add(InboxItem(InboxKind.FINISHED, FINISHED_KEY, what, self.clock()))
