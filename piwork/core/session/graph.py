"""Problems in the parent links of a session: parents that do not exist and parent cycles."""

from __future__ import annotations

from typing import Any

from piwork.core.jscompat import js_truthy
from piwork.core.session.format import CYCLE, DANGLING_PARENT, Diagnostic
from piwork.core.session.jsvalues import js_same, map_key
from piwork.core.session.records import EntryRecord


def check_graph(records: list[EntryRecord], by_key: dict[Any, EntryRecord]) -> list[Diagnostic]:
    """Dangling parents and parent cycles, without walking any chain more than once.

    A parent written before its child (the normal case) cannot close a cycle, so only chains
    that contain a link to a later line are walked.
    """
    found: list[Diagnostic] = []
    suspects: list[EntryRecord] = []
    for record in records:
        parent_id = record.parent_id
        if type(parent_id) is str:
            if not parent_id or parent_id == record.id:
                continue
            parent = by_key.get(parent_id)
        else:
            if record.type == "session" or not js_truthy(parent_id) or js_same(parent_id, record.id):
                continue
            parent = by_key.get(map_key(parent_id))
        if parent is None:
            found.append(
                Diagnostic(
                    DANGLING_PARENT,
                    record.line,
                    record.offset,
                    f"Parent {parent_id} of entry {record.id} does not exist; shown as a root",
                    record.key,
                )
            )
        elif parent.seq >= record.seq:
            suspects.append(record)
    state: dict[int, int] = {}  # id(record) -> 1 on the current walk, 2 finished
    for start in suspects:
        walk: list[EntryRecord] = []
        current: EntryRecord | None = start
        while current is not None and id(current) not in state:
            state[id(current)] = 1
            walk.append(current)
            parent_id = current.parent_id
            if not js_truthy(parent_id) or js_same(parent_id, current.id):
                current = None
                break
            current = by_key.get(map_key(parent_id))
        if current is not None and state.get(id(current)) == 1:
            found.append(
                Diagnostic(
                    CYCLE,
                    current.line,
                    current.offset,
                    f"Entry {current.id} is its own ancestor; the parent chain stops there",
                    current.key,
                )
            )
        for record in walk:
            state[id(record)] = 2
    return found
