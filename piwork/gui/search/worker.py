"""Runs a session search in a worker thread (``asyncio.to_thread``); results arrive on the GUI thread as
they are found.

A new ``start`` (or ``cancel``) supersedes the running search at once: the worker checks its
generation between files and inside each file's blocks and stops, and what it handed over before is
dropped on the GUI thread, so a query typed letter by letter never leaves old searches running behind
the new one, and a closed dialog hears nothing more.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QObject, Signal, SignalInstance

from piwork.core.session import SearchQuery, search_sessions
from piwork.gui.background import BackgroundTasks


class SessionSearch(QObject):
    found = Signal(int, object)  # generation, SessionHits
    progress = Signal(int, int, int)  # generation, files done, files in all
    finished = Signal(int)  # generation (not emitted for a superseded search)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._generation = 0
        self._tasks = BackgroundTasks()

    @property
    def generation(self) -> int:
        return self._generation

    @property
    def running(self) -> bool:
        """A worker is still searching (a superseded one stops at its next block)."""
        return self._tasks.running

    def start(self, query: str, files: Callable[[], list[Path]]) -> int:
        """Search the files ``files()`` lists (called in the worker, in the order it gives) for
        ``query``; returns the generation the signals carry."""
        self._generation += 1
        generation = self._generation
        self._tasks.spawn(self._search(SearchQuery.parse(query), files, generation))
        return generation

    def cancel(self) -> None:
        self._generation += 1

    async def _search(self, query: SearchQuery, files: Callable[[], list[Path]], generation: int) -> None:
        loop = asyncio.get_running_loop()

        def stale() -> bool:  # read in the worker: a plain int, set on the GUI thread
            return generation != self._generation

        def hand_over(signal: SignalInstance, *args: object) -> None:  # in the worker
            loop.call_soon_threadsafe(self._emit_if_current, generation, signal, *args)

        def run() -> None:
            for result in search_sessions(
                files(),
                query,
                cancelled=stale,
                progress=lambda done, total: hand_over(self.progress, done, total),
            ):
                hand_over(self.found, result)

        await asyncio.to_thread(run)
        self._emit_if_current(generation, self.finished)

    def _emit_if_current(self, generation: int, signal: SignalInstance, *args: object) -> None:
        if generation != self._generation:
            return
        # RuntimeError: the dialog owning this object was deleted without cancelling; nobody listens.
        with contextlib.suppress(RuntimeError):
            signal.emit(generation, *args)
