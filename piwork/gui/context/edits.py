"""Context edits asked for in the session tree or on a chat row: leave an entry out of what the model sees,
replace it, or restore it. The engine writes a Pi 1.6 ``context_edit`` entry; the file and the chat keep the
original; the tree's marks, the X-ray, the meter and preflight follow at once."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any, Protocol

from PySide6.QtCore import QObject, SignalInstance

from piwork.core.errors import PiworkError
from piwork.core.workflows import AgentRuntime
from piwork.gui.chat.chat_view import ChatView
from piwork.gui.chat.presenter import ChatPresenter
from piwork.gui.context.feed import ContextFeed
from piwork.gui.context.navigation import entry_of_message
from piwork.gui.tree.display_tree import entry_title
from piwork.gui.tree.tree_panel import SessionTreePanel

DONE = {
    "leave-out": "Left out of the model's context",
    "replace": "Replaced for the model",
    "restore": "Restored for the model",
}
UNCHANGED = "What the model sees is unchanged"


class EditsHost(Protocol):
    runtime: AgentRuntime | None
    context_feed: ContextFeed

    def spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]: ...


class ContextEdits(QObject):
    def __init__(
        self, host: EditsHost, tree_panel: SessionTreePanel, chat: ChatView, presenter: ChatPresenter
    ) -> None:
        super().__init__(tree_panel)
        self.host = host
        self.tree_panel = tree_panel
        self.presenter = presenter
        self._noted: object = None  # the session whose context edits the chat has noted
        chat.contextEditRequested.connect(self.edit_row)

    def link_window(self, link: Callable[[SignalInstance, Callable[..., Any]], None]) -> None:
        """The Session Tree's requests, through ``link`` (they act on this session while its tab is in
        front)."""
        tree_panel = self.tree_panel
        link(tree_panel.context_edit_requested, self.edit)
        link(tree_panel.navigated, lambda _result: tree_panel.refresh_edit_marks())  # other branch, edits
        link(tree_panel.edit_marks_shown, self.note_edits_in_force)

    def _session(self) -> Any:
        runtime = self.host.runtime
        return runtime.session if runtime is not None else None

    def edit(self, action: str, entry_id: str, content: object = None) -> asyncio.Task[Any]:
        """``leave-out``, ``replace`` with ``content``, or ``restore`` what the model sees of ``entry_id``."""
        return self.host.spawn(self._edit(action, entry_id, content))

    async def _edit(self, action: str, entry_id: str, content: object) -> None:
        session = self._session()
        if session is None:
            return
        try:
            if action == "leave-out":
                await session.leave_out_of_context(entry_id)
            elif action == "replace":
                await session.replace_in_context(entry_id, str(content or ""))
            else:
                await session.restore_in_context(entry_id)
        except PiworkError as exc:
            self.tree_panel.show_status(str(exc))
            self.presenter.add_notice(UNCHANGED, str(exc))
            return
        self.tree_panel.refresh_edit_marks()
        self.host.context_feed.schedule()
        record = session.tree.record(entry_id)
        title = await asyncio.to_thread(entry_title, record, session.tree) if record is not None else entry_id
        self.presenter.add_notice(
            f"{DONE.get(action, 'Changed for the model')}: {title[:120]}",
            "The session file and this chat keep the original; the X-ray, the meter and preflight count "
            "what the model now sees. Restore (in the tree's or the chat's menu) undoes it.",
        )

    def note_edits_in_force(self) -> None:
        """Once per opened session: the chat shows what the model sees, so say what the edits change."""
        model = self.tree_panel.model
        session = self._session()
        if model is None or session is None or self._noted is session or self.tree_panel.marks_pending:
            return  # (marks still being read: said once they are shown)
        self._noted = session
        marks = model.edit_marks()
        if not marks:
            return
        left_out = sum(mark.left_out for mark in marks.values())
        replaced = len(marks) - left_out
        parts = [f"{left_out} left out" if left_out else "", f"{replaced} replaced" if replaced else ""]
        self.presenter.add_notice(
            "Context edits in force on this branch: " + " and ".join(p for p in parts if p),
            "The chat shows each message as written, with a card under each edited one saying what the "
            "model sees instead. The session tree marks the entries (⊘ left out, ✎ replaced); Restore in "
            "the chat's or the tree's menu undoes an edit.",
        )

    def edit_row(self, action: str, row_key: int) -> None:
        """A context edit asked for on a chat row: the entry of the message the row shows."""
        message = self.presenter.message_of_row(row_key)
        session = self._session()
        if message is None or session is None:
            self.presenter.add_notice(UNCHANGED, "This row is not a saved message.")
            return
        self.host.spawn(self._edit_message(action, message, session))

    async def _edit_message(self, action: str, message: dict[str, Any], session: Any) -> None:
        entry_id = await asyncio.to_thread(entry_of_message, session.tree, message)
        if entry_id is None:
            self.presenter.add_notice(UNCHANGED, "This message is not on the session's current branch.")
            return
        if action == "replace":
            self.tree_panel.prompt_replacement(entry_id)
            return
        await self._edit(action, entry_id, None)
