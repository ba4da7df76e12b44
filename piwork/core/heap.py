"""Giving memory back to the system after large builds (glibc's allocator; a no-op elsewhere).

Python hands blocks over 512 bytes (message texts, the tables of large dicts and lists) to the C allocator. When
a build frees many of them between blocks that stay (a window's counts and rows between a long session's
messages), glibc keeps the free space inside its heaps instead of returning it: after a 100k-entry session's
views are built, about a third of the window's resident memory was free space of this kind. ``malloc_trim``
returns the free pages of every heap; it runs in the calling thread without holding the interpreter's lock.

Each thread that allocates may also get a heap of its own (up to eight per core), and free space in one cannot
serve another: ``limit_heaps`` keeps them to two, before the process starts its threads.
"""

from __future__ import annotations

import ctypes
import sys
import threading
from typing import Any

_M_ARENA_MAX = -8  # mallopt's parameter for the number of heaps (malloc.h)
_MAX_HEAPS = 2

_lock = threading.Lock()
_libc: Any = None
_looked = False


def _glibc() -> Any:
    """The C library when it is glibc (it has ``malloc_trim``), else None."""
    global _libc, _looked
    with _lock:
        if not _looked:
            _looked = True
            if sys.platform.startswith("linux"):
                try:
                    lib = ctypes.CDLL(None)  # the process's own symbols: libc is among them
                except OSError:
                    lib = None
                if lib is not None and hasattr(lib, "malloc_trim") and hasattr(lib, "mallopt"):
                    lib.malloc_trim.argtypes = [ctypes.c_size_t]
                    lib.mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
                    _libc = lib
        return _libc


def limit_heaps() -> bool:
    """Keep the C allocator to two heaps (call it before threads start); whether it applied."""
    lib = _glibc()
    return bool(lib is not None and lib.mallopt(_M_ARENA_MAX, _MAX_HEAPS))


def return_free_memory() -> bool:
    """Return the C allocator's free pages to the system; whether any were returned."""
    lib = _glibc()
    return bool(lib is not None and lib.malloc_trim(0))
