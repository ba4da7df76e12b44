"""The window's worker pool hands freed memory back once it goes idle after heavy work, and only then."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest

from piwork.gui import workers
from piwork.gui.workers import WorkerPool


@pytest.fixture
def pool(monkeypatch: pytest.MonkeyPatch) -> Iterator[WorkerPool]:
    monkeypatch.setattr(workers, "SETTLE_S", 0.2)
    monkeypatch.setattr(workers, "HEAVY_CPU_S", 0.05)
    made = WorkerPool(4, thread_name_prefix="test-worker")
    try:
        yield made
    finally:
        made.shutdown()


def _busy(seconds: float) -> int:
    """Use ``seconds`` of this thread's CPU."""
    started, n = time.thread_time(), 0
    while time.thread_time() - started < seconds:
        n += 1
    return n


def _wait_for(condition: object, limit: float = 5.0) -> bool:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if callable(condition) and condition():
            return True
        time.sleep(0.02)
    return False


def test_memory_goes_back_once_the_pool_is_idle_after_heavy_work(pool: WorkerPool) -> None:
    assert pool.submit(_busy, 0.1).result(5) > 0
    assert pool.returned == 0  # not at once: the GUI thread drops what the results replace first
    assert _wait_for(lambda: pool.returned == 1)
    time.sleep(0.4)
    assert pool.returned == 1  # once per spell of heavy work


def test_light_work_hands_nothing_back(pool: WorkerPool) -> None:
    for _ in range(5):
        pool.submit(_busy, 0.001).result(5)
    time.sleep(0.5)
    assert pool.returned == 0


def test_work_that_comes_while_it_waits_puts_it_off_until_that_work_is_done(pool: WorkerPool) -> None:
    pool.submit(_busy, 0.1).result(5)
    release = threading.Event()
    waiting = pool.submit(release.wait, 5)  # arrives before the pool has been idle long enough
    time.sleep(0.5)
    assert pool.returned == 0  # still working: nothing handed back meanwhile
    release.set()
    waiting.result(5)
    assert _wait_for(lambda: pool.returned == 1)


def test_a_job_that_fails_counts_as_done(pool: WorkerPool) -> None:
    def fail() -> None:
        _busy(0.1)
        raise ValueError("bad input")

    with pytest.raises(ValueError):
        pool.submit(fail).result(5)
    assert _wait_for(lambda: pool.returned == 1)
