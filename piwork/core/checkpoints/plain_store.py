"""Checkpoints without git: the prior bytes of each edit/write target, in a plain store.

Used when no ``git`` is found. Before an ``edit`` or ``write`` call, the target file's bytes (or the fact
that it did not exist) are copied to ``<folder>/plain/blobs/<sha256>`` and a line is added to
``<folder>/plain/records.jsonl``. Restoring to a checkpoint puts back, for every file a later recorded
call touched, the bytes its earliest such record kept; a file that did not exist then is deleted. Files
changed by commands, or outside piwork, are not seen here.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from piwork.core.checkpoints.records import CheckpointKind, CheckpointRecord, RestorePlan
from piwork.core.safe_read import HASHED_PROJECT_FILE, FileKind, UnreadableFile, digest_file, read_bytes

_lock = threading.Lock()

UNREADABLE = "unreadable"  # what a file that is there but cannot be hashed counts as


@dataclass(frozen=True)
class _Line:
    record: CheckpointRecord
    path: str | None
    blob: str | None  # None: the file did not exist


class PlainCheckpoints:
    uses_git = False

    def __init__(self, folder: Path, project: Path, session_file: Path, max_file_bytes: int) -> None:
        self.folder = folder / "plain"
        self.project = project
        self.session_file = str(session_file)
        self.max_file_bytes = max_file_bytes
        self._journal = self.folder / "records.jsonl"

    def _lines(self) -> list[_Line]:
        try:
            text = self._journal.read_text(encoding="utf-8")
        except FileNotFoundError:
            return []
        lines = []
        for raw in text.splitlines():
            try:
                data: dict[str, Any] = json.loads(raw)
                if data.get("session_file") != self.session_file:
                    continue
                path, blob = data.pop("path", None), data.pop("blob", None)
                for key in ("changed", "outside", "skipped"):
                    data[key] = tuple(data.get(key) or ())
                lines.append(_Line(CheckpointRecord(**data), path, blob))
            except (ValueError, TypeError, AttributeError):  # a torn or foreign line: not a checkpoint
                continue
        return lines

    def records(self) -> list[CheckpointRecord]:
        return [line.record for line in self._lines()]

    def _append(self, record: CheckpointRecord, path: str | None, blob: str | None) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        data = {**record.to_json(), "path": path, "blob": blob}
        line = json.dumps(data).encode("utf-8") + b"\n"
        if self._torn():  # a last line cut short by a crash would swallow this record
            line = b"\n" + line
        with self._journal.open("ab") as out:
            out.write(line)

    def _torn(self) -> bool:
        """The journal ends inside a line."""
        try:
            with self._journal.open("rb") as journal:
                end = journal.seek(0, os.SEEK_END)
                return end > 0 and journal.seek(end - 1) >= 0 and journal.read(1) != b"\n"
        except FileNotFoundError:
            return False

    def _keep(self, relative: str) -> tuple[str | None, bool]:
        """Copy the file's bytes into the store: (blob, too large)."""
        try:
            data = read_bytes(self.project / relative, FileKind("file to checkpoint", self.max_file_bytes))
        except FileNotFoundError:
            return None, False
        except UnreadableFile as err:  # larger than the limit, or a FIFO or device the call names
            return None, err.errno == errno.EFBIG
        except IsADirectoryError:
            return None, False
        blob = hashlib.sha256(data).hexdigest()
        target = self.folder / "blobs" / blob
        if not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        return blob, False

    def record(
        self,
        kind: CheckpointKind,
        entry_id: str | None,
        tool_call_id: str | None,
        tool_name: str | None,
        time_ms: int,
        path: str | None = None,
        since: str | None = None,
    ) -> CheckpointRecord | None:
        if kind != "before" or path is None:
            return None  # only what a call is about to change is kept
        relative = self._relative(path)
        if relative is None:
            return None
        with _lock:
            count = len(self._lines())
            blob, large = self._keep(relative)
            record = CheckpointRecord(
                kind="before",
                session_file=self.session_file,
                entry_id=entry_id,
                tool_call_id=tool_call_id,
                tool_name=tool_name,
                time_ms=time_ms,
                changed=(relative,),
                skipped=(relative,) if large else (),
                commit=f"plain:{count}",
            )
            self._append(record, None if large else relative, blob)
            return record

    def _relative(self, path: str) -> str | None:
        full = Path(os.path.normpath(self.project / path))
        try:
            return full.relative_to(self.project).as_posix()
        except ValueError:
            return None  # outside the project: not the project's checkpoint

    def _state_at(self, lines: list[_Line], commit: str) -> dict[str, str | None]:
        start = next((i for i, line in enumerate(lines) if line.record.commit == commit), len(lines))
        state: dict[str, str | None] = {}
        for line in lines[start:]:
            if line.path is not None and line.path not in state:
                state[line.path] = line.blob
        return state

    def _blob_of(self, relative: str) -> str | None:
        try:
            return digest_file(self.project / relative, HASHED_PROJECT_FILE).sha256
        except FileNotFoundError:
            return None
        except (UnreadableFile, IsADirectoryError):
            return UNREADABLE  # differs from every blob: the file counts as changed

    def contents(self, revision: str, paths: Sequence[str]) -> list[bytes | None]:
        """Not kept here: the plain store has only the bytes before each edit/write, no revisions."""
        return [None] * len(paths)

    def plan(self, target: CheckpointRecord) -> RestorePlan:
        return self._plan(self._lines(), target)[0]

    def _plan(
        self, lines: list[_Line], target: CheckpointRecord
    ) -> tuple[RestorePlan, dict[str, str | None]]:
        state = self._state_at(lines, target.commit)
        added: list[str] = []
        modified: list[str] = []
        removed: list[str] = []
        for relative, blob in state.items():
            now = self._blob_of(relative)
            if now == blob:
                continue
            (removed if blob is None else added if now is None else modified).append(relative)
        plan = RestorePlan(target, tuple(sorted(added)), tuple(sorted(modified)), tuple(sorted(removed)), ())
        return plan, state

    def restore(self, target: CheckpointRecord, time_ms: int, force: bool = False) -> RestorePlan:
        with _lock:
            lines = self._lines()
            plan, state = self._plan(lines, target)
            count = len(lines)
            point = CheckpointRecord(
                "restore-point", self.session_file, None, None, None, time_ms, commit=f"plain:{count}"
            )
            for relative in state:  # what undoing brings back
                blob, _ = self._keep(relative)
                self._append(point, relative, blob)
            for relative in plan.removed:
                (self.project / relative).unlink(missing_ok=True)
            for relative in (*plan.added, *plan.modified):
                blob = state[relative]
                assert blob is not None
                destination = self.project / relative
                destination.parent.mkdir(parents=True, exist_ok=True)
                destination.write_bytes((self.folder / "blobs" / blob).read_bytes())
            done = CheckpointRecord(
                "restored",
                self.session_file,
                target.entry_id,
                target.tool_call_id,
                target.tool_name,
                time_ms,
                changed=tuple(sorted((*plan.added, *plan.modified, *plan.removed))),
                target=target.commit,
                undo=point.commit,
                commit=f"plain:{count + len(state)}",
            )
            self._append(done, None, None)
            return plan
