"""What the model sees: the root→leaf path, the compaction range and the entry projection.

These functions take plain entry dicts exactly as parsed from a file (no validation) and follow
Pi's rules, including how it treats odd values; the session tree uses them on the entries of the
active path. ``honour_retained_tail`` enables piwork's reading of a compaction's ``retainedTail``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from piwork.core.jscompat import UNDEFINED, js_truthy
from piwork.core.messages import LLM_ROLES
from piwork.core.session.context_edits import apply_edit, edit_for, latest_edits
from piwork.core.session.jsvalues import js_get, js_same, map_key
from piwork.core.session.timestamps import js_date_ms

Entry = Any  # a parsed JSON value, normally a dict
DEFAULT_THINKING_LEVEL = "off"


def build_entry_index(entries: Sequence[Entry]) -> dict[Any, Entry]:
    """Entries by id; a later duplicate replaces an earlier one."""
    index: dict[Any, Entry] = {}
    for entry in entries:
        index[map_key(js_get(entry, "id"))] = entry
    return index


def build_session_path(
    entries: Sequence[Entry], leaf_id: Any = UNDEFINED, index: dict[Any, Entry] | None = None
) -> list[Entry]:
    """Root→leaf path. ``leaf_id=None`` gives ``[]``; absent, empty or unknown → the last entry."""
    if leaf_id is None:
        return []
    by_id = build_entry_index(entries) if index is None else index
    leaf: Any = UNDEFINED
    if js_truthy(leaf_id):
        leaf = by_id.get(map_key(leaf_id), UNDEFINED)
    if leaf is UNDEFINED or leaf is None:
        leaf = entries[-1] if entries else UNDEFINED
    path: list[Entry] = []
    seen: set[int] = set()
    current = leaf
    while js_truthy(current) and id(current) not in seen:
        seen.add(id(current))
        path.append(current)
        parent_id = js_get(current, "parentId")
        current = by_id.get(map_key(parent_id), UNDEFINED) if js_truthy(parent_id) else UNDEFINED
    path.reverse()
    return path


def latest_compaction(path: Sequence[Entry]) -> Entry | None:
    for entry in reversed(path):
        if js_get(entry, "type") == "compaction":
            return entry
    return None


@dataclass(frozen=True)
class ContextSelection:
    """The context entries of a path; ``retained`` holds a compaction's ``retainedTail`` messages."""

    entries: list[Entry]
    retained: list[Any]


def select_context(path: Sequence[Entry], honour_retained_tail: bool = False) -> ContextSelection:
    """Latest compaction first, then its kept entries (or retained tail), then what follows it."""
    compaction = latest_compaction(path)
    if compaction is None:
        return ContextSelection(list(path), [])
    compaction_id = js_get(compaction, "id")
    position = next((i for i, e in enumerate(path) if js_same(js_get(e, "id"), compaction_id)), -1)
    if position < 0:
        return ContextSelection(list(path), [])
    selected: list[Entry] = [compaction]
    retained_tail = js_get(compaction, "retainedTail")
    if honour_retained_tail and isinstance(retained_tail, list):
        retained = list(retained_tail)
    else:
        retained = []
        first_kept = js_get(compaction, "firstKeptEntryId")
        found = False
        for entry in path[:position]:
            if not found and js_same(js_get(entry, "id"), first_kept):
                found = True
            # system messages before the compaction live on in its ``systemMessage`` snapshot
            if found and not is_system_message_entry(entry):
                selected.append(entry)
    selected.extend(path[position + 1 :])
    return ContextSelection(selected, retained)


def build_context_entries(
    entries: Sequence[Entry], leaf_id: Any = UNDEFINED, index: dict[Any, Entry] | None = None
) -> list[Entry]:
    """Pi's compaction-aware entry list for a leaf (``retainedTail`` ignored, as Pi does)."""
    return select_context(build_session_path(entries, leaf_id, index)).entries


def is_system_message_entry(entry: Entry) -> bool:
    """A ``message`` entry holding a system message (prompt state written by Pi 1.6)."""
    if type(entry) is not dict or entry.get("type") != "message":
        return False
    message = entry.get("message")
    return type(message) is dict and message.get("role") == "system"


def _put(target: dict[str, Any], key: str, value: Any) -> None:
    if value is not UNDEFINED:
        target[key] = value


def entry_to_messages(entry: Entry) -> list[Any]:
    """The projection of one entry: its message, a custom/summary message, or nothing."""
    if type(entry) is dict and entry.get("type") == "message":  # the common case, without js_get
        message = entry.get("message")
        if type(message) is dict:
            content = message.get("content")
            if content is None:
                role = message.get("role")
                if role in LLM_ROLES:
                    return [{**message, "content": []}]
                if role == "system":
                    return [{**message, "content": ""}]
            return [message]
    kind = js_get(entry, "type")
    if kind == "message":
        message = js_get(entry, "message")
        role = js_get(message, "role")
        if role in LLM_ROLES and js_get(message, "content") in (None, UNDEFINED):
            return [{**message, "content": []}]
        if role == "system" and js_get(message, "content") in (None, UNDEFINED):
            return [{**message, "content": ""}]
        return [message]
    if kind == "custom_message":
        content = js_get(entry, "content")
        custom: dict[str, Any] = {"role": "custom"}
        _put(custom, "customType", js_get(entry, "customType"))
        custom["content"] = [] if content in (None, UNDEFINED) else content
        _put(custom, "display", js_get(entry, "display"))
        _put(custom, "details", js_get(entry, "details"))
        custom["timestamp"] = js_date_ms(js_get(entry, "timestamp"))
        return [custom]
    if kind == "branch_summary" and js_truthy(js_get(entry, "summary")):
        branch: dict[str, Any] = {"role": "branchSummary", "summary": entry["summary"]}
        _put(branch, "fromId", js_get(entry, "fromId"))
        branch["timestamp"] = js_date_ms(js_get(entry, "timestamp"))
        return [branch]
    if kind == "compaction":
        summary: dict[str, Any] = {"role": "compactionSummary"}
        _put(summary, "summary", js_get(entry, "summary"))
        _put(summary, "tokensBefore", js_get(entry, "tokensBefore"))
        summary["timestamp"] = js_date_ms(js_get(entry, "timestamp"))
        system = js_get(entry, "systemMessage")
        return [system, summary] if js_truthy(system) else [summary]
    return []


def context_settings(path: Sequence[Entry]) -> tuple[Any, dict[str, Any] | None]:
    """Thinking level and model in effect at the end of ``path`` (``UNDEFINED`` level possible)."""
    thinking_level: Any = DEFAULT_THINKING_LEVEL
    model: dict[str, Any] | None = None
    for entry in path:
        kind = js_get(entry, "type")
        if kind == "thinking_level_change":
            thinking_level = js_get(entry, "thinkingLevel")
        elif kind == "model_change":
            model = {}
            _put(model, "provider", js_get(entry, "provider"))
            _put(model, "modelId", js_get(entry, "modelId"))
        elif kind == "message":
            message = js_get(entry, "message")
            if js_get(message, "role") == "assistant":
                model = {}
                _put(model, "provider", js_get(message, "provider"))
                _put(model, "modelId", js_get(message, "model"))
    return thinking_level, model


@dataclass(frozen=True)
class ProjectedEntry:
    """One context entry and the messages the model sees of it (after context edits)."""

    entry: Entry
    messages: list[Any]


def project_entries(selected: Sequence[Entry]) -> list[ProjectedEntry]:
    """Project context entries (``select_context(...).entries``) with their context edits.

    The newest edit of a target among these entries wins. An older compaction that lies inside
    the newest one's kept range projects nothing: only the compaction first in the list adds a
    summary.
    """
    edits = latest_edits(selected)
    out: list[ProjectedEntry] = []
    for n, entry in enumerate(selected):
        if n > 0 and js_get(entry, "type") == "compaction":
            out.append(ProjectedEntry(entry, []))
            continue
        out.append(ProjectedEntry(entry, apply_edit(entry_to_messages(entry), edit_for(edits, entry))))
    return out


def project_context(
    path: Sequence[Entry], honour_retained_tail: bool = False
) -> tuple[list[ProjectedEntry], list[Any]]:
    """The projected context entries of a path, and a compaction's ``retainedTail`` messages (which
    follow the first entry when ``honour_retained_tail`` applies)."""
    selection = select_context(path, honour_retained_tail)
    return project_entries(selection.entries), selection.retained


def build_session_context(
    entries: Sequence[Entry],
    leaf_id: Any = UNDEFINED,
    honour_retained_tail: bool = False,
    index: dict[Any, Entry] | None = None,
) -> dict[str, Any]:
    """``{messages, thinkingLevel, model}`` for a leaf, as the agent sends it to the model."""
    by_id = build_entry_index(entries) if index is None else index
    path = build_session_path(entries, leaf_id, by_id)
    thinking_level, model = context_settings(path)
    projected, retained = project_context(path, honour_retained_tail)
    messages: list[Any] = []
    for n, item in enumerate(projected):
        messages.extend(item.messages)
        if n == 0:
            messages.extend(retained)
    result: dict[str, Any] = {"messages": messages}
    _put(result, "thinkingLevel", thinking_level)
    result["model"] = model
    return result
