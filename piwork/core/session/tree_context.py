"""Building the model's context from a path of the session tree, reading bodies in batches.

Follows ``context.py``'s rules on records: the latest compaction, then its kept entries (or its
``retainedTail``), then what follows it; model and thinking level from the whole path.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from piwork.core.session.context import DEFAULT_THINKING_LEVEL, entry_to_messages
from piwork.core.session.jsvalues import UNDEFINED, js_same
from piwork.core.session.records import EntryRecord
from piwork.core.session.tree_types import SessionContext

if TYPE_CHECKING:
    from piwork.core.session.tree import SessionTree

BATCH = 4096  # entries read and parsed before they are turned into messages


def context_for_path(
    tree: SessionTree, path: list[EntryRecord], honour_retained_tail: bool
) -> SessionContext:
    """Messages, model and thinking level for a root→leaf path of ``tree``."""
    thinking_level, model = _settings(tree, path)
    compaction_at = next((i for i in range(len(path) - 1, -1, -1) if path[i].type == "compaction"), -1)
    selected: list[EntryRecord]
    retained: list[Any] = []
    if compaction_at < 0:
        selected = path
    else:
        compaction = path[compaction_at]
        selected = [compaction]
        if honour_retained_tail and compaction.meta.get("hasRetainedTail"):
            body = tree.body(compaction)
            if isinstance(body, dict) and isinstance(body.get("retainedTail"), list):
                retained = list(body["retainedTail"])
        else:
            first_kept = compaction.meta.get("firstKeptEntryId", UNDEFINED)
            found = False
            for record in path[:compaction_at]:
                found = found or js_same(record.id, first_kept)
                if found:
                    selected.append(record)
        selected.extend(path[compaction_at + 1 :])
    messages: list[Any] = []
    for first in range(0, len(selected), BATCH):  # batches: only one batch of whole entries in memory
        batch = selected[first : first + BATCH]
        preloaded = _preload(batch)
        for record in batch:
            key = id(record)
            body = preloaded.pop(key) if key in preloaded else tree.body(record)
            if body is not None:  # a line that turned out unreadable is reported, not fatal
                messages.extend(entry_to_messages(body))
            if record is selected[0] and retained:
                messages.extend(retained)
    return SessionContext(messages, thinking_level, model, [r.id for r in selected])


def _preload(records: list[EntryRecord]) -> dict[int, Any]:
    """Read the bodies not in memory, all those of one source in one call when it can."""
    by_source: dict[int, list[EntryRecord]] = {}
    for record in records:
        if record.body is None and record.source is not None:
            by_source.setdefault(id(record.source), []).append(record)
    preloaded: dict[int, Any] = {}
    for batch in by_source.values():
        load_many = getattr(batch[0].source, "load_many", None)
        if load_many is None:
            continue
        for record, body in zip(batch, load_many(batch), strict=True):
            preloaded[id(record)] = body
    return preloaded


def _settings(tree: SessionTree, path: list[EntryRecord]) -> tuple[Any, dict[str, Any] | None]:
    """Thinking level and model from the last entries on the path that set them."""
    thinking_level: Any = DEFAULT_THINKING_LEVEL
    for record in reversed(path):
        if record.type == "thinking_level_change":
            thinking_level = record.meta.get("thinkingLevel", UNDEFINED)
            break
    for record in reversed(path):
        if record.type == "model_change":
            return thinking_level, _pick(record.meta, ("provider", "provider"), ("modelId", "modelId"))
        if record.type == "message" and record.role == "assistant":
            body = tree.body(record)
            message = body.get("message") if isinstance(body, dict) else None
            return thinking_level, _pick(message, ("provider", "provider"), ("modelId", "model"))
    return thinking_level, None


def _pick(source: Any, *pairs: tuple[str, str]) -> dict[str, Any]:
    if not isinstance(source, Mapping):
        return {}
    return {out: source[key] for out, key in pairs if key in source}
