"""The log viewer's background work, line indexing and search, in worker threads through ``LatestWins``.

Both only read the file. Each chunk's result is handed to the GUI thread through the loop and delivered
only while the job is still wanted: ``cancel()`` (a new query, another file, the view closing) makes the
worker stop at its next chunk and drops whatever it still hands over, without waiting for it.
"""

from __future__ import annotations

import threading
from array import array
from collections.abc import Callable
from typing import Any, cast

from piwork.gui.background import LatestWins, Request
from piwork.gui.logs.line_index import count_block_newlines
from piwork.gui.logs.search import CompiledSearch, search_file_lines

Batch = Callable[[list[int], int], None]


class FileJob:
    """One background pass over a file; ``cancel()`` stops it and silences it."""

    def __init__(self) -> None:
        self._latest = LatestWins()

    @property
    def running(self) -> bool:
        return self._latest.running

    def cancel(self) -> None:
        self._latest.cancel()

    def _start(
        self,
        work: Callable[[Batch, threading.Event], Any],
        on_batch: Batch,
        on_done: Callable[[Any], None],
        on_failed: Callable[[OSError], None],
    ) -> None:
        def run(request: Request) -> Any:  # in the worker thread
            def hand_over(lines: list[int], done: int) -> None:
                request.hand_over(on_batch, lines, done)

            return work(hand_over, request.stopped)

        self._latest.start(run, on_done, lambda exc: on_failed(cast(OSError, exc)))


class IndexJob(FileJob):
    """Counts newlines block by block: ``on_batch(counts, bytes_done)`` per read chunk, then
    ``on_done()`` when the worker stopped (at the end of the file, or earlier if it could read no more)."""

    def start(
        self,
        path: str,
        first_block: int,
        end_block: int,
        size: int,
        on_batch: Batch,
        on_done: Callable[[], None],
        on_failed: Callable[[OSError], None],
    ) -> None:
        def work(batch: Batch, stop: threading.Event) -> None:
            count_block_newlines(path, first_block, end_block, size, batch, stop)

        self._start(work, on_batch, lambda _result: on_done(), on_failed)


class SearchJob(FileJob):
    """Searches the file: ``on_batch(lines, bytes_done)`` per chunk, ``on_done((total, capped))`` at the end."""

    def start(
        self,
        path: str,
        query: CompiledSearch,
        size: int,
        newlines_before: array[int] | None,
        on_batch: Batch,
        on_done: Callable[[tuple[int, bool]], None],
        on_failed: Callable[[OSError], None],
    ) -> None:
        def work(batch: Batch, stop: threading.Event) -> tuple[int, bool]:
            return search_file_lines(path, query, size, batch, stop, newlines_before=newlines_before)

        self._start(work, on_batch, on_done, on_failed)
