"""The process-wide pause of the cycle collector: counted across threads, frozen results, state restored."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator

import pytest

from piwork.core import collector
from piwork.core.collector import paused_gc, pauses_in_force


@pytest.fixture(autouse=True)
def collector_on() -> Iterator[None]:
    was = gc.isenabled()
    gc.enable()
    try:
        yield
    finally:
        collector.release_kept()
        (gc.enable if was else gc.disable)()


def test_collection_comes_back_only_when_the_last_of_two_threads_pauses_ends() -> None:
    first_in, second_in, first_out, second_may_end = (threading.Event() for _ in range(4))
    seen: dict[str, bool] = {}

    def first() -> None:
        with paused_gc():
            first_in.set()
            second_in.wait(5)
        first_out.set()

    def second() -> None:
        first_in.wait(5)
        with paused_gc():
            second_in.set()
            first_out.wait(5)
            seen["while the second still builds"] = gc.isenabled()
            second_may_end.wait(5)

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for thread in threads:
        thread.start()
    first_out.wait(5)
    second_may_end.set()
    for thread in threads:
        thread.join(5)
    assert seen == {"while the second still builds": False}
    assert gc.isenabled()
    assert pauses_in_force() == 0


def test_a_pause_begun_with_collection_off_leaves_it_off() -> None:
    gc.disable()
    with paused_gc():
        pass
    assert not gc.isenabled()


def test_a_kept_build_is_frozen_and_released(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(collector, "FREEZE_AFTER", 1_000)
    before = gc.get_freeze_count()
    with paused_gc(keep=True):
        built = [{"n": n} for n in range(5_000)]
    assert gc.get_freeze_count() >= before + len(built)
    assert gc.isenabled()
    collector.release_kept()
    assert gc.get_freeze_count() == 0


def test_a_small_or_unkept_build_freezes_nothing() -> None:
    with paused_gc(keep=True):
        small = [{"n": n} for n in range(10)]
    with paused_gc():
        large = [{"n": n} for n in range(300_000)]
    assert gc.get_freeze_count() == 0
    assert len(small) + len(large) == 300_010


def test_an_error_in_the_block_still_restores_collection() -> None:
    with pytest.raises(RuntimeError), paused_gc(keep=True):
        raise RuntimeError("build failed")
    assert gc.isenabled()
    assert pauses_in_force() == 0
