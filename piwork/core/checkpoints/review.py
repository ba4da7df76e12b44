"""Reviewed marks of changed files and hunks, kept in the session as state-only entries.

A mark is a ``custom`` entry (``customType: "piwork.review"``, ``data: {"reviewed", "keys", "paths"}``):
Pi keeps ``custom`` entries as extension state and never sends them to the model, so the session stays a
file Pi reads as its own. A key names what was reviewed by its content (see ``Hunk.key`` and
``FileChange.key``), not its place: a hunk moved by an edit above it stays reviewed, and a hunk that
changes again is a new key, unreviewed. Marks are read from the whole file, in the order written (the
latest word on a key wins), so a review holds on every branch showing the same change.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from piwork.core.session.tree import SessionTree

REVIEW_CUSTOM_TYPE = "piwork.review"


def reviewed_keys(tree: SessionTree) -> frozenset[str]:
    """The keys marked reviewed (and not cleared since) anywhere in the session."""
    state: dict[str, bool] = {}
    for record in tree.records:
        if record.type != "custom":
            continue
        body = tree.body(record)
        if not isinstance(body, dict) or body.get("customType") != REVIEW_CUSTOM_TYPE:
            continue
        data: Any = body.get("data")
        if not isinstance(data, dict) or not isinstance(data.get("keys"), list):
            continue  # a mark written by something else: not ours to read
        reviewed = data.get("reviewed") is True
        for key in data["keys"]:
            if isinstance(key, str):
                state[key] = reviewed
    return frozenset(key for key, reviewed in state.items() if reviewed)


def record_review(tree: SessionTree, keys: Iterable[str], paths: Iterable[str], reviewed: bool = True) -> str:
    """Append one mark saying ``keys`` (of the files ``paths``) are reviewed, or no longer; its id."""
    data = {"reviewed": reviewed, "keys": sorted(set(keys)), "paths": sorted(set(paths))}
    return tree.append_custom_entry(REVIEW_CUSTOM_TYPE, data)


def branch_start(tree: SessionTree) -> str | None:
    """Where the current branch's work starts: the last entry of the path that other branches leave from
    (it has more than one child), else the path's first entry; None for an empty session."""
    path = tree.path()
    for record in reversed(path[:-1]):
        if len(tree.children(record.id)) > 1:
            return str(record.id)
    return str(path[0].id) if path else None
