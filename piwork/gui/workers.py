"""The window's worker threads: the executor its event loop hands blocking work to.

After heavy work (a long session's chat rows, outline, X-ray and counts take seconds of CPU and free as much as
they keep), the C allocator holds on to the space freed between what was kept: a third of the window's resident
memory after a 100k-entry session opened. Once the workers have been idle for ``SETTLE_S`` after such a job, and
the GUI thread has had that moment to drop the results the new ones replace, that space is handed back
(``piwork.core.heap``, run in a short-lived thread of its own: it does not hold the interpreter's lock). The
threads share two of the allocator's heaps (set with the first job), so free space in one serves them all.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")

HEAVY_CPU_S = 0.25  # a job that used this much CPU counts as heavy
SETTLE_S = 2.0  # idle this long after heavy work before memory is handed back


class WorkerPool(ThreadPoolExecutor):
    """A thread pool that returns freed memory to the system once it goes idle after heavy work."""

    def __init__(self, max_workers: int, thread_name_prefix: str = "") -> None:
        super().__init__(max_workers, thread_name_prefix=thread_name_prefix)
        self._lock = threading.Lock()
        self._running = 0
        self._heavy = False
        self._timer: threading.Timer | None = None
        self.returned = 0  # times memory was handed back (for tests and diagnostics)
        self._heaps_limited = False

    def _limit_heaps(self) -> None:
        from piwork.core.heap import limit_heaps  # ctypes: loaded with the first job, after the first frame

        with self._lock:
            if not self._heaps_limited:
                self._heaps_limited = True
                limit_heaps()

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> Future[T]:
        with self._lock:
            self._running += 1
            if self._timer is not None:  # still owed: once this work is done too
                self._timer.cancel()
                self._timer = None
                self._heavy = True
        try:
            return super().submit(self._measured, fn, args, kwargs)
        except BaseException:
            with self._lock:
                self._running -= 1
            raise

    def _measured(self, fn: Callable[..., T], args: tuple[Any, ...], kwargs: dict[str, Any]) -> T:
        if not self._heaps_limited:  # the first job: before a third thread has allocated anything
            self._limit_heaps()
        started = time.thread_time()
        try:
            return fn(*args, **kwargs)
        finally:
            heavy = time.thread_time() - started >= HEAVY_CPU_S
            with self._lock:
                self._running -= 1
                self._heavy = self._heavy or heavy
                if self._running == 0 and self._heavy:
                    self._heavy = False
                    self._timer = threading.Timer(SETTLE_S, self._return_memory)
                    self._timer.daemon = True
                    self._timer.start()

    def _return_memory(self) -> None:
        from piwork.core.heap import return_free_memory  # ctypes: loaded the first time there is work

        with self._lock:
            if self._running or self._timer is not threading.current_thread():
                return  # work came meanwhile: after it, then
            self._timer = None
        return_free_memory()
        self.returned += 1

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
        super().shutdown(wait, cancel_futures=cancel_futures)
