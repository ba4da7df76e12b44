"""The chat follows the branch the session is on: shown at once on opening (its rows were built ahead), and
after a move in the session tree rebuilt in a worker (the transcript with context edits marked reads the
entries' bodies), the latest move winning; the title, the system prompt and the status follow it. A long
branch shows the rows of its last messages first; the earlier ones are built in a worker after, and go
behind the chat's "show earlier" row."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, Protocol

from piwork.core.agent import AgentSession
from piwork.core.collector import paused_gc
from piwork.core.errors import PiworkError
from piwork.gui.background import LatestWins
from piwork.gui.chat.chat_model import prepended_positions
from piwork.gui.chat.chat_panel import ChatPanel
from piwork.gui.chat.conversation import (
    FIRST_TAIL,
    Conversation,
    Stopped,
    prepare_earlier,
    prepare_session_conversation,
)
from piwork.gui.main_window import MainWindow
from piwork.gui.notifications import NotificationCenter, describe_exception
from piwork.gui.tool_set import ToolSet


class BranchHost(Protocol):
    cwd: str
    chat: ChatPanel  # the tab's chat

    @property
    def session(self) -> AgentSession | None: ...

    def refresh_status(self) -> None: ...

    def show_title(self, name: str | None) -> None: ...


class BranchView:
    def __init__(
        self, host: BranchHost, window: MainWindow, tool_set: ToolSet, notifications: NotificationCenter
    ) -> None:
        self.host = host
        self.window = window
        self.tool_set = tool_set
        self.notifications = notifications
        self._rows = LatestWins()
        self._earlier = LatestWins()  # the rows of a long branch's earlier messages, after its last ones
        self._waiting: list[asyncio.Future[None]] = []  # callers of ``shown`` until the latest build shows
        self._building = False
        # the tree's ``navigated`` and ``status_changed`` reach ``show`` and ``show_tree_status`` while the
        # tab is in front (linked by the controller)
        host.chat.presenter.treeNavigated.connect(self.show)

    def show(self, prepared: Conversation | None = None) -> None:
        """Show the session's branch: at once when ``prepared`` holds its rows, else built in a worker."""
        session = self.host.session
        if session is None:
            return
        if prepared is not None and prepared.current_for(session.messages):
            self._show(session, prepared)
            return
        self._building = True
        self._rows.start(
            lambda _request: prepare_session_conversation(session, FIRST_TAIL),
            lambda built: self._show(session, built),
            lambda error: self._failed(session, error),
            failures=(OSError, PiworkError),
        )

    def cancel(self) -> None:
        """The session is let go: rows still being built for it are dropped."""
        self._rows.cancel()
        self._earlier.cancel()
        self._settle()

    async def shown(self) -> None:
        """Return once the chat shows the branch the session is on (at once when no build is running).
        What is sent next then lands below it instead of being replaced by rows built before it."""
        if not self._building:
            return
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiting.append(waiter)
        await waiter

    def _settle(self) -> None:
        self._building = False
        waiting, self._waiting = self._waiting, []
        for waiter in waiting:
            if not waiter.done():
                waiter.set_result(None)

    def _show(self, session: AgentSession, prepared: Conversation | None) -> None:
        self._settle()
        if session is not self.host.session:  # another session opened meanwhile
            return
        presenter = self.host.chat.presenter
        presenter.show_messages(session.messages, prepared)  # rebuilt if it moved on since
        if prepared is not None and prepared.earlier and prepared.current_for(session.messages):
            self._earlier.start(
                lambda request: _kept_rows(prepare_earlier, prepared, request.superseded),
                lambda earlier: presenter.show_earlier_rows(prepared, earlier),
                failures=(Stopped,),
            )
        self.host.show_title(session.tree.name or None)
        self.tool_set.show_system_prompt()  # a move in the tree may restore another tool set
        self.host.refresh_status()

    def _failed(self, session: AgentSession, error: Exception) -> None:
        """An entry's body could not be read: the branch shows as the model sees it, without marks."""
        self.notifications.post(describe_exception(error))
        self._show(session, None)

    def show_tree_status(self, text: str) -> None:
        """The tree's own line shows its status; the window's status bar repeats it only when the tree's
        panel is closed (e.g. a move started from the chat), so it is never shown twice."""
        if text and not self.window.tree_panel.isVisible():
            self.window.status.showMessage(text, 8000)


def _kept_rows(build: Callable[..., Conversation], *args: Any) -> Conversation:
    """Rows the chat keeps (a long branch has hundreds of thousands of objects in them), built with no cycle
    collection walking them meanwhile and left out of later ones (``paused_gc``), with their positions for
    the chat's model (numbering a long branch's rows is not left to the GUI thread)."""
    with paused_gc(keep=True):
        built = build(*args)
        built.positions = prepended_positions(built.rows)
        return built
