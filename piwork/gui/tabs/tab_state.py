"""What a tab says about its session at a glance: running, waiting for you (a call to approve, a trust
question), failed, done while in the background (unread), or nothing to say. Followed from the session's
events and from what its chat asks the user; the tab strip shows it."""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal

if TYPE_CHECKING:
    from piwork.core.agent import AgentEvent


class TabState(enum.Enum):
    IDLE = ""
    RUNNING = "running"
    WAITING = "waiting for you"
    FAILED = "failed"
    DONE = "done"  # finished while the tab was in the background, not looked at yet

    @property
    def short(self) -> str:
        """The word on the tab itself (the tooltip says it in full)."""
        return "waiting" if self is TabState.WAITING else self.value


class TabStatus(QObject):
    changed = Signal(object)  # TabState

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.front = True
        self.running = False
        self.approvals = 0  # calls waiting for an answer
        self.trust_question = False
        self.failed = False
        self.unread = False
        self._stop_reason: str | None = None
        self._shown = TabState.IDLE

    @property
    def state(self) -> TabState:
        if self.approvals or self.trust_question:
            return TabState.WAITING
        if self.running:
            return TabState.RUNNING
        if self.failed:
            return TabState.FAILED
        if self.unread:
            return TabState.DONE
        return TabState.IDLE

    def handle(self, event: AgentEvent) -> None:
        if event.type == "agent_start":  # told by kind: the engine's events load after the first frame
            self.running, self.failed, self.unread, self._stop_reason = True, False, False, None
        elif event.type == "message_end" and event.message.get("role") == "assistant":
            reason = event.message.get("stopReason")
            self._stop_reason = reason if isinstance(reason, str) else None
        elif event.type == "agent_settled" and self.running:
            self.running = False
            self.failed = self._stop_reason == "error"
            self.unread = not self.front and self._stop_reason != "aborted"
        else:
            return
        self._tell()

    def set_front(self, front: bool) -> None:
        self.front = front
        if front:
            self.unread = False  # seen
        self._tell()

    def set_approvals(self, waiting: int) -> None:
        self.approvals = waiting
        self._tell()

    def set_trust_question(self, asking: bool) -> None:
        self.trust_question = asking
        self._tell()

    def reset(self) -> None:
        """Another session opened in the tab: nothing of the last one's state carries over."""
        self.running = self.failed = self.unread = False
        self._tell()

    def _tell(self) -> None:
        state = self.state
        if state is not self._shown:
            self._shown = state
            self.changed.emit(state)
