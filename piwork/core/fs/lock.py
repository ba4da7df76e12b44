"""A lock directory beside a file, interoperable with Pi's `proper-lockfile` usage.

The lock is ``<file>.lock`` created with ``mkdir`` (atomic). A lock older than ten seconds is
stale and removed; otherwise the attempt is retried a few times before giving up.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from piwork.core.errors import PiworkError

STALE_SECONDS = 10.0
ATTEMPTS = 10
DELAY_SECONDS = 0.02


class LockBusyError(PiworkError):
    """Another program holds the lock on a file piwork wants to change."""


@contextmanager
def locked(target: str | Path, attempts: int = ATTEMPTS, delay: float = DELAY_SECONDS) -> Iterator[None]:
    """Hold ``<target>.lock`` for the duration of the block."""
    lock = Path(f"{os.fspath(target)}.lock")
    lock.parent.mkdir(parents=True, exist_ok=True)
    for attempt in range(1, attempts + 1):
        try:
            os.mkdir(lock)
            break
        except FileExistsError:
            if _remove_if_stale(lock):
                continue
            if attempt == attempts:
                raise LockBusyError(
                    f"{target} is locked by another program (lock folder {lock}); try again in a moment"
                ) from None
            time.sleep(delay)
    else:  # pragma: no cover - the loop always breaks or raises
        raise LockBusyError(f"could not lock {target}")
    try:
        yield
    finally:
        with suppress(OSError):
            os.rmdir(lock)


def _remove_if_stale(lock: Path) -> bool:
    try:
        age = time.time() - lock.stat().st_mtime
    except OSError:
        return True  # vanished between mkdir and stat: just retry
    if age <= STALE_SECONDS:
        return False
    with suppress(OSError):
        os.rmdir(lock)
    return True
