"""Reading piwork's own session entries (state-only ``custom`` and ``custom_message``) on a branch."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from piwork.core.session.tree import SessionTree

BUNDLE_CUSTOM_TYPE = "piwork.contextBundle"  # the task context a task starts with

# What piwork's own entries are, in words (views show these instead of the customType ids).
CUSTOM_TYPE_WORDS = {
    "piwork.contextBundle": "task context",
    "piwork.freshSummary": "handed-over summary",
    "piwork.taskContract": "task contract",
    "piwork.manifest": "context manifest",
    "piwork.governorState": "governor state",
    "piwork.review": "review marks",
}


def custom_bodies(
    tree: SessionTree, custom_type: str, leaf_id: Any = None, entry_type: str = "custom"
) -> Iterator[dict[str, Any]]:
    """Entries of ``entry_type`` with ``customType``, newest first, on the path to the leaf (or ``leaf_id``)."""
    path = tree.path() if leaf_id is None else tree.path(leaf_id)
    for record in reversed(path):
        if record.type != entry_type:
            continue
        body = tree.body(record)
        if isinstance(body, dict) and body.get("customType") == custom_type:
            yield body


def latest_custom(tree: SessionTree, custom_type: str, leaf_id: Any = None) -> dict[str, Any] | None:
    return next(custom_bodies(tree, custom_type, leaf_id), None)
