"""Lists sessions on a worker thread and reports progress and the result back to the GUI thread."""

from __future__ import annotations

import contextlib
import threading
from pathlib import Path

from PySide6.QtCore import QObject, Signal

from piwork.core.session import SessionInfo, list_all_sessions, list_sessions


class SessionListing(QObject):
    """``start()`` lists in a thread; signals arrive queued on the GUI thread. A newer start supersedes."""

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
        self._thread: threading.Thread | None = None

    def start(self, cwd: str | None) -> None:
        """List the sessions of ``cwd``, or of every project when ``cwd`` is None."""
        self._generation += 1
        generation = self._generation
        thread = threading.Thread(
            target=self._run, args=(cwd, generation), name="piwork-session-listing", daemon=True
        )
        self._thread = thread
        thread.start()

    def wait(self, timeout: float = 10.0) -> None:
        if self._thread is not None:
            self._thread.join(timeout)

    def _run(self, cwd: str | None, generation: int) -> None:
        # RuntimeError: the dialog (and this QObject) went away while listing; nobody is waiting.
        with contextlib.suppress(RuntimeError):
            self._list(cwd, generation)

    def _list(self, cwd: str | None, generation: int) -> None:
        def report(done: int, total: int) -> None:
            if generation == self._generation:
                self.progress.emit(done, total)

        try:
            if cwd is None:
                infos: list[SessionInfo] = list_all_sessions(
                    agent_dir=self.agent_dir, session_dir=self.session_dir, progress=report
                )
            else:
                infos = list_sessions(
                    cwd, agent_dir=self.agent_dir, session_dir=self.session_dir, progress=report
                )
        except OSError as err:
            if generation == self._generation:
                self.failed.emit(f"Could not list sessions: {err}")
            return
        if generation == self._generation:
            self.finished.emit(infos)
