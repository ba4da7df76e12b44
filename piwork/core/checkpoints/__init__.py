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
  ``NothingToUndo``.
- ``project_folder`` (where a project's checkpoints live), ``git_available``, ``DEFAULT_MAX_FILE_MB``.

What is stored, where and why: docs/architecture.md, "Checkpoints". This package imports no git-related
code until a store is opened.
"""

from piwork.core.checkpoints.api import (
    DEFAULT_MAX_FILE_MB,
    NO_GIT_NOTICE,
    CallCheckpoint,
    NothingToUndo,
    SessionCheckpoints,
    git_available,
    project_folder,
)
from piwork.core.checkpoints.hook import Checkpointer
from piwork.core.checkpoints.points import NoCheckpoint, checkpoint_for
from piwork.core.checkpoints.records import CheckpointKind, CheckpointRecord, RestoreBlocked, RestorePlan

__all__ = [
    "DEFAULT_MAX_FILE_MB",
    "NO_GIT_NOTICE",
    "CallCheckpoint",
    "CheckpointKind",
    "CheckpointRecord",
    "Checkpointer",
    "NoCheckpoint",
    "NothingToUndo",
    "RestoreBlocked",
    "RestorePlan",
    "SessionCheckpoints",
    "checkpoint_for",
    "git_available",
    "project_folder",
]
