"""Reading and writing piwork's own session entries (state-only ``custom`` and ``custom_message``)."""

from __future__ import annotations

from typing import Any

from piwork.core.session.tree import SessionTree

_CURRENT: Any = object()


def latest_custom(tree: SessionTree, custom_type: str, leaf_id: Any = _CURRENT) -> dict[str, Any] | None:
    """The last entry of ``type`` custom with ``customType`` on the path to the leaf (or ``leaf_id``)."""
    path = tree.path() if leaf_id is _CURRENT else tree.path(leaf_id)
    for record in reversed(path):
        if record.type != "custom":
            continue
        body = tree.body(record)
        if isinstance(body, dict) and body.get("customType") == custom_type:
            return body
    return None


def latest_custom_message(
    tree: SessionTree, custom_type: str, leaf_id: Any = _CURRENT
) -> dict[str, Any] | None:
    """The last ``custom_message`` entry with ``customType`` on the path to the leaf (or ``leaf_id``)."""
    path = tree.path() if leaf_id is _CURRENT else tree.path(leaf_id)
    for record in reversed(path):
        if record.type != "custom_message":
            continue
        body = tree.body(record)
        if isinstance(body, dict) and body.get("customType") == custom_type:
            return body
    return None
