"""Checkpoints of a project's files, taken before each tool call that can change them, and restore.

Public API:

- ``Checkpointer``: a session's before/after tool call steps (``AgentSessionOptions.checkpointer``); it
  opens the store at the first file-changing call and says ``NO_GIT_NOTICE`` once when git is missing.
- ``SessionCheckpoints``: one session's checkpoints in one project: ``records()``, ``calls()`` (rows of
  ``CallCheckpoint``), ``plan_restore`` (a dry run), ``restore``, ``plan_undo``, ``undo_restore``.
  Each does file and process work: call it off the event loop.
- ``CheckpointRecord`` (of a ``CheckpointKind``) and ``RestorePlan``: what is recorded and what a restore
  changes. ``checkpoint_for`` picks the checkpoint of an entry (the rule: :mod:`.points`).
- Errors: ``RestoreBlocked`` (files changed outside piwork; pass ``force``), ``NoCheckpoint``,
  ``NothingToUndo``, ``TooManyFiles`` (a project too large for its first snapshot: over ``max_files``,
  by default ``DEFAULT_MAX_FILES``, or too slow to list; the checkpointer then keeps edit/write targets).
- Files Touched and the branch comparison with what the checkpoints saw (a command's files included):
  ``session_checkpoints`` (a saved session's checkpoints, nothing created), ``checkpointed_path_activity``,
  ``checkpointed_comparison``, ``with_checkpoints`` (adds them to an activity), ``touch_diff`` (the diff of
  a touch they added).
- ``project_folder`` (where a project's checkpoints live), ``git_available``, ``DEFAULT_MAX_FILE_MB``.
- Review (:mod:`.changes`, off the event loop): ``changes_since`` gives a ``ChangeSet``, the files changed
  since an entry (each a ``FileChange`` with its ``Hunk`` rows of ``DiffLine``, or a note saying why it is
  not compared; ``MAX_DIFF_BYTES`` per side); ``revert_hunk`` and ``revert_file`` put back what the entry's
  checkpoint holds, refusing with ``ChangedSinceShown`` when the file moved on since. ``branch_start`` is
  where the current branch's work begins. Reviewed marks (:mod:`.review`) are state-only session entries
  of ``REVIEW_CUSTOM_TYPE``: ``record_review`` appends one, ``reviewed_keys`` reads them all.

What is stored, where and why: docs/architecture.md, "Checkpoints". This package imports no git-related
code until a store is opened.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from piwork.core.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from piwork.core.checkpoints.api import (
        DEFAULT_MAX_FILE_MB,
        DEFAULT_MAX_FILES,
        NO_GIT_NOTICE,
        CallCheckpoint,
        NothingToUndo,
        SessionCheckpoints,
        TooManyFiles,
        git_available,
        project_folder,
    )
    from piwork.core.checkpoints.changes import (
        MAX_DIFF_BYTES,
        ChangedSinceShown,
        ChangeSet,
        DiffLine,
        FileChange,
        Hunk,
        changes_since,
        revert_file,
        revert_hunk,
    )
    from piwork.core.checkpoints.hook import Checkpointer
    from piwork.core.checkpoints.points import NoCheckpoint, checkpoint_for
    from piwork.core.checkpoints.records import CheckpointKind, CheckpointRecord, RestoreBlocked, RestorePlan
    from piwork.core.checkpoints.review import REVIEW_CUSTOM_TYPE, branch_start, record_review, reviewed_keys
    from piwork.core.checkpoints.touches import (
        checkpointed_comparison,
        checkpointed_path_activity,
        session_checkpoints,
        touch_diff,
        with_checkpoints,
    )

__all__ = [
    "DEFAULT_MAX_FILES",
    "DEFAULT_MAX_FILE_MB",
    "MAX_DIFF_BYTES",
    "NO_GIT_NOTICE",
    "REVIEW_CUSTOM_TYPE",
    "CallCheckpoint",
    "ChangeSet",
    "ChangedSinceShown",
    "CheckpointKind",
    "CheckpointRecord",
    "Checkpointer",
    "DiffLine",
    "FileChange",
    "Hunk",
    "NoCheckpoint",
    "NothingToUndo",
    "RestoreBlocked",
    "RestorePlan",
    "SessionCheckpoints",
    "TooManyFiles",
    "branch_start",
    "changes_since",
    "checkpoint_for",
    "checkpointed_comparison",
    "checkpointed_path_activity",
    "git_available",
    "project_folder",
    "record_review",
    "revert_file",
    "revert_hunk",
    "reviewed_keys",
    "session_checkpoints",
    "touch_diff",
    "with_checkpoints",
]

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(
        __name__,
        {
            "DEFAULT_MAX_FILE_MB": "piwork.core.checkpoints.api",
            "DEFAULT_MAX_FILES": "piwork.core.checkpoints.api",
            "NO_GIT_NOTICE": "piwork.core.checkpoints.api",
            "CallCheckpoint": "piwork.core.checkpoints.api",
            "NothingToUndo": "piwork.core.checkpoints.api",
            "SessionCheckpoints": "piwork.core.checkpoints.api",
            "TooManyFiles": "piwork.core.checkpoints.api",
            "git_available": "piwork.core.checkpoints.api",
            "project_folder": "piwork.core.checkpoints.api",
            "MAX_DIFF_BYTES": "piwork.core.checkpoints.changes",
            "ChangedSinceShown": "piwork.core.checkpoints.changes",
            "ChangeSet": "piwork.core.checkpoints.changes",
            "DiffLine": "piwork.core.checkpoints.changes",
            "FileChange": "piwork.core.checkpoints.changes",
            "Hunk": "piwork.core.checkpoints.changes",
            "changes_since": "piwork.core.checkpoints.changes",
            "revert_file": "piwork.core.checkpoints.changes",
            "revert_hunk": "piwork.core.checkpoints.changes",
            "Checkpointer": "piwork.core.checkpoints.hook",
            "NoCheckpoint": "piwork.core.checkpoints.points",
            "checkpoint_for": "piwork.core.checkpoints.points",
            "CheckpointKind": "piwork.core.checkpoints.records",
            "CheckpointRecord": "piwork.core.checkpoints.records",
            "RestoreBlocked": "piwork.core.checkpoints.records",
            "RestorePlan": "piwork.core.checkpoints.records",
            "REVIEW_CUSTOM_TYPE": "piwork.core.checkpoints.review",
            "branch_start": "piwork.core.checkpoints.review",
            "record_review": "piwork.core.checkpoints.review",
            "reviewed_keys": "piwork.core.checkpoints.review",
            "checkpointed_comparison": "piwork.core.checkpoints.touches",
            "checkpointed_path_activity": "piwork.core.checkpoints.touches",
            "session_checkpoints": "piwork.core.checkpoints.touches",
            "touch_diff": "piwork.core.checkpoints.touches",
            "with_checkpoints": "piwork.core.checkpoints.touches",
        },
    )
