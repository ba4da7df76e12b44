"""Runs a session search on a worker thread; results arrive on the GUI thread as they are found.

A new ``start`` (or ``cancel``) supersedes the running search at once: the worker checks its
generation between files and inside each file's blocks, so a query typed letter by letter never
leaves old searches running behind the new one.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QObject, Signal

from piwork.core.session import SearchQuery, SessionHits, search_sessions


class SessionSearch(QObject):
    found = Signal(int, object)  # generation, SessionHits
    progress = Signal(int, int, int)  # generation, files done, files in all
    finished = Signal(int)  # generation (not emitted for a superseded search)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._generation = 0
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []

    @property
    def generation(self) -> int:
        return self._generation

    def start(self, query: str, files: Callable[[], list[Path]]) -> int:
        """Search the files ``files()`` lists (called on the worker, in the order it gives) for
        ``query``; returns the generation the signals carry."""
        with self._lock:
            self._generation += 1
            generation = self._generation
        self._threads = [t for t in self._threads if t.is_alive()]
        thread = threading.Thread(
            target=self._run, args=(SearchQuery.parse(query), files, generation), daemon=True
        )
        thread.name = "piwork-session-search"
        self._threads.append(thread)
        thread.start()
        return generation

    def cancel(self) -> None:
        with self._lock:
            self._generation += 1

    def wait(self, timeout: float = 10.0) -> bool:
        """Join the worker threads (tests and shutdown); True when none is left running."""
        for thread in list(self._threads):
            thread.join(timeout)
        return not any(t.is_alive() for t in self._threads)

    def _run(self, query: SearchQuery, files: Callable[[], list[Path]], generation: int) -> None:
        def stale() -> bool:
            return generation != self._generation

        def report(done: int, total: int) -> None:
            if not stale():
                self.progress.emit(generation, done, total)

        # RuntimeError: the dialog owning this object closed while the search ran; nobody listens.
        with contextlib.suppress(RuntimeError):
            result: SessionHits
            for result in search_sessions(files(), query, cancelled=stale, progress=report):
                self.found.emit(generation, result)
            if not stale():
                self.finished.emit(generation)
