"""Runs a session search in a worker thread (``LatestWins``); results arrive on the GUI thread as they are
found.

A new ``start`` (or ``cancel``) supersedes the running search at once: the worker checks its request
between files and inside each file's blocks and stops, and what it handed over before is dropped on the
GUI thread, so a query typed letter by letter never leaves old searches running behind the new one, and a
closed dialog hears nothing more.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QObject, Signal, SignalInstance

from piwork.core.session import SearchQuery, search_sessions
from piwork.gui.background import LatestWins, Request


class SessionSearch(QObject):
    found = Signal(int, object)  # generation, SessionHits
    progress = Signal(int, int, int)  # generation, files done, files in all
    finished = Signal(int)  # generation (not emitted for a superseded search)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._latest = LatestWins()

    @property
    def generation(self) -> int:
        """The number of the search whose results are wanted (0: none)."""
        current = self._latest.current
        return current.number if current is not None else 0

    @property
    def running(self) -> bool:
        """A worker is still searching (a superseded one stops at its next block)."""
        return self._latest.running

    def start(self, query: str, files: Callable[[], list[Path]]) -> int:
        """Search the files ``files()`` lists (called in the worker, in the order it gives) for
        ``query``; returns the generation the signals carry."""
        parsed = SearchQuery.parse(query)

        def run(request: Request) -> Request:
            def hand_over(signal: SignalInstance, *args: object) -> None:
                request.hand_over(self._emit, signal, request.number, *args)

            for result in search_sessions(
                files(),
                parsed,
                cancelled=request.superseded,
                progress=lambda done, total: hand_over(self.progress, done, total),
            ):
                hand_over(self.found, result)
            return request

        def done(request: Request) -> None:
            self._emit(self.finished, request.number)

        return self._latest.start(run, done).number

    def cancel(self) -> None:
        self._latest.cancel()

    @staticmethod
    def _emit(signal: SignalInstance, *args: object) -> None:
        # RuntimeError: the dialog owning this object was deleted without cancelling; nobody listens.
        with contextlib.suppress(RuntimeError):
            signal.emit(*args)
