"""What a checkpoint says about itself: the record kept in its commit message in the shadow repository.

A record names the session file, the session entry (the assistant message holding the tool call), the tool
call, the time, and what was noticed: files the call changed, files changed outside piwork since the
session's previous checkpoint, files left out for their size. Nothing of it goes into the session file.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from piwork.core.errors import PiworkError

CheckpointKind = Literal["before", "after", "restore-point", "restored"]
"""``before``/``after`` a file-changing tool call; ``restore-point``: the files just before a restore (what
undoing it brings back); ``restored``: the files a restore left."""

RECORD_MARK = "piwork-checkpoint: "


@dataclass(frozen=True)
class CheckpointRecord:
    kind: CheckpointKind
    session_file: str
    entry_id: str | None
    tool_call_id: str | None
    tool_name: str | None
    time_ms: int
    changed: tuple[str, ...] = ()  # ``after``: files the call changed; ``restored``: files the restore wrote
    outside: tuple[str, ...] = ()  # ``before``/``restore-point``: changed outside piwork since the last one
    skipped: tuple[str, ...] = ()  # left out of the snapshot: over the size limit
    target: str | None = None  # ``restored``: the checkpoint (commit) restored
    undo: str | None = None  # ``restored``: the restore-point commit undoing it goes back to
    commit: str = field(default="", compare=False)  # the shadow commit (or plain-store id) holding the files

    def message(self) -> str:
        data = {k: v for k, v in asdict(self).items() if k != "commit"}
        return (
            f"{self.kind} {self.tool_name or ''} {self.entry_id or ''}\n\n{RECORD_MARK}{json.dumps(data)}\n"
        )

    @classmethod
    def parse(cls, commit: str, message: str) -> CheckpointRecord | None:
        for line in message.splitlines():
            if line.startswith(RECORD_MARK):
                try:
                    data: dict[str, Any] = json.loads(line[len(RECORD_MARK) :])
                    for key in ("changed", "outside", "skipped"):
                        data[key] = tuple(data.get(key) or ())
                    return cls(**data, commit=commit)
                except (ValueError, TypeError):
                    return None
        return None

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        for key in ("changed", "outside", "skipped"):
            data[key] = list(data[key])
        return data


@dataclass(frozen=True)
class RestorePlan:
    """What a restore changes in the project (paths relative to it, sorted), and what blocks it."""

    target: CheckpointRecord
    added: tuple[str, ...]  # not there now, written back
    modified: tuple[str, ...]  # there now with other bytes or mode
    removed: tuple[str, ...]  # there now, not at the target: deleted
    outside: tuple[str, ...]  # changed outside piwork since the last checkpoint: needs ``force``

    @property
    def empty(self) -> bool:
        return not (self.added or self.modified or self.removed)

    def to_json(self) -> dict[str, Any]:
        return {
            "target": self.target.to_json(),
            "added": list(self.added),
            "modified": list(self.modified),
            "removed": list(self.removed),
            "outside": list(self.outside),
        }


class RestoreBlocked(PiworkError):
    """A restore would overwrite files changed outside piwork since the last checkpoint (``force`` it)."""

    def __init__(self, plan: RestorePlan) -> None:
        super().__init__(
            "Files changed outside piwork since the last checkpoint would be overwritten: "
            + ", ".join(plan.outside)
        )
        self.plan = plan
