"""Lists sessions in a worker thread (``asyncio.to_thread``) and reports progress and the result as signals.

Each file is read in the worker; progress comes back to the GUI thread through the loop
(``call_soon_threadsafe``). A newer ``start`` supersedes the listing still running, and ``cancel`` (its
owner closing) stops it: its task is cancelled, the worker stops after the file it is reading, and
nothing it still reports is emitted, so a listing never reports into a dialog that went away.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QObject, Signal, SignalInstance

from piwork.core.session import SessionInfo, list_all_sessions, list_sessions
from piwork.gui.background import BackgroundTasks

Progress = Callable[[int, int], None]


class _Superseded(Exception):
    """Raised in the worker from the progress callback: a newer listing (or none) is wanted."""


class SessionListing(QObject):
    """``start()`` lists in a worker thread; signals arrive on the GUI thread. A newer start supersedes."""

    progress = Signal(int, int)  # done, total
    finished = Signal(list)  # list[SessionInfo], newest first
    failed = Signal(str)

    def __init__(
        self, agent_dir: Path, session_dir: Path | None = None, parent: QObject | None = None
    ) -> None:
        super().__init__(parent)
        self.agent_dir = agent_dir
        self.session_dir = session_dir
        self._generation = 0
        self._tasks = BackgroundTasks()

    @property
    def running(self) -> bool:
        return self._tasks.running

    def start(self, cwd: str | None) -> None:
        """List the sessions of ``cwd``, or of every project when ``cwd`` is None."""
        self.cancel()
        self._tasks.spawn(self._list(cwd, self._generation))

    def cancel(self) -> None:
        """Drop the listing still running (the file it is reading is finished in its thread)."""
        self._generation += 1
        self._tasks.cancel_all()

    async def _list(self, cwd: str | None, generation: int) -> None:
        loop = asyncio.get_running_loop()

        def report(done: int, total: int) -> None:  # in the worker thread
            if generation != self._generation:
                raise _Superseded
            loop.call_soon_threadsafe(self._report, generation, done, total)

        try:
            infos = await asyncio.to_thread(self._read, cwd, report)
        except _Superseded:
            return
        except OSError as err:
            self._emit_if_current(generation, self.failed, f"Could not list sessions: {err}")
            return
        self._emit_if_current(generation, self.finished, infos)

    def _read(self, cwd: str | None, report: Progress) -> list[SessionInfo]:
        if cwd is None:
            return list_all_sessions(agent_dir=self.agent_dir, session_dir=self.session_dir, progress=report)
        return list_sessions(cwd, agent_dir=self.agent_dir, session_dir=self.session_dir, progress=report)

    def _report(self, generation: int, done: int, total: int) -> None:
        self._emit_if_current(generation, self.progress, done, total)

    def _emit_if_current(self, generation: int, signal: SignalInstance, *args: object) -> None:
        if generation != self._generation:
            return
        # RuntimeError: the owner (and this QObject) was deleted without cancelling; nobody is waiting.
        with contextlib.suppress(RuntimeError):
            signal.emit(*args)
