"""Which checkpoint holds "the files as they were" at a session entry.

The files as they were at entry E are those of the ``before`` checkpoint of the first file-changing tool
call made at or after E: the earliest ``before`` checkpoint whose call is held by E or by an entry below E
in the session tree (the earliest in time is necessarily the first on its own path after E, and the one
taken before any later branch could leave other files behind). When no call below E changed files, they
are those after the last file-changing call above E: the latest ``after`` checkpoint of a call held by an
ancestor of E. With neither, nothing was recorded for E and there is nothing to restore to.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from piwork.core.checkpoints.records import CheckpointRecord
from piwork.core.errors import PiworkError
from piwork.core.session.tree import SessionTree


class NoCheckpoint(PiworkError):
    """Nothing was recorded for the entry asked for."""


def subtree_ids(tree: SessionTree, entry_id: str) -> set[str]:
    children: dict[Any, list[Any]] = {}
    for record in tree.records:
        children.setdefault(record.parent_id, []).append(record.id)
    found, todo = {entry_id}, [entry_id]
    while todo:
        for child in children.get(todo.pop(), ()):
            if isinstance(child, str) and child not in found:
                found.add(child)
                todo.append(child)
    return found


def checkpoint_for(tree: SessionTree, entry_id: str, records: Sequence[CheckpointRecord]) -> CheckpointRecord:
    if tree.record(entry_id) is None:
        raise NoCheckpoint(f"No entry {entry_id} in this session")
    below = subtree_ids(tree, entry_id)
    for record in records:
        if record.kind == "before" and record.entry_id in below:
            return record
    above = {r.id for r in tree.path(entry_id)} - {entry_id}
    for record in reversed(records):
        if record.kind == "after" and record.entry_id in above:
            return record
    raise NoCheckpoint(f"No checkpoint was recorded at or before entry {entry_id}")


def assistant_entry_of(tree: SessionTree, tool_call_id: str, look_back: int = 64) -> str | None:
    """The id of the assistant message entry holding the call (on the current branch, near its end)."""
    for record in reversed(tree.path()[-look_back:]):
        if record.type != "message" or record.role != "assistant":
            continue
        content = (tree.body(record).get("message") or {}).get("content")
        if isinstance(content, list) and any(
            isinstance(b, dict) and b.get("type") == "toolCall" and b.get("id") == tool_call_id
            for b in content
        ):
            return str(record.id)
    return None
