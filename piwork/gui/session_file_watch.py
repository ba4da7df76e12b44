"""Reads the open session file ahead, in a worker thread, when another program changes it.

Before piwork appends to a session file that another program (Pi, a second window) has changed, the store
reloads it (``Session.before_append``). For a large file that read would happen on the GUI thread, at the
moment the user acts. This watcher notices the change as it happens and has the store read the file in a
worker thread (``Session.read_outside_change``); the next append then uses what was read, unless the file
has moved on since. What the user sees does not change: the reload, and its notice, still come with the
next append.

Every change read is also handed on (``changed``): a read-only session shows what the file's other writer
added (see ``session_owner``), and a writable one learns that another program appended to its file.
"""

from __future__ import annotations

import asyncio

import shiboken6
from PySide6.QtCore import QFileSystemWatcher, QObject, Signal

from piwork.core.session import Session
from piwork.gui.background import BackgroundTasks


class SessionFileWatch(QObject):
    readAhead = Signal(bool)  # a read-ahead finished; True when the file had changed and was read
    # the file as read after it changed (a FileChange): a read-only session's is the receiver's to
    # ``follow`` or ``discard``
    changed = Signal(object)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._watcher = QFileSystemWatcher(self)
        self._watcher.fileChanged.connect(self._on_changed)
        self._session: Session | None = None
        self._tasks = BackgroundTasks()

    def watch(self, session: Session | None) -> None:
        """Follow ``session``'s file (None: stop). After the window is gone (a shutdown letting go of the
        session late) there is nothing left to watch with."""
        self._tasks.cancel_all()
        self._session = session
        if not shiboken6.isValid(self._watcher):
            return
        if self._watcher.files():
            self._watcher.removePaths(self._watcher.files())
        self.arm()

    def arm(self) -> None:
        """Start watching once the file exists (a new session's file is written with its first reply, and
        a program that replaces the file takes the old one out of the watch)."""
        path = self._session.path if self._session is not None else None
        if (
            path is not None
            and shiboken6.isValid(self._watcher)
            and str(path) not in self._watcher.files()
            and path.is_file()
        ):
            self._watcher.addPath(str(path))

    def _on_changed(self, path: str) -> None:
        session = self._session
        if session is None or str(session.path) != path:
            return
        self.arm()
        self._tasks.spawn(self._read_ahead(session))

    async def _read_ahead(self, session: Session) -> None:
        change = await asyncio.to_thread(session.read_changes)
        if not shiboken6.isValid(self) or session is not self._session:
            if change is not None and session.read_only:
                change.discard()
            return
        self.readAhead.emit(change is not None)
        if change is not None:
            self.changed.emit(change)
