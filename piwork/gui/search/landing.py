"""Which tree row stands for a search hit when the tree does not show the entry itself.

The tree never lists an assistant turn that only calls tools (its tool results stand for it), and its
filters hide bookkeeping entries; a hit there lands on the first shown entry below it on the same
branch (its tool result), else on the nearest shown entry above it.
"""

from __future__ import annotations

from collections.abc import Callable

from piwork.core.session.tree import SessionTree


def landing_entry(tree: SessionTree, entry_id: str, shown: Callable[[str], bool]) -> str | None:
    if shown(entry_id):
        return entry_id
    pending = [r for r in tree.sorted_children(entry_id)]
    for _ in range(64):  # a short walk down: results of the same turn sit right below
        if not pending:
            break
        child = pending.pop(0)
        if isinstance(child.id, str) and shown(child.id):
            return child.id
        pending[:0] = tree.sorted_children(child.id)[:1]
    for record in reversed(tree.path(entry_id)[:-1]):
        if isinstance(record.id, str) and shown(record.id):
            return record.id
    return None
