"""httpx, imported without its command-line client.

The ``httpx`` package imports its own CLI (``httpx._main``: click, rich and pygments, some 80 modules and tens
of milliseconds) whenever those libraries are installed. piwork never runs that CLI, so the first import of
httpx goes through here and finds the CLI module unimportable; httpx then keeps its stand-in ``main``. The
block is lifted right after, so an explicit ``import httpx._main`` still works.
"""

from __future__ import annotations

import sys

if "httpx" not in sys.modules:
    sys.modules["httpx._main"] = None  # type: ignore[assignment]  # None there: importing it raises ImportError
    try:
        import httpx
    finally:
        if sys.modules.get("httpx._main") is None:
            del sys.modules["httpx._main"]

import httpx

__all__ = ["httpx"]  # the engine's modules import httpx from here
