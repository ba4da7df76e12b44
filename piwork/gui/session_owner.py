"""One writer per session file, in the window: while another program writes the open session (a Pi, which
takes no lock, or another piwork holding the writer lock), the session is read-only here, a bar above the
composer says who, the chat and the tree follow what it appends, and the user can fork the session into a
new file of their own or take the file over once its writer has stopped.

A writable session whose file gains entries piwork did not write stops writing at once (another program is
appending to it: two writers would interleave their branches). Reading the file, finding the writer in
``/proc`` and watching for it to stop all run in workers; the GUI thread only swaps in what was read.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, Protocol

import shiboken6
from PySide6.QtCore import QObject, QTimer

from piwork.core.errors import PiworkError
from piwork.core.session import (
    FileChange,
    OtherWriter,
    Session,
    appending_writer,
    clone_session,
    lock_held_by,
    locks_visible,
)
from piwork.core.workflows import AgentRuntime
from piwork.gui.background import BackgroundTasks
from piwork.gui.chat.owner_banner import OwnerBanner
from piwork.gui.session_file_watch import SessionFileWatch

POLL_MS = 1000  # how often a writer known by its pid or lock is looked at, to see it stop


class OwnerHost(Protocol):
    @property
    def runtime(self) -> AgentRuntime | None: ...

    def spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]: ...

    def open_branched(
        self, session: Any, editor_text: str, notice: tuple[str, str] | None = None
    ) -> None: ...

    def refresh_status(self) -> None: ...

    async def branch_shown(self) -> None: ...

    def add_notice(self, title: str, text: str, error: bool = False) -> None: ...


def _stopped(store: Session, writer: OtherWriter) -> bool:
    """Whether ``writer`` has stopped writing ``store``'s file (blocking: reads /proc)."""
    if writer.holds_lock:
        return store.path is not None and lock_held_by(store.path) is None
    return not writer.running()


def _stop_seen(writer: OtherWriter) -> bool:
    """Whether piwork can tell when ``writer`` stops: by its pid, or (Linux) by its lock going free."""
    return locks_visible() if writer.holds_lock else writer.pid is not None


class SessionOwnership(QObject):
    def __init__(
        self, host: OwnerHost, banner: OwnerBanner, watch: SessionFileWatch, parent: QObject
    ) -> None:
        super().__init__(parent)
        self.host = host
        self.banner = banner
        self._runtime: AgentRuntime | None = None
        self._tasks = BackgroundTasks()
        self._busy = asyncio.Lock()  # one read-and-apply of the file at a time
        self._timer = QTimer(self)
        self._timer.setInterval(POLL_MS)
        self._timer.timeout.connect(self._poll)
        self._polling = False
        watch.changed.connect(self._on_change)
        banner.forkRequested.connect(self.fork)
        banner.takeOverRequested.connect(self.take_over)

    # ---- the open session ----------------------------------------------------------------------
    def attach(self, runtime: AgentRuntime) -> None:
        """A session opened: when another program writes its file, say so and watch it."""
        self._runtime = runtime
        if runtime.store.read_only and runtime.store.other_writer is not None:
            self._show_writer(runtime.store)

    def detach(self) -> None:
        """The session is let go (also at quit, after the window and its children are gone)."""
        self._runtime = None
        self._tasks.cancel_all()
        if shiboken6.isValid(self._timer):
            self._timer.stop()
        if shiboken6.isValid(self.banner):
            self.banner.hide()

    def _store(self) -> Session | None:
        return self._runtime.store if self._runtime is not None else None

    def _show_writer(self, store: Session) -> None:
        writer = store.other_writer
        if writer is None:
            return
        stop_seen = _stop_seen(writer)
        reason = (store.read_only_reason or "").rstrip(".")
        text = f"{reason}. What it adds shows here as it comes."
        self.banner.show_writer(text, stop_seen=stop_seen)
        if stop_seen:
            self._timer.start()
        else:
            self._timer.stop()

    # ---- what the other writer appends ---------------------------------------------------------
    def _on_change(self, change: FileChange) -> None:
        runtime = self._runtime
        if runtime is None:
            if not change.for_append:
                change.discard()
            return
        store = runtime.store
        if not store.read_only:
            if change.foreign:
                self._tasks.spawn(self._yield(runtime))
            return
        if store.other_writer is not None and not self.banner.isVisible():  # an append found it first
            self._show_writer(store)
            self.host.refresh_status()
        if change.for_append:  # read while still writable: the store may have closed it since
            self._tasks.spawn(self._refresh(runtime))
        else:
            self._tasks.spawn(self._follow(runtime, change))

    async def _yield(self, runtime: AgentRuntime) -> None:
        """Another program appended to the file piwork writes: stop writing to it, then follow it (an
        append may have found it first and stopped already)."""
        store = runtime.store
        writer = await asyncio.to_thread(appending_writer, store.writer_folders())
        if runtime is not self._runtime:
            return
        if not store.read_only:
            reason = f"{writer.who} is writing this session, so piwork stopped writing to it here"
            store.yield_to(reason, writer)
        self._show_writer(store)
        self.host.refresh_status()
        await self._refresh(runtime)

    async def _refresh(self, runtime: AgentRuntime) -> None:
        """Read the file again (in a worker) and show what was added to it."""
        change = await asyncio.to_thread(runtime.store.read_changes)
        if change is not None:
            await self._follow(runtime, change)

    async def _follow(self, runtime: AgentRuntime, change: FileChange) -> None:
        async with self._busy:
            if runtime is not self._runtime:
                change.discard()
                return
            old_leaf = runtime.store.tree.leaf_id
            if runtime.store.follow(change):
                await runtime.session.follow_file(old_leaf if isinstance(old_leaf, str) else None)

    # ---- the writer stopping -------------------------------------------------------------------
    def _poll(self) -> None:
        store = self._store()
        if store is None or store.other_writer is None or self._polling:
            return
        self._polling = True
        self._tasks.spawn(self._check_stopped(store, store.other_writer))

    async def _check_stopped(self, store: Session, writer: OtherWriter) -> None:
        try:
            stopped = await asyncio.to_thread(_stopped, store, writer)
        finally:
            self._polling = False
        if not stopped or store is not self._store() or store.other_writer is not writer:
            return
        self._timer.stop()
        if self.banner.waiting_to_take_over:
            await self._take_over(store)
        else:
            text = f"{writer.who} has stopped writing this session, so it can be taken over"
            store.explain_read_only(text)
            self.banner.show_stopped(f"{text}.")
            self.host.refresh_status()

    # ---- what the user does --------------------------------------------------------------------
    def take_over(self) -> None:
        store = self._store()
        if store is not None:
            self._tasks.spawn(self._take_over(store))

    async def _take_over(self, store: Session) -> None:
        """Write the file here from now on, once it is read to its end (in a worker)."""
        runtime = self._runtime
        if runtime is None or runtime.store is not store:
            return
        async with self._busy:
            for _attempt in range(3):  # the file may move on between the read and the lock
                change = await asyncio.to_thread(store.read_changes)
                if runtime is not self._runtime:
                    if change is not None:
                        change.discard()
                    return
                old_leaf = store.tree.leaf_id
                took = store.take_over(change)
                if change is not None:
                    await runtime.session.follow_file(old_leaf if isinstance(old_leaf, str) else None)
                if took or store.other_writer is not None:
                    break
        if not store.read_only:
            self._timer.stop()
            self.banner.hide()
            await self.host.branch_shown()  # the chat shows the end of the file first: the notice goes below
            self.host.add_notice(
                "Session file", "This session is written here again, from the end of the file as it is now."
            )
        elif store.other_writer is not None:
            self._show_writer(store)  # another piwork took it meanwhile
        self.host.refresh_status()

    def fork(self) -> None:
        store = self._store()
        if store is not None:
            self._tasks.spawn(self._fork(store))

    async def _fork(self, store: Session) -> None:
        """A copy of the session up to its current leaf, in a new file of its own, opened here."""
        try:  # every body on the branch is read, the new file written and fsynced: in a worker
            created = await asyncio.to_thread(clone_session, store)
        except PiworkError as err:
            self.host.add_notice("Not forked", str(err), error=True)
            return
        if store is not self._store():
            created.close()
            return
        where = f"It is saved as {created.path.name}" if created.path is not None else "It is kept in memory"
        self.host.open_branched(
            created,
            "",
            (
                "Forked",
                f"A copy of this session up to its last entry is open here. {where}; the original is "
                "left to the program writing it.",
            ),
        )
