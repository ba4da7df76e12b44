"""Handing the C allocator's free space back to the system (glibc; elsewhere the calls do nothing)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from piwork.core import heap

glibc = pytest.mark.skipif(
    not sys.platform.startswith("linux") or heap._glibc() is None, reason="glibc's allocator only"
)


def _resident_mb() -> float:
    return int(Path("/proc/self/statm").read_text().split()[1]) * 4096 / 2**20


@glibc
def test_space_freed_between_kept_blocks_goes_back_to_the_system() -> None:
    # 2 KiB texts (the C allocator's, not Python's small-object pools), one in four kept: what is freed sits
    # between kept blocks, where glibc keeps it
    texts = [bytes(2048) + n.to_bytes(4, "little") for n in range(80_000)]
    kept = texts[::4]
    del texts
    before = _resident_mb()
    assert heap.return_free_memory()
    assert _resident_mb() < before - 30
    assert len(kept) == 20_000


@glibc
def test_the_heaps_can_be_limited() -> None:
    assert heap.limit_heaps()


def test_without_glibc_both_calls_do_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(heap, "_looked", True)
    monkeypatch.setattr(heap, "_libc", None)
    assert heap.return_free_memory() is False
    assert heap.limit_heaps() is False
