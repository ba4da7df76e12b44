"""Checkpoints of a whole project in its shadow git repository (see :mod:`.shadow`).

Each session has its own chain of commits (``refs/piwork/sessions/<hash of the session file>``), each the
child of the session's previous checkpoint; a commit's tree is the project's files, its message the
:class:`CheckpointRecord`. Outside changes are found by comparing the files now with the tree of the
session's previous checkpoint (the files as piwork last left or saw them).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

from piwork.core.checkpoints.records import CheckpointKind, CheckpointRecord, RestoreBlocked, RestorePlan
from piwork.core.checkpoints.shadow import ShadowRepo


class GitCheckpoints:
    uses_git = True

    def __init__(
        self, folder: Path, project: Path, session_file: Path, max_file_bytes: int, max_files: int
    ) -> None:
        self.repo = ShadowRepo(folder, project, max_file_bytes, max_files)
        self.session_file = str(session_file)
        key = hashlib.sha256(self.session_file.encode()).hexdigest()[:24]
        self.ref = f"refs/piwork/sessions/{key}"

    def has_records(self) -> bool:
        """Whether this session has a checkpoint here (its ref is a loose file: refs are never packed)."""
        return (self.repo.git_dir / self.ref).is_file()

    def records(self) -> list[CheckpointRecord]:
        with self.repo.lock:
            pairs = self.repo.log(self.ref)
        return [r for r in (CheckpointRecord.parse(c, m) for c, m in pairs) if r is not None]

    def record(
        self,
        kind: CheckpointKind,
        entry_id: str | None,
        tool_call_id: str | None,
        tool_name: str | None,
        time_ms: int,
        path: str | None = None,  # the plain store's target; the whole project is taken here
        since: str | None = None,
    ) -> CheckpointRecord:
        """Snapshot the project now as a ``before`` or ``after`` checkpoint of a tool call. An ``after``
        names the files changed since ``since`` (the call's ``before``; calls run side by side in one
        batch cannot be told apart, so each names the changes of all of them), else since the previous
        checkpoint."""
        with self.repo.lock:
            return self._record_locked(kind, entry_id, tool_call_id, tool_name, time_ms, since=since)

    def _record_locked(
        self,
        kind: CheckpointKind,
        entry_id: str | None,
        tool_call_id: str | None,
        tool_name: str | None,
        time_ms: int,
        since: str | None = None,
        target: str | None = None,
        undo: str | None = None,
    ) -> CheckpointRecord:
        repo = self.repo
        tree, skipped = repo.snapshot()
        head = repo.head(self.ref)
        parent = head[0] if head else None
        base_tree = repo.tree_of(since) if since else head[1] if head else None
        changed = repo.diff(base_tree, tree).paths if base_tree is not None else ()
        record = CheckpointRecord(
            kind=kind,
            session_file=self.session_file,
            entry_id=entry_id,
            tool_call_id=tool_call_id,
            tool_name=tool_name,
            time_ms=time_ms,
            changed=changed if kind in ("after", "restored") else (),
            outside=changed if kind in ("before", "restore-point") else (),
            skipped=skipped,
            target=target,
            undo=undo,
        )
        commit = repo.commit(tree, parent, record.message())
        repo.set_ref(self.ref, commit, parent)
        return CheckpointRecord.parse(commit, record.message()) or record

    def contents(self, revision: str, paths: Sequence[str]) -> list[bytes | None]:
        with self.repo.lock:
            return self.repo.contents(revision, paths)

    # ---- restoring ---------------------------------------------------------------------------------

    def plan(self, target: CheckpointRecord) -> RestorePlan:
        with self.repo.lock:
            return self._plan_locked(target)[0]

    def _plan_locked(self, target: CheckpointRecord) -> tuple[RestorePlan, str]:
        repo = self.repo
        now, skipped_now = repo.snapshot()
        head = repo.head(self.ref)
        outside = repo.diff(head[1], now).paths if head else ()
        diff = repo.diff(now, repo.tree_of(target.commit))
        # a file left out for its size (now or then), or ignored now, is not the restore's to write or delete
        keep = set(skipped_now) | set(target.skipped)
        keep |= repo.ignored([p for p in (*diff.added, *diff.modified, *diff.removed) if p not in keep])
        plan = RestorePlan(
            target=target,
            added=tuple(sorted(p for p in diff.added if p not in keep)),
            modified=tuple(sorted(p for p in diff.modified if p not in keep)),
            removed=tuple(sorted(p for p in diff.removed if p not in keep)),
            outside=outside,
        )
        return plan, now

    def restore(self, target: CheckpointRecord, time_ms: int, force: bool = False) -> RestorePlan:
        """Put the project's files back as ``target`` holds them. The files just before are recorded first
        (a ``restore-point``), and a ``restored`` checkpoint says what was done and how to undo it."""
        with self.repo.lock:
            plan, _ = self._plan_locked(target)
            if plan.outside and not force:
                raise RestoreBlocked(plan)
            point = self._record_locked("restore-point", None, None, None, time_ms)
            self.repo.remove_files(plan.removed)
            self.repo.write_files(target.commit, [*plan.added, *plan.modified])
            self._record_locked(
                "restored",
                target.entry_id,
                target.tool_call_id,
                target.tool_name,
                time_ms,
                target=target.commit,
                undo=point.commit,
            )
            return plan
