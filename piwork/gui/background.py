"""Background work for the window, in one style: asyncio on the qasync loop.

The GUI thread only lays out, paints and reacts. Anything that may wait or compute for long — reading,
indexing or fsyncing a file, parsing a session's JSON, decoding base64, scaling an image, asking the
keyring — runs in the loop's default executor through ``await asyncio.to_thread(work, ...)`` inside a task
started with :meth:`BackgroundTasks.spawn`. The result comes back to the coroutine on the GUI thread, where
widgets may be touched; a worker thread never touches a widget.

Why asyncio and not QThread, QThreadPool or bare threads: the engine is asyncio already (the agent session,
the providers), so the window awaits engine calls and file work the same way; an awaited result needs no
cross-thread signal, a failure arrives as an exception where the work was asked for, stopping is
``task.cancel()``, and tests advance it with ``qtbot.waitUntil``.

Work where only the latest request counts (a search typed letter by letter, a listing, a pass over a log
file) runs through :class:`LatestWins`: the worker gets a :class:`Request`, asks it whether it is still
wanted between pieces (so a superseded one stops early) and hands each piece back through it
(``loop.call_soon_threadsafe``), and on the GUI thread a piece of a superseded request is dropped, so
nothing reaches a closed or newer view.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


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


class Request:
    """One request of a :class:`LatestWins`, as its worker sees it."""

    def __init__(self, number: int, loop: asyncio.AbstractEventLoop) -> None:
        self.number = number  # counts the requests of its LatestWins, from 1
        self.stopped = threading.Event()  # set once a newer request (or a cancel) supersedes this one
        self._loop = loop

    def superseded(self) -> bool:
        """Whether a newer request (or a cancel) replaced this one; read from any thread."""
        return self.stopped.is_set()

    def hand_over(self, deliver: Callable[..., object], *args: Any) -> None:
        """From the worker: ``deliver(*args)`` on the GUI thread, unless superseded by then."""
        self._loop.call_soon_threadsafe(self.deliver, deliver, *args)

    def deliver(self, deliver: Callable[..., object], *args: Any) -> None:
        """On the GUI thread: ``deliver(*args)`` while this request is still the one wanted."""
        if not self.stopped.is_set():
            deliver(*args)


class LatestWins:
    """Background work of one kind where only the latest request counts.

    ``start(work, on_done)`` supersedes the request still running and runs ``work(request)`` in a worker
    thread; ``on_done(result)`` (or ``on_failed(error)`` for one of ``failures``) follows on the GUI thread
    only if no newer request (nor ``cancel``, its owner closing) came meanwhile. A superseded worker is not
    interrupted: it stops at its next ``request.superseded()`` check, and ``running`` stays true until it
    has."""

    def __init__(self) -> None:
        self._current: Request | None = None
        self._count = 0
        self._tasks = BackgroundTasks()

    @property
    def running(self) -> bool:
        """A worker is still at it (a superseded one until its next check)."""
        return self._tasks.running

    @property
    def current(self) -> Request | None:
        return self._current

    def start(
        self,
        work: Callable[[Request], T],
        on_done: Callable[[T], object],
        on_failed: Callable[[Exception], object] | None = None,
        failures: tuple[type[Exception], ...] = (OSError,),
    ) -> Request:
        self.cancel()
        self._count += 1
        request = Request(self._count, asyncio.get_event_loop())
        self._current = request
        self._tasks.spawn(self._run(request, work, on_done, on_failed, failures))
        return request

    def cancel(self) -> None:
        """Supersede the running request without a new one: nothing more of it is delivered."""
        if self._current is not None:
            self._current.stopped.set()
            self._current = None

    async def _run(
        self,
        request: Request,
        work: Callable[[Request], T],
        on_done: Callable[[T], object],
        on_failed: Callable[[Exception], object] | None,
        failures: tuple[type[Exception], ...],
    ) -> None:
        try:
            result = await asyncio.to_thread(work, request)
        except failures as exc:
            if on_failed is not None:
                request.deliver(on_failed, exc)
            return
        request.deliver(on_done, result)
