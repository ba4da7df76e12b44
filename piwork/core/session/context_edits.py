"""Context edits: changing what the model sees of an earlier entry without rewriting history.

A ``context_edit`` entry (``targetId``, ``replacement``) names an earlier message of the branch. The
latest edit of a target among the context entries wins: ``replacement: null`` leaves the target out
of the model's context, ``{"content": ...}`` swaps only its content (a string given for an assistant
message or a tool result is stored as one text block, as Pi writes it). The file keeps the original
message; only the projection changes. Pi 1.6 writes and honours these entries, so both programs
see the same context when they continue each other's sessions.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from piwork.core.errors import PiworkError
from piwork.core.jscompat import UNDEFINED
from piwork.core.session.jsvalues import map_key

Entry = Any

CONTEXT_EDIT = "context_edit"
# Roles whose content an edit replaces; summaries and system messages keep theirs.
EDITABLE_ROLES = frozenset({"user", "assistant", "toolResult", "custom"})
_BLOCK_ROLES = frozenset({"assistant", "toolResult"})  # a string replacement becomes one text block


class ContextEditRejected(PiworkError):
    """A context edit that cannot be written (unknown target, not on the branch, nothing to edit)."""


def is_context_edit(entry: Entry) -> bool:
    return type(entry) is dict and entry.get("type") == CONTEXT_EDIT


def latest_edits(entries: Iterable[Entry]) -> dict[Any, Entry]:
    """The newest ``context_edit`` per target among ``entries`` (keys with ``Map`` semantics)."""
    edits: dict[Any, Entry] = {}
    for entry in entries:
        if is_context_edit(entry):
            edits[map_key(entry.get("targetId", UNDEFINED))] = entry
    return edits


def edit_for(edits: dict[Any, Entry], entry: Entry) -> Entry | None:
    if not edits or type(entry) is not dict:
        return None
    return edits.get(map_key(entry.get("id", UNDEFINED)))


def _replacement_content(role: Any, replacement: Any) -> Any:
    content = replacement.get("content", UNDEFINED) if type(replacement) is dict else UNDEFINED
    if role in _BLOCK_ROLES and type(content) is str:
        return [{"type": "text", "text": content}]
    return content


def apply_edit(messages: Sequence[Any], edit: Entry | None) -> list[Any]:
    """``messages`` (one entry's projection) as the edit leaves them: none, or with new content."""
    if edit is None:
        return list(messages)
    replacement = edit.get("replacement", UNDEFINED) if type(edit) is dict else UNDEFINED
    if replacement is None:
        return []
    out: list[Any] = []
    for message in messages:
        role = message.get("role") if type(message) is dict else None
        if role not in EDITABLE_ROLES:
            out.append(message)
            continue
        content = _replacement_content(role, replacement)
        edited = dict(message)
        if content is UNDEFINED:
            edited.pop("content", None)  # JavaScript spreads ``undefined``: the key reads as missing
        else:
            edited["content"] = content
        out.append(edited)
    return out


def editable_role(entry: Entry) -> str | None:
    """The role an edit of ``entry`` would change (``custom`` for a custom message), else None."""
    if type(entry) is not dict:
        return None
    kind = entry.get("type")
    if kind == "custom_message":
        return "custom"
    if kind == "message":
        message = entry.get("message")
        role = message.get("role") if type(message) is dict else None
        if role in ("user", "assistant", "toolResult"):
            return str(role)
    return None


def normalized_replacement(role: str, content: Any) -> dict[str, Any] | None:
    """The ``replacement`` value written for new ``content`` (None: leave the target out).

    Raises ``ContextEditRejected`` for content that is neither text nor a list of blocks.
    """
    if content is None:
        return None
    if not isinstance(content, str | list):
        raise ContextEditRejected("A replacement must be text or a list of content blocks")
    if role in _BLOCK_ROLES and isinstance(content, str):
        return {"content": [{"type": "text", "text": content}]}
    return {"content": content}


@dataclass(frozen=True)
class ActiveEdit:
    """An edit in force on a branch: which entry it changes, and how (``replacement`` None: left out)."""

    edit_id: str
    target_id: str
    replacement: dict[str, Any] | None
    timestamp: Any

    @property
    def leaves_out(self) -> bool:
        return self.replacement is None

    def to_json(self) -> dict[str, Any]:
        return {
            "editId": self.edit_id,
            "targetId": self.target_id,
            "action": "leave-out" if self.leaves_out else "replace",
            "replacement": self.replacement,
            "timestamp": self.timestamp,
        }


def original_content(entry: Entry) -> Any:
    """The content a target entry holds in the file (``UNDEFINED`` when it has none)."""
    if type(entry) is not dict:
        return UNDEFINED
    if entry.get("type") == "custom_message":
        return entry.get("content", UNDEFINED)
    message = entry.get("message")
    return message.get("content", UNDEFINED) if type(message) is dict else UNDEFINED


def is_restore(edit: Entry, target: Entry) -> bool:
    """Whether ``edit`` gives ``target`` back its own content (how "restore" is written: the latest
    edit wins, so a replacement equal to the original undoes the earlier ones for Pi as well)."""
    replacement = edit.get("replacement") if type(edit) is dict else None
    if type(replacement) is not dict or set(replacement) != {"content"}:
        return False
    return bool(replacement["content"] == original_content(target))


def active_edits(context_entries: Iterable[Entry]) -> list[ActiveEdit]:
    """The edits in force among a branch's context entries, in the order their targets appear
    (a restore, which gives a target back its own content, is not listed)."""
    entries = list(context_entries)
    edits = latest_edits(entries)
    out: list[ActiveEdit] = []
    for entry in entries:
        edit = edit_for(edits, entry)
        if edit is None or is_restore(edit, entry):
            continue
        replacement = edit.get("replacement")
        out.append(
            ActiveEdit(
                edit_id=str(edit.get("id")),
                target_id=str(entry.get("id")),
                replacement=replacement if type(replacement) is dict else None,
                timestamp=edit.get("timestamp"),
            )
        )
    return out
