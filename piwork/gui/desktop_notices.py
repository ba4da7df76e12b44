"""Desktop notifications while the window is in the background: a reply ended, a reply failed, or piwork
waits for an answer (a trust question). Shown through the platform's notification service (the system
tray's message) when there is one, else not at all; turned off with View → Desktop Notifications.

A notice names what happened, the project and the session's name, never what the reply said nor an
error's text (which can quote a URL or a header). Clicking it brings the window forward.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QObject, QSettings, Signal
from PySide6.QtWidgets import QMainWindow, QSystemTrayIcon

if TYPE_CHECKING:
    from piwork.core.agent import AgentEvent
    from piwork.core.workflows import AgentRuntime

NOTIFY_KEY = "notify/desktop"  # window.ini; on unless turned off


@dataclass(frozen=True)
class DesktopFacts:
    """What the notifier asks of the desktop (a test may state them; the defaults ask Qt)."""

    window_active: Callable[[], bool]
    tray_available: Callable[[], bool] = QSystemTrayIcon.isSystemTrayAvailable


@dataclass(frozen=True)
class DesktopNotice:
    title: str
    text: str


def notices_enabled(settings: QSettings) -> bool:
    return bool(settings.value(NOTIFY_KEY, True, type=bool))


class ReplyNotifier(QObject):
    """A session panel (see ``piwork.gui.panels``): follows the open session's replies."""

    shown = Signal(object)  # DesktopNotice, once handed to the notification service

    def __init__(self, window: QMainWindow, settings: QSettings, facts: DesktopFacts | None = None) -> None:
        super().__init__(window)
        self.window = window
        self.settings = settings
        self.facts = facts or DesktopFacts(lambda: window.isActiveWindow() and not window.isMinimized())
        self.tray: QSystemTrayIcon | None = None
        self._runtime: AgentRuntime | None = None
        self._unsubscribe: Callable[[], None] | None = None
        self._running = False
        self._stop_reason: str | None = None
        window.installEventFilter(self)

    # ---- SessionPanel ------------------------------------------------------------------------

    def attach(self, runtime: AgentRuntime) -> None:
        self.detach()
        self._runtime = runtime
        self._unsubscribe = runtime.session.subscribe(self._on_event)

    def detach(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
        self._unsubscribe = None
        self._runtime = None
        self._running = False

    def shutdown(self) -> None:
        self.detach()
        if self.tray is not None:
            self.tray.hide()

    # ---- what is told ------------------------------------------------------------------------

    def _on_event(self, event: AgentEvent) -> None:
        if event.type == "agent_start":  # told by kind: the engine's events load after the first frame
            self._running, self._stop_reason = True, None
        elif event.type == "message_end" and event.message.get("role") == "assistant":
            reason = event.message.get("stopReason")
            self._stop_reason = reason if isinstance(reason, str) else None
        elif event.type == "agent_settled" and self._running:
            self._running = False
            if self._stop_reason == "error":
                self.notify("Reply failed", "The reply stopped with an error; the chat says what went wrong.")
            elif self._stop_reason != "aborted":  # stopped by the user, who is there
                self.notify("Reply finished", "The agent has finished replying.")

    def waiting_for_answer(self, question: str) -> None:
        """piwork waits for the user (``question`` says about what, e.g. trusting a folder)."""
        self.notify(
            "piwork is waiting for you", question, name_session=False
        )  # the question names its folder

    def _where(self) -> str:
        runtime = self._runtime
        if runtime is None:
            return ""
        project = os.path.basename(os.path.normpath(runtime.store.cwd)) or runtime.store.cwd
        name = runtime.session.tree.name
        return f"{project} — {name}" if name else project

    def notify(self, title: str, text: str, *, name_session: bool = True) -> DesktopNotice | None:
        """Hand a notice to the desktop unless the window is in front, the notices are off, or there is no
        notification service; returns what was shown."""
        if not notices_enabled(self.settings) or self.facts.window_active():
            return None
        if not self.facts.tray_available():
            return None
        where = self._where() if name_session else ""
        notice = DesktopNotice(f"{title} — {where}" if where else title, text)
        tray = self._tray()
        tray.show()
        tray.showMessage(notice.title, notice.text, QSystemTrayIcon.MessageIcon.Information, 10_000)
        self.shown.emit(notice)
        return notice

    def _tray(self) -> QSystemTrayIcon:
        if self.tray is None:
            self.tray = QSystemTrayIcon(self.window.windowIcon(), self)
            self.tray.setToolTip("piwork")
            self.tray.messageClicked.connect(self.bring_forward)
            self.tray.activated.connect(lambda _reason: self.bring_forward())
        return self.tray

    def bring_forward(self) -> None:
        window = self.window
        if window.isMinimized():
            window.showNormal()
        window.raise_()
        window.activateWindow()
        self._hide_tray()

    def _hide_tray(self) -> None:
        if self.tray is not None:  # shown only while a notice may be waiting
            self.tray.hide()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.window and event.type() == QEvent.Type.WindowActivate:
            self._hide_tray()
        return False
