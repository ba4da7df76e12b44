"""The log viewer's background work, line indexing and search, as asyncio tasks around ``asyncio.to_thread``.

Both only read the file. Each chunk's result is handed to the GUI thread through the loop
(``call_soon_threadsafe``) and delivered only while the job is still wanted: ``cancel()`` (a new query,
another file, the view closing) cancels the task, makes the worker stop at its next chunk, and drops
whatever it still hands over, without waiting for it.
"""

from __future__ import annotations

import asyncio
import threading
from array import array
from collections.abc import Callable
from typing import Any

from piwork.gui.background import BackgroundTasks
from piwork.gui.logs.line_index import count_block_newlines
from piwork.gui.logs.search import CompiledSearch, search_file_lines

Batch = Callable[[list[int], int], None]


class FileJob:
    """One background pass over a file; ``cancel()`` stops it and silences it."""

    def __init__(self) -> None:
        self._stop = threading.Event()
        self._tasks = BackgroundTasks()

    @property
    def running(self) -> bool:
        return self._tasks.running

    def cancel(self) -> None:
        self._stop.set()
        self._tasks.cancel_all()

    def _start(
        self,
        work: Callable[[Batch], Any],
        on_batch: Batch,
        on_done: Callable[[Any], None],
        on_failed: Callable[[OSError], None],
    ) -> None:
        self._tasks.spawn(self._run(work, on_batch, on_done, on_failed))

    async def _run(
        self,
        work: Callable[[Batch], Any],
        on_batch: Batch,
        on_done: Callable[[Any], None],
        on_failed: Callable[[OSError], None],
    ) -> None:
        loop = asyncio.get_running_loop()

        def deliver(lines: list[int], done: int) -> None:  # on the GUI thread
            if not self._stop.is_set():
                on_batch(lines, done)

        def hand_over(lines: list[int], done: int) -> None:  # in the worker thread
            loop.call_soon_threadsafe(deliver, lines, done)

        try:
            result = await asyncio.to_thread(work, hand_over)
        except OSError as exc:
            if not self._stop.is_set():
                on_failed(exc)
            return
        if not self._stop.is_set():
            on_done(result)


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
        def work(batch: Batch) -> None:
            count_block_newlines(path, first_block, end_block, size, batch, self._stop)

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
        def work(batch: Batch) -> tuple[int, bool]:
            return search_file_lines(path, query, size, batch, self._stop, newlines_before=newlines_before)

        self._start(work, on_batch, on_done, on_failed)
