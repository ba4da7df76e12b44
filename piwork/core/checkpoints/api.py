"""The checkpoints of one session in one project: list them, plan a restore, restore, undo a restore.

:func:`open_checkpoints` picks the store: the project's shadow git repository, or without git the plain
store of edit/write targets. Both live under ``<agent dir>/checkpoints/<hash of the project's real
path>/``. Every method does file and process work: call it off the event loop (``asyncio.to_thread``).
Git-related modules are imported when a store is opened, not when this package is.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from piwork.core.checkpoints.points import checkpoint_for
from piwork.core.checkpoints.records import CheckpointKind, CheckpointRecord, RestorePlan
from piwork.core.errors import PiworkError
from piwork.core.session.tree import SessionTree

DEFAULT_MAX_FILE_MB = 10.0
DEFAULT_MAX_FILES = 100_000  # a first snapshot of a larger project is skipped (``TooManyFiles``)
NO_GIT_NOTICE = (
    "git was not found: checkpoints keep only the files that edit and write change "
    "(changes made by commands cannot be restored)."
)


class NothingToUndo(PiworkError):
    """No restore of this session is left to undo."""


class TooManyFiles(PiworkError):
    """The project is too large for a first snapshot: over the file limit, or listing it took too long."""

    def __init__(self, max_files: int, seconds: float | None = None) -> None:
        why = (
            f"the first snapshot of the project's files took more than {seconds:g} s"
            if seconds is not None
            else f"the project has more than {max_files:,} files (piwork.checkpoints.maxFiles)"
        )
        super().__init__(
            f"Checkpoints skipped: {why}; only the files edit and write change are kept, so changes made "
            "by commands cannot be restored."
        )
        self.max_files = max_files
        self.seconds = seconds


class CheckpointStore(Protocol):
    uses_git: bool

    def records(self) -> list[CheckpointRecord]: ...

    def record(
        self,
        kind: CheckpointKind,
        entry_id: str | None,
        tool_call_id: str | None,
        tool_name: str | None,
        time_ms: int,
        path: str | None = None,
        since: str | None = None,
    ) -> CheckpointRecord | None: ...

    def plan(self, target: CheckpointRecord) -> RestorePlan: ...

    def contents(self, revision: str, paths: Sequence[str]) -> list[bytes | None]: ...

    def restore(self, target: CheckpointRecord, time_ms: int, force: bool = False) -> RestorePlan: ...


@dataclass(frozen=True)
class CallCheckpoint:
    """One file-changing tool call as ``piwork checkpoints`` lists it."""

    entry_id: str | None
    tool_call_id: str | None
    tool_name: str | None
    time_ms: int
    changed: tuple[str, ...]  # what the call changed (``after`` minus ``before``)
    outside: tuple[str, ...]  # changed outside piwork before the call
    skipped: tuple[str, ...]  # left out for their size
    commit: str  # the ``before`` checkpoint
    after: str | None = None  # the ``after`` checkpoint (None: the call left none, or no git)

    def to_json(self) -> dict[str, Any]:
        return {
            "entryId": self.entry_id,
            "toolCallId": self.tool_call_id,
            "tool": self.tool_name,
            "timeMs": self.time_ms,
            "changed": list(self.changed),
            "outside": list(self.outside),
            "skipped": list(self.skipped),
            "checkpoint": self.commit,
            "after": self.after,
        }


def project_folder(agent_dir: Path, project: str | os.PathLike[str]) -> Path:
    """Where a project's checkpoints live: keyed by the project's canonical real path."""
    real = os.path.realpath(project)
    return agent_dir / "checkpoints" / hashlib.sha256(real.encode()).hexdigest()[:24]


def git_available() -> bool:
    return shutil.which("git") is not None


def _has_plain_records(folder: Path, session_file: Path) -> bool:
    """Whether the plain store's journal has a line of this session (read only when it exists)."""
    journal = folder / "plain" / "records.jsonl"
    try:
        with journal.open("rb") as lines:
            mark = json.dumps(str(session_file)).encode()
            return any(mark in line for line in lines)
    except OSError:
        return False


class SessionCheckpoints:
    """The checkpoints a session file has in a project (``store`` does the work)."""

    def __init__(
        self,
        project: str | os.PathLike[str],
        session_file: str | os.PathLike[str],
        agent_dir: Path,
        max_file_mb: float = DEFAULT_MAX_FILE_MB,
        use_git: bool | None = None,
        max_files: int = DEFAULT_MAX_FILES,
    ) -> None:
        """``use_git``: None picks git when it is installed, unless the session's checkpoints are in the
        plain store (kept there because git was missing or the project too large) and none in git."""
        self.project = Path(os.path.realpath(project))
        self.session_file = Path(os.path.realpath(session_file))
        folder = project_folder(agent_dir, self.project)
        limit = int(max_file_mb * 1024 * 1024)
        self.store: CheckpointStore
        git = git_available() if use_git is None else use_git
        if git:
            from piwork.core.checkpoints.git_store import GitCheckpoints

            store = GitCheckpoints(folder, self.project, self.session_file, limit, max_files)
            git = (
                use_git is not None
                or store.has_records()
                or not _has_plain_records(folder, self.session_file)
            )
            self.store = store
        if not git:
            from piwork.core.checkpoints.plain_store import PlainCheckpoints

            self.store = PlainCheckpoints(folder, self.project, self.session_file, limit)

    @property
    def uses_git(self) -> bool:
        return self.store.uses_git

    def records(self) -> list[CheckpointRecord]:
        """Every checkpoint of the session, oldest first."""
        return self.store.records()

    def calls(self) -> list[CallCheckpoint]:
        """The file-changing calls recorded, oldest first, each with what it changed."""
        records = self.store.records()
        after = {r.tool_call_id: r for r in records if r.kind == "after"}
        rows = []
        for r in records:
            if r.kind != "before":
                continue
            done = after.get(r.tool_call_id)
            changed = done.changed if done is not None else r.changed
            skipped = tuple(sorted({*r.skipped, *(done.skipped if done else ())}))
            rows.append(
                CallCheckpoint(
                    r.entry_id,
                    r.tool_call_id,
                    r.tool_name,
                    r.time_ms,
                    changed,
                    r.outside,
                    skipped,
                    r.commit,
                    done.commit if done is not None else None,
                )
            )
        return rows

    def target(self, tree: SessionTree, entry_id: str) -> CheckpointRecord:
        """The checkpoint holding the files as they were at ``entry_id`` (see :mod:`.points`)."""
        return checkpoint_for(tree, entry_id, self.store.records())

    def plan_restore(self, tree: SessionTree, entry_id: str) -> RestorePlan:
        """A dry run: the files a restore to ``entry_id`` would add, modify and remove, and the files
        changed outside piwork it would overwrite."""
        return self.store.plan(self.target(tree, entry_id))

    def restore(self, tree: SessionTree, entry_id: str, force: bool = False) -> RestorePlan:
        """Put the project's files back as they were at ``entry_id``. Raises ``RestoreBlocked`` (nothing
        changed) when files changed outside piwork would be overwritten, unless ``force``."""
        return self.store.restore(self.target(tree, entry_id), _now_ms(), force)

    def contents(self, revision: str, paths: Sequence[str]) -> list[bytes | None]:
        """The bytes of each file (relative to the project) in a checkpoint, None where it holds none.
        ``revision``: a checkpoint's commit, or ``<commit>^`` for the one before it."""
        return self.store.contents(revision, paths)

    def last_restore(self) -> CheckpointRecord | None:
        return next((r for r in reversed(self.store.records()) if r.kind == "restored"), None)

    def undo_target(self) -> CheckpointRecord:
        last = self.last_restore()
        point = None
        if last is not None and last.undo is not None:
            point = next((r for r in self.store.records() if r.commit == last.undo), None)
        if point is None:
            raise NothingToUndo("No restore of this session to undo")
        return point

    def plan_undo(self) -> RestorePlan:
        return self.store.plan(self.undo_target())

    def undo_restore(self, force: bool = False) -> RestorePlan:
        """Bring back the files the last restore replaced (itself a restore: undoing again redoes it)."""
        return self.store.restore(self.undo_target(), _now_ms(), force)


def _now_ms() -> int:
    return int(time.time() * 1000)
