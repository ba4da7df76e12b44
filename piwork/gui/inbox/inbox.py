"""The window's inbox: the feeds of every session it holds, newest item first, and what acting on an item
does. Enter on an approval brings its session to front and focuses the card; Approve and Deny answer it
from the inbox. A trust question is opened; a failed or finished run shows the session's last message.

Which session is in front comes from the window (``set_front``: the tab in front); a session counts as
seen when it is in front of an active window, so its failed and finished runs go when the user comes back.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import shiboken6
from PySide6.QtCore import QEvent, QObject, Signal
from PySide6.QtWidgets import QWidget

from piwork.gui.approval_flow import WindowApprovals
from piwork.gui.chat.tool_views import CardAction
from piwork.gui.inbox.feed import InboxFeed
from piwork.gui.inbox.items import InboxItem, InboxKind
from piwork.gui.session_controller import SessionController


@dataclass(frozen=True)
class Waiting:
    """One item and the session it waits in."""

    feed: InboxFeed
    item: InboxItem


def _window_active(window: QWidget) -> bool:
    return shiboken6.isValid(window) and window.isActiveWindow() and not window.isMinimized()


class Inbox(QObject):
    changed = Signal()
    countChanged = Signal(int)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._feeds: list[InboxFeed] = []
        self._front: dict[int, SessionController] = {}  # id(window) → its session in front
        self._windows: set[int] = set()
        self._count = 0
        # Brings a session's tab to front (the tabs set it); with one session per window it is in front.
        self.bring_to_front: Callable[[SessionController], None] = lambda _controller: None

    # ---- sessions ----------------------------------------------------------------------------

    def attach(self, controller: SessionController, approvals: WindowApprovals | None = None) -> InboxFeed:
        """Follow ``controller``'s session (a window opened it, or a tab was added)."""
        existing = self.feed_of(controller)
        if existing is not None:
            return existing
        feed = InboxFeed(controller, approvals)
        feed.in_front = lambda: self.in_front(controller)
        feed.changed.connect(self._on_changed)
        # a controller deleted without a word (its window closed): its feed goes with it
        controller.destroyed.connect(lambda _obj=None, gone=feed: self._forget(gone))
        self._feeds.append(feed)
        self._watch(controller.window)
        self._front.setdefault(id(controller.window), controller)
        self._on_changed()
        return feed

    def detach(self, controller: SessionController) -> None:
        """Stop following ``controller`` (its tab closed): what it waited on leaves the inbox."""
        feed = self.feed_of(controller)
        if feed is None:
            return
        self._forget(feed)
        feed.close()

    def _forget(self, feed: InboxFeed) -> None:
        if feed not in self._feeds or not shiboken6.isValid(self):
            return
        self._feeds.remove(feed)
        controller = feed.controller
        for window, front in list(self._front.items()):
            if front is controller:
                del self._front[window]
        self._on_changed()

    def _watch(self, window: QWidget) -> None:
        """Hear when ``window`` becomes active (a session moved to a new window is watched there too)."""
        key = id(window)
        if key not in self._windows:
            self._windows.add(key)
            window.installEventFilter(self)
            window.destroyed.connect(lambda _obj=None: self._window_gone(key))

    def _window_gone(self, key: int) -> None:
        if not shiboken6.isValid(self):
            return
        self._windows.discard(key)
        self._front.pop(key, None)

    def feed_of(self, controller: SessionController) -> InboxFeed | None:
        return next((feed for feed in self._feeds if feed.controller is controller), None)

    def set_front(self, controller: SessionController) -> None:
        """``controller``'s session is now the one its window shows."""
        self._watch(controller.window)
        self._front[id(controller.window)] = controller
        if _window_active(controller.window):
            self._seen(controller)

    def in_front(self, controller: SessionController) -> bool:
        window = controller.window
        return self._front.get(id(window)) is controller and _window_active(window)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.WindowActivate:
            front = self._front.get(id(watched))
            if front is not None:
                self._seen(front)
        return False

    def _seen(self, controller: SessionController) -> None:
        feed = self.feed_of(controller)
        if feed is not None:
            feed.looked_at()

    # ---- items -------------------------------------------------------------------------------

    def waiting(self) -> list[Waiting]:
        """Everything waiting, newest first."""
        found = [Waiting(feed, item) for feed in self._feeds for item in feed.items]
        return sorted(found, key=lambda w: w.item.since, reverse=True)

    def count(self) -> int:
        return self._count

    def _on_changed(self) -> None:
        self.changed.emit()
        count = sum(len(feed.items) for feed in self._feeds)
        if count != self._count:
            self._count = count
            self.countChanged.emit(count)

    # ---- acting ------------------------------------------------------------------------------

    def act(self, waiting: Waiting) -> None:
        """Enter on an item: jump to it (and open a trust question)."""
        controller = waiting.feed.controller
        self._bring(controller)
        kind = waiting.item.kind
        chat = controller.chat
        if kind is InboxKind.APPROVAL:
            key = next(
                (
                    row.key
                    for row in reversed(chat.model.all_rows())
                    if row.tool is not None and row.tool.call_id == waiting.item.call_id
                ),
                None,
            )
            if key is not None:
                chat.view.reveal_row_key(key)
            chat.view.setFocus()
        elif kind is InboxKind.TRUST:
            prompter = waiting.feed.prompter
            if not chat.trust_banner.isHidden():  # held back while the user typed (its tab may be behind)
                chat.trust_banner.reviewRequested.emit()
            elif prompter.dialog is not None:
                prompter.dialog.raise_()
                prompter.dialog.activateWindow()
        else:
            rows = chat.model.all_rows()
            if rows:
                chat.view.reveal_row_key(rows[-1].key)
            chat.view.setFocus()
            waiting.feed.looked_at()

    def approve(self, waiting: Waiting) -> None:
        """Run the waiting call, from the inbox (its session stays where it is)."""
        if waiting.item.kind is InboxKind.APPROVAL:
            waiting.feed.approvals.act(waiting.item.call_id, CardAction.APPROVE.value)

    def deny(self, waiting: Waiting) -> None:
        """Refuse the waiting call; the reason is asked as on the card."""
        if waiting.item.kind is InboxKind.APPROVAL:
            waiting.feed.approvals.act(waiting.item.call_id, CardAction.DENY.value)

    def dismiss(self, waiting: Waiting) -> None:
        waiting.feed.dismiss(waiting.item)

    def _bring(self, controller: SessionController) -> None:
        self.bring_to_front(controller)
        self._front[id(controller.window)] = controller
        window = controller.window
        if window.isMinimized():
            window.showNormal()
        window.raise_()
        window.activateWindow()
