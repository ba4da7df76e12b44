"""Leaving a failed attempt out of the model's context for good, as Pi 1.6 does.

When a reply fails and the run tries again (a transient error retried, or a context overflow
compacted and retried), the failed reply and the results of its tool calls stay in the session file
but are left out of every later request: a ``context_edit`` entry with ``replacement: null`` is
written for each. Pi and piwork both honour those edits, so a reopened session does not send the
failed attempt again (which, for an overflow, is the very content that did not fit).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from piwork.core.messages import Message
from piwork.core.session.records import EntryRecord
from piwork.core.session.store import append_written
from piwork.core.session.tree import SessionTree


class OmissionHost(Protocol):
    @property
    def tree(self) -> SessionTree: ...
    @property
    def messages(self) -> list[Message]: ...
    @property
    def read_only_reason(self) -> str | None: ...
    def replace_messages(self, messages: list[Message]) -> None: ...


def _call_ids(message: Message) -> set[Any]:
    content = message.get("content")
    blocks = content if isinstance(content, list) else []
    return {b.get("id") for b in blocks if isinstance(b, dict) and b.get("type") == "toolCall"}


def _attempt(messages: Sequence[Message], message: Message) -> list[Message]:
    """The failed reply and the results of its tool calls that follow it in the context."""
    index = next((i for i, m in enumerate(messages) if m is message), None)
    if index is None:
        index = next((i for i in range(len(messages) - 1, -1, -1) if messages[i] == message), None)
    if index is None:
        return [message]
    calls = _call_ids(message)
    out = [messages[index]]
    for later in messages[index + 1 :]:
        if later.get("role") == "assistant":
            break
        if later.get("role") == "toolResult" and later.get("toolCallId") in calls:
            out.append(later)
    return out


def _entry_ids(tree: SessionTree, targets: Sequence[Message]) -> list[str]:
    """Ids of the branch's message entries holding ``targets`` (the newest match for each)."""
    found: list[str] = []
    path: list[EntryRecord] = [r for r in tree.path() if r.type == "message"]
    for target in targets:
        role = target.get("role")
        for record in reversed(path):
            if record.role != role or not isinstance(record.id, str) or record.id in found:
                continue
            body = tree.body(record)
            stored = body.get("message") if isinstance(body, dict) else None
            if stored is target or stored == target:
                found.append(record.id)
                break
    return found


async def omit_failed_attempt(host: OmissionHost, message: Message) -> list[str]:
    """Leave ``message`` (a failed reply) and its tool results out of the context; returns the ids of
    the ``context_edit`` entries written (none for a session that cannot be written)."""
    messages = host.messages
    targets = _attempt(messages, message)
    written: list[str] = []
    if host.read_only_reason is None:
        tree = host.tree
        ids = _entry_ids(tree, targets)

        def append() -> list[str]:
            return [tree.append_context_edit(entry_id, None) for entry_id in ids]

        written = await append_written(tree, append)
    left_out = {id(m) for m in targets}
    host.replace_messages([m for m in messages if id(m) not in left_out and m not in targets])
    return written
