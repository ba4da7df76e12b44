"""Building the model's context from a path of the session tree, reading bodies in batches.

Follows ``context.py``'s rules on records: the latest compaction, then its kept entries (or its
``retainedTail``), then what follows it; model and thinking level from the whole path.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from piwork.core.jscompat import UNDEFINED
from piwork.core.session.context import DEFAULT_THINKING_LEVEL, entry_to_messages
from piwork.core.session.context_edits import apply_edit
from piwork.core.session.jsvalues import js_same, map_key
from piwork.core.session.message_shape import shared_usable_message, usable_message
from piwork.core.session.records import EntryRecord
from piwork.core.session.tree_types import SessionContext

if TYPE_CHECKING:
    from piwork.core.session.tree import SessionTree

BATCH = 256  # entries read and parsed before they are turned into messages


def context_for_path(
    tree: SessionTree, path: list[EntryRecord], honour_retained_tail: bool, keep_originals: bool = False
) -> SessionContext:
    """Messages, model and thinking level for a root→leaf path of ``tree``. ``keep_originals``: the
    messages as written, with what a context edit changes marked in ``edited`` instead of applied (the
    transcript a reader sees)."""
    stream = ContextStream(tree, path, honour_retained_tail, keep_originals)
    messages: list[Any] = []
    for batch in stream.batches():
        messages.extend(batch)
    return SessionContext(messages, stream.thinking_level, stream.model, stream.entry_ids, stream.edited)


class ContextStream:
    """A path's context given a batch of messages at a time (``batches``), for a caller that looks at
    each message once and keeps none (a whole context of a long session is most of a file's size in
    objects). The messages are those ``context_for_path`` lists, in the same order; ``thinking_level``,
    ``model`` and ``entry_ids`` are known from the start, ``edited`` once the batches are done."""

    def __init__(
        self,
        tree: SessionTree,
        path: list[EntryRecord],
        honour_retained_tail: bool,
        keep_originals: bool = False,
    ) -> None:
        self._tree = tree
        self._keep_originals = keep_originals
        self.thinking_level, self.model = _settings(tree, path)
        self._selected, self._retained = context_records(tree, path, honour_retained_tail)
        self.entry_ids: list[Any] = [r.id for r in self._selected]
        self.edited: dict[int, Any] = {}

    @property
    def records(self) -> list[EntryRecord]:
        """The records whose lines the batches read (those of ``entry_ids``)."""
        return self._selected

    def batches(self) -> Iterator[list[Any]]:
        """The messages, a list per batch of entries read together (an empty list for a batch with none)."""
        tree, selected, retained, keep_originals = (
            self._tree,
            self._selected,
            self._retained,
            self._keep_originals,
        )
        edits = _latest_edits(tree, selected)
        edited = self.edited
        for first in range(0, len(selected), BATCH):  # batches: only one batch of whole entries in memory
            batch = selected[first : first + BATCH]
            usable: list[Any] = []
            append = usable.append
            for n, (record, body) in enumerate(zip(batch, bodies_of(tree, batch), strict=True)):
                if first + n == 1 and retained:  # a retained tail follows the compaction
                    _extend_usable(usable, retained)
                    retained = []
                if record.type == "compaction" and first + n > 0:
                    continue  # an older compaction inside the newest one's kept range adds no summary
                edit = edits.get(map_key(record.id)) if edits else None
                if edit is not None:
                    if body is not None and not _message_without_object(body):
                        if keep_originals:
                            start = len(usable)
                            _extend_usable(usable, entry_to_messages(body))
                            edited.update((id(m), edit) for m in usable[start:])
                        else:
                            _extend_usable(usable, apply_edit(entry_to_messages(body), edit))
                    continue
                message = (
                    body.get("message") if type(body) is dict and body.get("type") == "message" else None
                )
                if type(message) is dict and message.get("content") is not None:
                    if (fixed := shared_usable_message(message)) is not None:
                        append(fixed)  # the usual entry
                elif body is not None and not _message_without_object(body):
                    # a line that turned out unreadable is reported, not fatal
                    _extend_usable(usable, entry_to_messages(body))
            yield usable
        tail: list[Any] = []
        _extend_usable(tail, retained)
        yield tail


def context_records(
    tree: SessionTree, path: list[EntryRecord], honour_retained_tail: bool = True
) -> tuple[list[EntryRecord], list[Any]]:
    """The records of a path the context is built from, and a compaction's retained tail."""
    compaction_at = next((i for i in range(len(path) - 1, -1, -1) if path[i].type == "compaction"), -1)
    if compaction_at < 0:
        return path, []
    compaction = path[compaction_at]
    selected = [compaction]
    retained: list[Any] = []
    if honour_retained_tail and compaction.meta.get("hasRetainedTail"):
        body = tree.body(compaction)
        if isinstance(body, dict) and isinstance(body.get("retainedTail"), list):
            retained = list(body["retainedTail"])
    else:
        first_kept = compaction.meta.get("firstKeptEntryId", UNDEFINED)
        found = False
        for record in path[:compaction_at]:
            found = found or js_same(record.id, first_kept)
            # system messages before the compaction live on in its ``systemMessage`` snapshot
            if found and not (record.type == "message" and record.role == "system"):
                selected.append(record)
    selected.extend(path[compaction_at + 1 :])
    return selected, retained


def _latest_edits(tree: SessionTree, selected: list[EntryRecord]) -> dict[Any, Any]:
    """The newest ``context_edit`` body per target among the selected records."""
    records: dict[Any, EntryRecord] = {}
    for record in selected:
        if record.type == "context_edit":
            records[map_key(record.meta.get("targetId", UNDEFINED))] = record
    edits: dict[Any, Any] = {}
    for key, record in records.items():
        body = tree.body(record)
        if type(body) is dict:
            edits[key] = body
    return edits


def _extend_usable(usable: list[Any], messages: list[Any]) -> None:
    usable.extend(fixed for m in messages if (fixed := usable_message(m)) is not None)


def _message_without_object(body: Any) -> bool:
    """A ``message`` entry whose ``message`` is missing, ``null`` or not an object: it has nothing
    to contribute (Pi fails on it), so the context leaves it out."""
    return type(body) is dict and body.get("type") == "message" and type(body.get("message")) is not dict


def bodies_of(tree: SessionTree, records: list[EntryRecord]) -> list[Any]:
    """The bodies of ``records`` in order; those of one file are read together when it can."""
    source = records[0].source
    load_many = getattr(source, "load_many", None)
    if load_many is not None and all(r.source is source and r.body is None for r in records):
        bodies: list[Any] = load_many(records)
        return bodies
    by_source: dict[int, list[int]] = {}
    for i, record in enumerate(records):
        if record.body is None and getattr(record.source, "load_many", None) is not None:
            by_source.setdefault(id(record.source), []).append(i)
    out: list[Any] = [None] * len(records)
    for indexes in by_source.values():
        group = [records[i] for i in indexes]
        for i, body in zip(indexes, group[0].source.load_many(group), strict=True):  # type: ignore[union-attr]
            out[i] = body
    loaded = {i for indexes in by_source.values() for i in indexes}
    for i, record in enumerate(records):
        if i not in loaded:
            out[i] = tree.body(record)
    return out


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
