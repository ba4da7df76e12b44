"""Abort signal for one run: a flag, an awaitable event, and the tasks to cancel when it fires."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
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

    async def run(self, coro: Awaitable[T]) -> T:
        """Run ``coro`` in its own task that :meth:`abort` cancels; raises :class:`Aborted` if it was.

        Cancelling the task calling ``run`` still cancels the work and propagates normally.
        """
        if self._aborted:
            if asyncio.iscoroutine(coro):
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

    @property
    def event(self) -> asyncio.Event:
        """Set when the signal fires (what providers take as ``StreamOptions.abort``)."""
        return self._event

    async def run_cooperative(self, coro: Awaitable[T], grace: float) -> T:
        """Run ``coro``, which watches :attr:`event` itself and ends on its own when aborted.

        After an abort it gets ``grace`` seconds to finish before it is cancelled (then :class:`Aborted`).
        """
        task = asyncio.ensure_future(coro)
        waiter = asyncio.ensure_future(self._event.wait())
        try:
            await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
            if not task.done():
                await asyncio.wait({task}, timeout=grace)
            if not task.done():
                task.cancel()
                await asyncio.wait({task})
        except asyncio.CancelledError:
            task.cancel()
            raise
        finally:
            waiter.cancel()
        if task.cancelled():
            raise Aborted()
        return task.result()

    async def sleep(self, seconds: float) -> None:
        """Sleep that ends early with :class:`Aborted` when the signal fires."""
        await self.run(asyncio.sleep(seconds))
