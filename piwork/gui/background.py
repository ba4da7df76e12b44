"""Background work for the window, in one style: asyncio on the qasync loop.

The GUI thread only lays out, paints and reacts. Anything that may wait or compute for long — reading,
indexing or fsyncing a file, parsing a session's JSON, decoding base64, scaling an image, asking the
keyring — runs in the loop's default executor through ``await asyncio.to_thread(work, ...)`` inside a task
started with :meth:`BackgroundTasks.spawn`. The result comes back to the coroutine on the GUI thread, where
widgets may be touched; a worker thread never touches a widget.

Why asyncio and not QThread, QThreadPool or bare threads: the engine is asyncio already (the agent session,
the providers), so the window awaits engine calls and file work the same way; an awaited result needs no
cross-thread signal, a failure arrives as an exception where the work was asked for, stopping is
``task.cancel()``, and tests advance it with ``qtbot.waitUntil``. Work that reports progress hands it back
with ``loop.call_soon_threadsafe``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any


class BackgroundTasks:
    """The tasks one widget started: kept referenced while they run, cancelled when it goes away."""

    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[Any]] = set()

    def spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    @property
    def running(self) -> bool:
        return any(not task.done() for task in self._tasks)

    def cancel_all(self) -> None:
        """Cancel what is still running (work already in a thread finishes there; its result is dropped)."""
        for task in list(self._tasks):
            task.cancel()
