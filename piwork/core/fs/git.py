"""Where a git repository starts, found from the files alone (no ``git`` process)."""

from __future__ import annotations

import os


def git_root(start: str) -> str | None:
    """The nearest folder at or above ``start`` containing ``.git``."""
    current = os.path.abspath(start)
    while True:
        if os.path.exists(os.path.join(current, ".git")):
            return current
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent
