"""Lists sessions in a worker thread (``LatestWins``) and reports progress and the result as signals.

Each file is read in the worker; progress comes back to the GUI thread through the loop. A newer ``start``
supersedes the listing still running, and ``cancel`` (its owner closing) stops it: the worker stops after
the file it is reading, and nothing it still reports is emitted, so a listing never reports into a dialog
that went away.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal, SignalInstance

from piwork.gui.background import LatestWins, Request

if TYPE_CHECKING:
    from piwork.core.session import SessionInfo


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
        self._latest = LatestWins()

    @property
    def running(self) -> bool:
        return self._latest.running

    def start(self, cwd: str | None) -> None:
        """List the sessions of ``cwd``, or of every project when ``cwd`` is None."""
        self._latest.start(
            lambda request: self._read(cwd, request),
            lambda infos: self._emit(self.finished, infos),
            lambda err: self._emit(self.failed, f"Could not list sessions: {err}"),
            failures=(OSError, _Superseded),
        )

    def cancel(self) -> None:
        """Drop the listing still running (the file it is reading is finished in its thread)."""
        self._latest.cancel()

    def _read(self, cwd: str | None, request: Request) -> list[SessionInfo]:  # in the worker thread
        from piwork.core.session import list_all_sessions, list_sessions  # the engine's, loaded here

        def report(done: int, total: int) -> None:
            if request.superseded():
                raise _Superseded
            request.hand_over(self._emit, self.progress, done, total)

        if cwd is None:
            return list_all_sessions(agent_dir=self.agent_dir, session_dir=self.session_dir, progress=report)
        return list_sessions(cwd, agent_dir=self.agent_dir, session_dir=self.session_dir, progress=report)

    @staticmethod
    def _emit(signal: SignalInstance, *args: object) -> None:
        # RuntimeError: the owner (and this QObject) was deleted without cancelling; nobody is waiting.
        with contextlib.suppress(RuntimeError):
            signal.emit(*args)
