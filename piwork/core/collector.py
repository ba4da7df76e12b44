"""One pause of the cycle collector for the whole process, however many threads ask for it.

Building many small objects (parsed entries, a context, a window's rows) costs more in collection passes than
in the building: each full pass walks every object alive, and a large session keeps millions of them. So
builds pause the collector, and a build whose result lives on (``keep``) moves everything alive to the
collector's permanent generation (``gc.freeze``) so that later passes leave it out. Frozen objects are still
freed as usual when dropped (reference counting); only cycles among them wait for ``release_kept``.

``gc.disable`` is process-wide: with two builds in two threads, the first to end would switch collection
back on under the other, and the other's objects would be walked again and again while it builds (a window
opening a long session builds its chat, outline and X-ray at the same time). The pauses are therefore
counted: collection comes back when the last one ends, and only if it was on when the first began.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

# A build that leaves this many new container objects behind is a large session's index.
FREEZE_AFTER = 250_000

_lock = threading.Lock()
_pauses = 0  # pauses in force, in any thread
_resume = False  # whether collection was on when the first of them began
_froze = False  # whether this process moved objects to the collector's permanent generation


@contextmanager
def paused_gc(keep: bool = False) -> Iterator[None]:
    """No cycle collections while the block runs (nor while another thread's pause lasts).

    ``keep``: what the block builds is kept (an index, a context, a view's rows): once it has made at least
    ``FREEZE_AFTER`` new container objects everything alive is frozen, so no later full pass, nor the one at
    interpreter exit, walks it.
    """
    global _pauses, _resume
    with _lock:
        if _pauses == 0:
            _resume = gc.isenabled()
            gc.disable()
        _pauses += 1
    try:
        yield
    finally:
        with _lock:
            if keep and gc.get_count()[0] >= FREEZE_AFTER:
                _freeze()
            _pauses -= 1
            if _pauses == 0 and _resume:
                gc.enable()


def _freeze() -> None:
    global _froze
    gc.freeze()
    _froze = True


def pauses_in_force() -> int:
    """How many pauses are running now, in any thread (for tests and diagnostics)."""
    return _pauses


def release_kept() -> None:
    """Hand frozen objects back to the cycle collector (on closing a session, so that cycles among objects
    that were alive when it opened are collected again)."""
    global _froze
    with _lock:
        if _froze:
            gc.unfreeze()
            _froze = False
