"""Boundary groups of an agent-message list, and the orphans that make the governor fail closed.

An ``assistant`` message opens a group and each following ``toolResult`` answering one of its tool calls
joins it; every other message is a group by itself. A tool result that joins no open group is an orphan,
and so is a tool call (of an assistant message that did not error or abort) left without a result inside
its group. Errored and aborted assistant messages are dropped from requests anyway: such a message is a
group by itself, its tool calls need no results, and it closes the group before it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from piwork.core.messages import Message


@dataclass(frozen=True)
class Group:
    """Messages ``[start, end)`` of the partitioned list."""

    start: int
    end: int
    source: Sequence[Message] = field(repr=False, compare=False)

    @property
    def messages(self) -> tuple[Message, ...]:
        return tuple(self.source[self.start : self.end])

    @property
    def opener(self) -> Message:
        return self.source[self.start]


@dataclass(frozen=True)
class Orphan:
    kind: Literal["result", "call"]
    tool_call_id: str
    index: int  # position of the result, or of the assistant message holding the call

    def describe(self) -> str:
        what = "tool result without its call" if self.kind == "result" else "tool call without a result"
        return f"{what} ({self.tool_call_id or 'no id'})"


@dataclass(frozen=True)
class Partition:
    groups: tuple[Group, ...]
    orphans: tuple[Orphan, ...]

    @property
    def ok(self) -> bool:
        return not self.orphans


def is_failed_assistant(message: Message) -> bool:
    return message.get("role") == "assistant" and message.get("stopReason") in ("error", "aborted")


def tool_call_ids(message: Message) -> list[str]:
    content = message.get("content")
    if not isinstance(content, list):
        return []
    return [
        str(block.get("id", ""))
        for block in content
        if isinstance(block, dict) and block.get("type") == "toolCall"
    ]


def partition(messages: Sequence[Message]) -> Partition:
    groups: list[Group] = []
    orphans: list[Orphan] = []
    start = 0
    open_calls: set[str] | None = None  # ids still awaiting a result in the open assistant group
    open_index = -1

    def close(end: int) -> None:
        nonlocal open_calls
        if end > start:
            groups.append(Group(start, end, messages))
        if open_calls:
            orphans.extend(Orphan("call", call_id, open_index) for call_id in sorted(open_calls))
        open_calls = None

    for i, message in enumerate(messages):
        role = message.get("role")
        if role == "toolResult":
            call_id = message.get("toolCallId")
            if open_calls is not None and isinstance(call_id, str) and call_id in open_calls:
                open_calls.discard(call_id)
                continue
            close(i)
            start = i
            orphans.append(Orphan("result", call_id if isinstance(call_id, str) else "", i))
            continue
        close(i)
        start = i
        if role == "assistant" and not is_failed_assistant(message):
            open_calls = set(tool_call_ids(message))
            open_index = i
    close(len(messages))
    return Partition(tuple(groups), tuple(orphans))
