"""After a failed or stopped reply: Retry sends its prompt again, Edit and Resend puts the prompt back in the
editor. Both move the session to just before that prompt, so the old attempt stays in the tree as a branch
of its own and nothing is rewritten."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, Protocol

from PySide6.QtCore import QObject

from piwork.core.errors import PiworkError
from piwork.core.workflows import AgentRuntime
from piwork.gui.chat.chat_view import ChatView
from piwork.gui.chat.composer import Composer
from piwork.gui.chat.presenter import ChatPresenter
from piwork.gui.chat.rows import text_of
from piwork.gui.context.navigation import entry_of_message

RETRY = "retry"
EDIT = "edit"
NOT_POSSIBLE = "Cannot send that prompt again"


class ReplyHost(Protocol):
    runtime: AgentRuntime | None

    def spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]: ...

    def submit(self, text: str) -> None: ...

    async def branch_shown(self) -> None: ...


def prompt_before(tree: Any, entry_id: str) -> tuple[str, str] | None:
    """The user prompt a reply answered: (the id of the entry before it, its text), looking up the branch
    from ``entry_id``; None when there is none, or it starts the session. Reads bodies: run in a worker."""
    path = tree.path(entry_id)
    for at in range(len(path) - 1, 0, -1):
        record = path[at]
        if record.type == "message" and record.role == "user":
            body = tree.body(record)
            message = body.get("message") if isinstance(body, dict) else None
            text = text_of(message.get("content")) if isinstance(message, dict) else ""
            return (str(path[at - 1].id), text) if text.strip() else None
    return None


class ReplyAgain(QObject):
    def __init__(
        self,
        host: ReplyHost,
        chat: ChatView,
        presenter: ChatPresenter,
        composer: Composer,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.host = host
        self.presenter = presenter
        self.composer = composer
        chat.replyAgainRequested.connect(self.request)

    def request(self, action: str, row_key: int) -> asyncio.Task[Any] | None:
        """``retry`` or ``edit`` the prompt of the reply a chat row shows."""
        message = self.presenter.message_of_row(row_key)
        runtime = self.host.runtime
        if message is None or runtime is None:
            self.presenter.add_notice(NOT_POSSIBLE, "This row is not part of a saved reply.")
            return None
        return self.host.spawn(self._again(action, runtime, message))

    async def _again(self, action: str, runtime: AgentRuntime, message: dict[str, Any]) -> None:
        session = runtime.session
        tree = session.tree
        entry_id = await asyncio.to_thread(entry_of_message, tree, message)
        found = await asyncio.to_thread(prompt_before, tree, entry_id) if entry_id is not None else None
        if found is None:
            self.presenter.add_notice(NOT_POSSIBLE, "No prompt of yours leads to this reply on the branch.")
            return
        before, text = found
        await session.wait_for_idle()  # a reply that just ended may still be settling (its last writes)
        try:
            await session.navigate(before)  # the attempt stays in the tree, a branch of its own
        except PiworkError as err:
            self.presenter.add_notice(NOT_POSSIBLE, str(err), error=True)
            return
        await self.host.branch_shown()  # the chat shows the branch moved to before the prompt joins it
        if action == RETRY:
            self.host.submit(text)
        else:
            self.composer.set_text(text)
            self.composer.setFocus()
