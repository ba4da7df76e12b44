"""Which entries a branch summary covers, and which of their messages fit the summarizer.

``collect_branch_entries`` walks from the leaf being left back to the deepest entry it shares with
the navigation target; ``prepare_branch_entries`` turns those entries into messages, newest
first, until the token budget is used (summaries of earlier compactions and branches get a little
extra room), and gathers the file lists — including those carried by earlier branch summaries.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from piwork.core.compaction.file_ops import FileOps
from piwork.core.compaction.tokens import estimate_tokens
from piwork.core.jscompat import UNDEFINED, js_truthy
from piwork.core.session.context import build_entry_index, entry_to_messages
from piwork.core.session.context_edits import apply_edit, edit_for, latest_edits
from piwork.core.session.jsvalues import js_get, map_key
from piwork.core.session.timestamps import js_date_ms

Entry = Any
SUMMARY_ALLOWANCE = 0.9  # a summary entry may still be added while the total is below 90 % of the budget


@dataclass(frozen=True)
class BranchEntries:
    entries: list[Entry]  # oldest first
    common_ancestor_id: str | None


Lookup = Callable[[Any], Entry | None]


def _path_ids(lookup: Lookup, leaf_id: Any) -> list[Any]:
    """Ids from the root to ``leaf_id`` (empty when unknown); stops at a parent cycle."""
    ids: list[Any] = []
    seen: set[int] = set()
    current = lookup(leaf_id) if js_truthy(leaf_id) else None
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        ids.append(js_get(current, "id"))
        parent = js_get(current, "parentId")
        current = lookup(parent) if js_truthy(parent) else None
    ids.reverse()
    return ids


def collect_branch_entries(
    entries: Sequence[Entry], old_leaf_id: str | None, target_id: str
) -> BranchEntries:
    """Entries from ``old_leaf_id`` back to (excluding) its common ancestor with ``target_id``."""
    index = build_entry_index(entries)
    return collect_branch_entries_with(lambda entry_id: index.get(map_key(entry_id)), old_leaf_id, target_id)


def collect_branch_entries_with(lookup: Lookup, old_leaf_id: str | None, target_id: str) -> BranchEntries:
    """``collect_branch_entries`` over any id → entry lookup (e.g. a ``SessionTree``)."""
    if not old_leaf_id:
        return BranchEntries([], None)
    old_path = {map_key(i) for i in _path_ids(lookup, old_leaf_id)}
    common: Any = None
    for entry_id in reversed(_path_ids(lookup, target_id)):
        if map_key(entry_id) in old_path:
            common = entry_id
            break
    collected: list[Entry] = []
    seen: set[int] = set()
    current: Any = old_leaf_id
    while js_truthy(current) and not (common is not None and current == common):
        entry = lookup(current)
        if entry is None or id(entry) in seen:
            break
        seen.add(id(entry))
        collected.append(entry)
        current = js_get(entry, "parentId")
    collected.reverse()
    return BranchEntries(collected, common)


def _put(target: dict[str, Any], key: str, value: Any) -> None:
    if value is not UNDEFINED:
        target[key] = value


def branch_entry_message(entry: Entry, edit: Entry | None = None) -> dict[str, Any] | None:
    """The message an entry contributes to a branch summary (tool results and metadata: none),
    as its context edit ``edit`` leaves it (None when the edit leaves it out)."""
    kind = js_get(entry, "type")
    if kind == "message":
        message = js_get(entry, "message")
        if js_get(message, "role") == "toolResult":
            return None
        if edit is not None:
            return _first(apply_edit(entry_to_messages(entry), edit))
        return message if isinstance(message, dict) else None
    if kind == "custom_message" and edit is not None:
        return _first(apply_edit(entry_to_messages(entry), edit))
    if kind in ("custom_message", "branch_summary", "compaction"):
        fields = {
            "custom_message": ("custom", ("customType", "content", "display", "details")),
            "branch_summary": ("branchSummary", ("summary", "fromId")),
            "compaction": ("compactionSummary", ("summary", "tokensBefore")),
        }[kind]
        projected: dict[str, Any] = {"role": fields[0]}
        for key in fields[1]:
            _put(projected, key, js_get(entry, key))
        projected["timestamp"] = js_date_ms(js_get(entry, "timestamp"))
        return projected
    return None


def _first(messages: list[Any]) -> dict[str, Any] | None:
    return messages[0] if messages and isinstance(messages[0], dict) else None


@dataclass
class PreparedBranch:
    messages: list[dict[str, Any]] = field(default_factory=list)  # oldest first
    file_ops: FileOps = field(default_factory=FileOps)
    total_tokens: int = 0


def prepare_branch_entries(entries: Sequence[Entry], token_budget: float = 0) -> PreparedBranch:
    """Messages of ``entries`` (oldest first) that fit ``token_budget`` (0 or less: no limit)."""
    prepared = PreparedBranch()
    for entry in entries:
        if js_get(entry, "type") == "branch_summary" and not js_truthy(js_get(entry, "fromHook")):
            prepared.file_ops.add_from_details(js_get(entry, "details"))
    edits = latest_edits(entries)  # the newest edit of each target among the abandoned entries
    newest_first: list[dict[str, Any]] = []
    for entry in reversed(entries):
        message = branch_entry_message(entry, edit_for(edits, entry))
        if message is None:
            continue
        prepared.file_ops.add_from_message(message)
        tokens = estimate_tokens(message)
        if token_budget > 0 and prepared.total_tokens + tokens > token_budget:
            is_summary = js_get(entry, "type") in ("compaction", "branch_summary")
            if is_summary and prepared.total_tokens < token_budget * SUMMARY_ALLOWANCE:
                newest_first.append(message)
                prepared.total_tokens += tokens
            break
        newest_first.append(message)
        prepared.total_tokens += tokens
    prepared.messages = list(reversed(newest_first))
    return prepared
