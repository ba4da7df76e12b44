"""What the trust-gated resources looked like when the user decided, and what changed since.

When the user answers the trust prompt, piwork keeps a snapshot of every gated file (its hash, size
and, for text files of a sensible size, its text) in ``<agentDir>/piwork-trust-snapshots/``, one
JSON file per project folder. When the resources change and piwork asks again, ``compare`` says which
files were added, removed or modified, with a unified diff of the changed lines where both texts are
known. trust.json itself stays exactly Pi's format; these files are piwork's own.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from piwork.core import safe_read
from piwork.core.fs.atomic import write_atomically
from piwork.core.fs.lock import locked
from piwork.core.paths import canonical_path

SNAPSHOT_DIR_NAME = "piwork-trust-snapshots"
SNAPSHOT_VERSION = 1
MAX_FILES = 2000  # per folder
MAX_TEXT_BYTES = 256 * 1024  # a larger file is remembered by hash only
MAX_TOTAL_TEXT_BYTES = 4 * 1024 * 1024
MAX_DIFF_LINES = 2000  # per file

ChangeKind = Literal["added", "removed", "modified"]


@dataclass(frozen=True)
class FileState:
    sha256: str
    size: int
    text: str | None = None  # None: binary, too large, or over the folder's text budget

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"sha256": self.sha256, "size": self.size}
        if self.text is not None:
            out["text"] = self.text
        return out


@dataclass(frozen=True)
class Snapshot:
    folder: str
    files: dict[str, FileState] = field(default_factory=dict)  # absolute path -> state
    truncated: bool = False  # more than MAX_FILES files: the rest are not remembered

    def to_json(self) -> dict[str, Any]:
        return {
            "version": SNAPSHOT_VERSION,
            "folder": self.folder,
            "truncated": self.truncated,
            "files": {path: state.to_json() for path, state in sorted(self.files.items())},
        }

    @classmethod
    def from_json(cls, data: Any) -> Snapshot | None:
        if not isinstance(data, dict) or not isinstance(data.get("files"), dict):
            return None
        files: dict[str, FileState] = {}
        for path, raw in data["files"].items():
            if not isinstance(raw, dict) or not isinstance(raw.get("sha256"), str):
                return None
            text = raw.get("text")
            size = raw.get("size")
            files[path] = FileState(
                raw["sha256"], size if isinstance(size, int) else 0, text if isinstance(text, str) else None
            )
        return cls(str(data.get("folder", "")), files, bool(data.get("truncated", False)))


@dataclass(frozen=True)
class FileChange:
    path: str
    kind: ChangeKind
    diff: tuple[str, ...] = ()  # unified diff lines (no trailing newlines); empty when not comparable
    note: str = ""  # why there is no line diff, or that it was cut

    def _body(self) -> tuple[str, ...]:
        """The diff lines after the two file-name headers."""
        return self.diff[2:] if len(self.diff) >= 2 and self.diff[0].startswith("---") else self.diff

    @property
    def added_lines(self) -> int:
        return sum(1 for line in self._body() if line.startswith("+"))

    @property
    def removed_lines(self) -> int:
        return sum(1 for line in self._body() if line.startswith("-"))


def compare(old: Snapshot, new: Snapshot, *, display: Callable[[str], str] | None = None) -> list[FileChange]:
    """Files added, removed and modified from ``old`` to ``new``, in path order.

    ``display(path)`` names a file in the diff header (default: the path as it is).
    """
    name: Callable[[str], str] = display or (lambda path: path)
    changes: list[FileChange] = []
    for path in sorted(set(old.files) | set(new.files)):
        before, after = old.files.get(path), new.files.get(path)
        if before is None and after is not None:
            changes.append(_one_sided(path, "added", after, name(path)))
        elif after is None and before is not None:
            changes.append(_one_sided(path, "removed", before, name(path)))
        elif before is not None and after is not None and before.sha256 != after.sha256:
            changes.append(_modified(path, before, after, name(path)))
    return changes


def _one_sided(path: str, kind: ChangeKind, state: FileState, shown: str) -> FileChange:
    if state.text is None:
        return FileChange(path, kind, note=_no_text_note(state))
    lines = state.text.splitlines()
    if kind == "added":
        diff = ["--- /dev/null", f"+++ b/{shown}", f"@@ -0,0 +1,{len(lines)} @@", *("+" + s for s in lines)]
    else:
        diff = [f"--- a/{shown}", "+++ /dev/null", f"@@ -1,{len(lines)} +0,0 @@", *("-" + s for s in lines)]
    return _capped(FileChange(path, kind, tuple(diff)))


def _modified(path: str, before: FileState, after: FileState, shown: str) -> FileChange:
    if before.text is None or after.text is None:
        missing = before if before.text is None else after
        return FileChange(path, "modified", note=_no_text_note(missing))
    diff = difflib.unified_diff(
        before.text.splitlines(), after.text.splitlines(), f"a/{shown}", f"b/{shown}", lineterm=""
    )
    return _capped(FileChange(path, "modified", tuple(diff)))


def _capped(change: FileChange) -> FileChange:
    if len(change.diff) <= MAX_DIFF_LINES:
        return change
    hidden = len(change.diff) - MAX_DIFF_LINES
    note = f"{hidden:,} more diff lines not shown."
    return FileChange(change.path, change.kind, change.diff[:MAX_DIFF_LINES], note)


def _no_text_note(state: FileState) -> str:
    if state.size > MAX_TEXT_BYTES:
        return "Too large to compare line by line; its content changed."
    return "Binary (or not kept as text); its content changed."


class SnapshotStore:
    """One JSON file per project folder under ``<agentDir>/piwork-trust-snapshots/``."""

    def __init__(self, agent_dir: str | os.PathLike[str]) -> None:
        self.root = Path(canonical_path(os.fspath(agent_dir))) / SNAPSHOT_DIR_NAME

    def path_for(self, folder: str) -> Path:
        key = hashlib.sha256(canonical_path(folder).encode("utf-8", "surrogateescape")).hexdigest()[:32]
        return self.root / f"{key}.json"

    def load(self, folder: str) -> Snapshot | None:
        try:
            data = json.loads(safe_read.read_text(self.path_for(folder), safe_read.SNAPSHOT, strip_bom=False))
        except (OSError, ValueError):
            return None
        snapshot = Snapshot.from_json(data)
        return snapshot if snapshot is not None and snapshot.folder == canonical_path(folder) else None

    def save(self, snapshot: Snapshot) -> None:
        target = self.path_for(snapshot.folder)
        target.parent.mkdir(parents=True, exist_ok=True)
        with locked(target):
            write_atomically(
                target, json.dumps(snapshot.to_json(), ensure_ascii=False), durable=True, private=True
            )
