"""Two points of a session tree side by side, from their common ancestor.

`compare_branches(tree, a, b)` walks both root→entry paths, finds where they part, and gives the
activity of each side after that point (`branch_activity.py`): its entries, files read and changed,
commands and exit codes, tokens, cost and last answer. `path_activity(tree, entry)` is the same for
one whole path (the files-touched view of a branch).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from piwork.core.session.branch_activity import BranchActivity, branch_activity
from piwork.core.session.graph_layout import GRAPH_SKIPPED_TYPES
from piwork.core.session.tree import EntryNotFound, SessionTree


@dataclass
class BranchComparison:
    ancestor_id: str | None  # the last entry both paths share (None: different roots)
    a_id: str
    b_id: str
    a: BranchActivity
    b: BranchActivity

    @property
    def a_contains_b(self) -> bool:
        return not self.b.entry_ids

    @property
    def b_contains_a(self) -> bool:
        return not self.a.entry_ids


def _cwd(tree: SessionTree) -> str | None:
    cwd = tree.header.get("cwd") if isinstance(tree.header, dict) else None
    return cwd if isinstance(cwd, str) and cwd else None


def _bodies(tree: SessionTree, records: list[Any]) -> list[Any]:
    return [tree.body(r) for r in records]


def compare_branches(tree: SessionTree, a_id: str, b_id: str) -> BranchComparison:
    """Raises EntryNotFound for an unknown id."""
    for entry_id in (a_id, b_id):
        if not tree.has(entry_id):
            raise EntryNotFound(entry_id)
    path_a, path_b = tree.path(a_id), tree.path(b_id)
    shared = 0
    for ra, rb in zip(path_a, path_b, strict=False):
        if ra is not rb:
            break
        shared += 1
    common = _bodies(tree, path_a[:shared])
    cwd = _cwd(tree)
    return BranchComparison(
        ancestor_id=str(path_a[shared - 1].id) if shared else None,
        a_id=a_id,
        b_id=b_id,
        a=branch_activity(_bodies(tree, path_a[shared:]), cwd, common),
        b=branch_activity(_bodies(tree, path_b[shared:]), cwd, common),
    )


def path_activity(tree: SessionTree, entry_id: str | None = None) -> BranchActivity:
    """Activity of the whole root→entry path (default: the active path)."""
    target = tree.leaf_id if entry_id is None else entry_id
    if target is not None and not tree.has(target):
        raise EntryNotFound(target)
    records = tree.path(target) if target is not None else []
    return branch_activity(_bodies(tree, records), _cwd(tree))


def conversation_leaf(tree: SessionTree) -> str | None:
    """The current position as a user sees it: the leaf, or its nearest ancestor that is part of the
    conversation when the leaf is bookkeeping (a label, a name, a model change...)."""
    if tree.leaf_id is None:
        return None
    for record in reversed(tree.path()):
        if record.type not in GRAPH_SKIPPED_TYPES and isinstance(record.id, str):
            return record.id
    return None
