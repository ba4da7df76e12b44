"""The engine's ground floor for files: the lock beside a file, error texts, the git root, git worktrees.

Public API:
- ``locked`` (a context manager holding ``<file>.lock``), ``LockBusyError`` when another program holds it.
- ``describe_os_error``, ``error_code``: an ``OSError`` in the form the model sees from Pi.
- ``git_root``: the nearest folder at or above a path that holds ``.git``.
- Git worktrees (``git_worktrees``): ``worktree_support``, ``create_worktree``, ``worktree_of``,
  ``changes_against_base``, ``uncommitted_changes``, ``remove_worktree``, ``list_worktrees``, ``slug``,
  ``branch_name_problem``, ``current_base``, ``worktree_path``; ``WorktreeError`` when git refuses; ``WorktreeSupport``, ``WorktreeInfo``,
  ``ChangedFile`` (what they answer), ``LOCATIONS`` (where new worktrees may go).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from piwork.core.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from piwork.core.fs.errors import describe_os_error, error_code
    from piwork.core.fs.git import git_root
    from piwork.core.fs.git_worktrees import (
        LOCATIONS,
        ChangedFile,
        WorktreeError,
        WorktreeInfo,
        WorktreeSupport,
        branch_name_problem,
        changes_against_base,
        create_worktree,
        current_base,
        list_worktrees,
        remove_worktree,
        slug,
        uncommitted_changes,
        worktree_of,
        worktree_path,
        worktree_support,
    )
    from piwork.core.fs.lock import LockBusyError, locked

__all__ = [
    "LOCATIONS",
    "ChangedFile",
    "LockBusyError",
    "WorktreeError",
    "WorktreeInfo",
    "WorktreeSupport",
    "branch_name_problem",
    "changes_against_base",
    "create_worktree",
    "current_base",
    "describe_os_error",
    "error_code",
    "git_root",
    "list_worktrees",
    "locked",
    "remove_worktree",
    "slug",
    "uncommitted_changes",
    "worktree_of",
    "worktree_path",
    "worktree_support",
]

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(
        __name__,
        {
            "describe_os_error": "piwork.core.fs.errors",
            "error_code": "piwork.core.fs.errors",
            "git_root": "piwork.core.fs.git",
            "LOCATIONS": "piwork.core.fs.git_worktrees",
            "ChangedFile": "piwork.core.fs.git_worktrees",
            "WorktreeError": "piwork.core.fs.git_worktrees",
            "WorktreeInfo": "piwork.core.fs.git_worktrees",
            "WorktreeSupport": "piwork.core.fs.git_worktrees",
            "branch_name_problem": "piwork.core.fs.git_worktrees",
            "changes_against_base": "piwork.core.fs.git_worktrees",
            "create_worktree": "piwork.core.fs.git_worktrees",
            "current_base": "piwork.core.fs.git_worktrees",
            "list_worktrees": "piwork.core.fs.git_worktrees",
            "remove_worktree": "piwork.core.fs.git_worktrees",
            "slug": "piwork.core.fs.git_worktrees",
            "uncommitted_changes": "piwork.core.fs.git_worktrees",
            "worktree_of": "piwork.core.fs.git_worktrees",
            "worktree_path": "piwork.core.fs.git_worktrees",
            "worktree_support": "piwork.core.fs.git_worktrees",
            "LockBusyError": "piwork.core.fs.lock",
            "locked": "piwork.core.fs.lock",
        },
    )
