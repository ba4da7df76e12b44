"""Which chat row shows a session entry: an entry picked in the branch graph is shown in the chat too.

The chat lists the active path's messages (the presenter remembers the first row of each); an entry
is matched to its message by role and time stamp (a tool result also by its call id), a branch
summary or compaction by its summary. Entries of other branches have no row.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

_SUMMARY_ROLES = {"branch_summary": "branchSummary", "compaction": "compactionSummary"}


def chat_row_of_entry(entry: Any, shown: Iterable[tuple[dict[str, Any], int]]) -> int | None:
    """Key of the chat row showing `entry` among `shown` ((message, row key) pairs), newest first."""
    if not isinstance(entry, dict):
        return None
    candidates: list[tuple[dict[str, Any], int]] = list(shown)
    kind = entry.get("type")
    if kind in _SUMMARY_ROLES:
        summary_role, summary = _SUMMARY_ROLES[str(kind)], entry.get("summary")
        for message, key in reversed(candidates):
            if message.get("role") == summary_role and message.get("summary") == summary:
                return int(key)
        return None
    wanted = entry.get("message") if kind in ("message", "custom_message") else None
    if kind == "custom_message":
        wanted = {"role": "custom", "customType": entry.get("customType"), "content": entry.get("content")}
    if not isinstance(wanted, dict):
        return None
    role, stamp, call_id = wanted.get("role"), wanted.get("timestamp"), wanted.get("toolCallId")
    for message, key in reversed(candidates):
        if message.get("role") != role:
            continue
        if role == "custom":
            if (
                message.get("customType") == wanted["customType"]
                and message.get("content") == wanted["content"]
            ):
                return int(key)
        elif message.get("timestamp") == stamp and (
            role != "toolResult" or message.get("toolCallId") == call_id
        ):
            return int(key)
    return None
