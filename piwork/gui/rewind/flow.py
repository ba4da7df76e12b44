"""FileRewind: the window restores the project's files to a point of the conversation, and undoes it.

A ``SessionPanel``: it follows the open session's checkpoints (``AgentSession.checkpointer``). Three ways
in: the branch dialog's "Also restore the files to this point" (the files were listed there, so the
restore runs once the move is done), the tree's "Restore files to here" (asks first, listing the files),
and Session → Undo File Restore (asks the same way). Every look at the files and every restore runs in a
worker; the GUI thread only asks and tells. A restore that would overwrite files changed outside piwork
is stopped by the engine (``RestoreBlocked``) and asked about, naming those files: Restore Anyway forces
it, Cancel leaves every file as it is. Afterwards the chat and the tree say what changed, and the undo
action is enabled while the session has a restore to undo (the engine checkpoints the files just before
each restore).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any

import shiboken6
from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QWidget

from piwork.core.errors import PiworkError
from piwork.gui.background import BackgroundTasks
from piwork.gui.dialogs import ask
from piwork.gui.rewind.restore_dialog import RestoreFilesDialog
from piwork.gui.rewind.work import (
    Look,
    can_undo,
    changed_count,
    counts,
    entry_words,
    look_at,
    look_at_undo,
    restored_text,
    would_change,
)

if TYPE_CHECKING:
    from piwork.core.checkpoints import RestorePlan, SessionCheckpoints
    from piwork.core.session import SessionTree
    from piwork.core.workflows import AgentRuntime
    from piwork.gui.chat.presenter import ChatPresenter

NO_SESSION = "No session is open."
TURNED_OFF = "Checkpoints are turned off (setting piwork.checkpoints.enabled): no file can be restored."
NOT_SAVED = "This session is not saved yet: no checkpoint of its files was taken."
WAIT_FOR_REPLY = "Wait for the current response to finish before restoring files."
UNDER_WAY = "A file restore is under way."


class FileRewind(QObject):
    undoAvailable = Signal(bool)  # the session has a file restore to undo
    told = Signal(str)  # one line for the tree's status
    restored = Signal(object)  # the RestorePlan a restore or its undo put in place

    def __init__(self, presenter: ChatPresenter, dialogs_parent: QWidget) -> None:
        super().__init__(dialogs_parent)
        self._presenter = presenter
        self._parent = dialogs_parent
        self._runtime: AgentRuntime | None = None
        self._store: SessionCheckpoints | None = None  # the open session's, opened in a worker
        self._tasks = BackgroundTasks()
        self._busy: asyncio.Task[Any] | None = None
        self.can_undo = False
        self.dialog: RestoreFilesDialog | None = None  # the question shown now
        # returns once the chat shows the branch the session is on: after a move it is rebuilt in a
        # worker, and a notice added before that would be replaced with the old rows (set by the window)
        self.chat_shown: Callable[[], Awaitable[None]] | None = None

    def set_presenter(self, presenter: ChatPresenter) -> None:
        """Tell what follows in another chat (the window's tab in front changed)."""
        self._presenter = presenter

    # ---- SessionPanel ------------------------------------------------------------------------

    def attach(self, runtime: AgentRuntime) -> None:
        self._runtime, self._store = runtime, None
        self._set_can_undo(False)
        self.refresh_undo()

    def detach(self) -> None:
        self._runtime, self._store = None, None
        if shiboken6.isValid(self):  # at quit the window (and this object with it) may be gone first
            self._set_can_undo(False)

    def shutdown(self) -> None:
        self._tasks.cancel_all()

    # ---- looking -----------------------------------------------------------------------------

    async def checkpoints(self) -> tuple[SessionCheckpoints, SessionTree] | str:
        """The open session's checkpoints and tree, or why there are none. The store is opened in a worker
        (it loads the git-related code and resolves paths), with the folder and size limit the session's
        checkpointer uses: both share the project's lock, so a restore never overlaps a snapshot."""
        runtime = self._runtime
        if runtime is None:
            return NO_SESSION
        if runtime.session.checkpointer is None:
            return TURNED_OFF
        path = runtime.store.path
        if path is None:
            return NOT_SAVED
        if self._store is None:
            from piwork.core.checkpoints import SessionCheckpoints  # the engine's, loaded with the session
            from piwork.core.settings_schema import CHECKPOINTS_MAX_FILE_MB

            limit = runtime.resources.settings.values.value(CHECKPOINTS_MAX_FILE_MB)
            agent_dir = Path(runtime.resources.agent_dir)
            store = await asyncio.to_thread(SessionCheckpoints, runtime.store.cwd, path, agent_dir, limit)
            if runtime is not self._runtime:  # another session opened meanwhile
                return await self.checkpoints()
            self._store = store
        return self._store, runtime.store.tree

    async def look(self, entry_id: str) -> Look:
        """What restoring the files to ``entry_id`` would change (a dry run, in a worker)."""
        found = await self.checkpoints()
        if isinstance(found, str):
            return Look(None, found)
        store, tree = found
        return await asyncio.to_thread(look_at, store, tree, entry_id)

    def refresh_undo(self) -> None:
        """Look again (in a worker) whether the session has a file restore to undo."""
        if self._runtime is not None:
            self._tasks.spawn(self._refresh_undo(self._runtime))

    async def _refresh_undo(self, runtime: AgentRuntime) -> None:
        found = await self.checkpoints()
        if isinstance(found, str):
            return
        available = await asyncio.to_thread(can_undo, found[0])
        if runtime is self._runtime:
            self._set_can_undo(available)

    def _set_can_undo(self, available: bool) -> None:
        self.can_undo = available
        self.undoAvailable.emit(available)

    # ---- restoring ---------------------------------------------------------------------------

    @property
    def busy(self) -> bool:
        return self._busy is not None and not self._busy.done()

    def restore_to(self, entry_id: str) -> asyncio.Task[Any] | None:
        """Restore the files to ``entry_id`` after asking, with the list of the files that would change."""
        return self._start(lambda: self._restore(entry_id, ask_first=True))

    def restore_after_move(self, entry_id: str) -> asyncio.Task[Any] | None:
        """Restore the files to ``entry_id``, whose list the branch dialog showed (asks only when files
        changed outside piwork would be overwritten)."""
        return self._start(lambda: self._restore(entry_id, ask_first=False))

    def undo_last(self) -> asyncio.Task[Any] | None:
        """Bring back the files the last restore replaced, after asking with the list."""
        return self._start(self._undo)

    def _start(self, work: Callable[[], Coroutine[Any, Any, None]]) -> asyncio.Task[Any] | None:
        runtime = self._runtime
        if self.busy:
            self.told.emit(UNDER_WAY)
            return None
        if runtime is not None and runtime.session.is_streaming:
            self._say("Files not restored", WAIT_FOR_REPLY)
            return None
        self._busy = self._tasks.spawn(work())
        return self._busy

    async def _restore(self, entry_id: str, ask_first: bool) -> None:
        found = await self.checkpoints()
        if isinstance(found, str):
            self._say("Files not restored", found)
            return
        store, tree = found
        approved: set[str] = set()
        if ask_first:
            look = await asyncio.to_thread(look_at, store, tree, entry_id)
            if look.plan is None:
                self._say("Files not restored", look.reason or "")
                return
            if look.plan.empty:
                self._say("Nothing to restore", would_change(look.plan))
                return
            if not await self._confirm(look.plan, look.title):
                self.told.emit("The files were not restored.")
                return
            approved = set(look.plan.outside)
            title = look.title
        else:
            if self.chat_shown is not None:  # what is told below lands under the branch moved to
                await self.chat_shown()
            title = await asyncio.to_thread(entry_words, tree, entry_id)

        def restore(force: bool) -> RestorePlan:
            return store.restore(tree, entry_id, force)

        plan = await self._run(restore, approved, title, undoing=False)
        if plan is not None:
            self._done(plan, title, undoing=False)

    async def _undo(self) -> None:
        found = await self.checkpoints()
        if isinstance(found, str):
            self._say("File restore not undone", found)
            return
        store = found[0]
        look = await asyncio.to_thread(look_at_undo, store)
        if look.plan is None:
            self._say("File restore not undone", look.reason or "")
            self.refresh_undo()
            return
        if not look.plan.empty and not await self._confirm(look.plan, look.title, undoing=True):
            self.told.emit("The file restore was not undone.")
            return
        plan = await self._run(store.undo_restore, set(look.plan.outside), look.title, undoing=True)
        if plan is not None:
            self._done(plan, look.title, undoing=True)

    async def _run(
        self, restore: Callable[[bool], RestorePlan], approved: set[str], where: str, undoing: bool
    ) -> RestorePlan | None:
        """``restore`` in a worker; stopped by files changed outside piwork, asked about them (unless the
        user already saw and accepted exactly those) and forced on Restore Anyway."""
        from piwork.core.checkpoints import RestoreBlocked

        failed = "File restore not undone" if undoing else "Files not restored"
        try:
            try:
                return await asyncio.to_thread(restore, False)
            except RestoreBlocked as blocked:
                if not set(blocked.plan.outside) <= approved and not await self._confirm(
                    blocked.plan, where, undoing
                ):
                    self._say(failed, "Every file was left as it is, your own changes included.")
                    return None
                return await asyncio.to_thread(restore, True)
        except (PiworkError, OSError) as err:
            self._say(failed, str(err), error=True)
            return None

    async def _confirm(self, plan: RestorePlan, where: str, undoing: bool = False) -> bool:
        dialog = RestoreFilesDialog(plan, where, self._parent, undoing=undoing)
        self.dialog = dialog
        try:
            return await ask(dialog) == RestoreFilesDialog.DialogCode.Accepted.value
        finally:
            self.dialog = None
            if shiboken6.isValid(dialog):
                dialog.close()
                dialog.deleteLater()

    def _done(self, plan: RestorePlan, title: str, undoing: bool) -> None:
        heading, text = restored_text(plan, title, undoing)
        self._presenter.add_notice(heading, text)
        if plan.empty:
            self.told.emit("No file needed to change.")
        else:
            files = changed_count(plan)
            again = "again restores them" if undoing else "brings them back"
            self.told.emit(
                f"{heading}: {files:,} file{'s' if files != 1 else ''} ({counts(plan)}). "
                f"Session → Undo File Restore {again}."
            )
        self.restored.emit(plan)
        self.refresh_undo()

    def _say(self, heading: str, text: str, error: bool = False) -> None:
        self._presenter.add_notice(heading, text, error=error)
        self.told.emit(text)
