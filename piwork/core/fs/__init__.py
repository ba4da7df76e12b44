"""The engine's ground floor for files: the lock beside a file, error texts, the git root.

Public API:
- ``locked`` (a context manager holding ``<file>.lock``), ``LockBusyError`` when another program holds it.
- ``describe_os_error``, ``error_code``: an ``OSError`` in the form the model sees from Pi.
- ``git_root``: the nearest folder at or above a path that holds ``.git``.
"""

from __future__ import annotations

from piwork.core.fs.errors import describe_os_error, error_code
from piwork.core.fs.git import git_root
from piwork.core.fs.lock import LockBusyError, locked

__all__ = ["LockBusyError", "describe_os_error", "error_code", "git_root", "locked"]
