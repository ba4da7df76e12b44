"""Abort signal for one run: a flag, an awaitable event, and the tasks to cancel when it fires."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class Aborted(Exception):
    """Raised by :meth:`AbortSignal.run` when the signal fired before the work finished."""


class AbortSignal:
    def __init__(self) -> None:
        self._aborted = False
        self._event = asyncio.Event()
        self._tasks: set[asyncio.Task[Any]] = set()

    @property
    def aborted(self) -> bool:
        return self._aborted

    def abort(self) -> None:
        if self._aborted:
            return
        self._aborted = True
        self._event.set()
        for task in list(self._tasks):
            task.cancel()

    async def wait(self) -> None:
        await self._event.wait()

    async def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro`` in its own task that :meth:`abort` cancels; raises :class:`Aborted` if it was.

        Cancelling the task calling ``run`` still cancels the work and propagates normally.
        """
        if self._aborted:
            coro.close()
            raise Aborted()
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        try:
            await asyncio.wait({task})
        except asyncio.CancelledError:
            task.cancel()
            raise
        finally:
            self._tasks.discard(task)
        if task.cancelled():
            raise Aborted()
        return task.result()

    async def sleep(self, seconds: float) -> None:
        """Sleep that ends early with :class:`Aborted` when the signal fires."""
        await self.run(asyncio.sleep(seconds))
