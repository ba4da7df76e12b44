"""System messages in a session: the prompt state Pi 1.6 records in the transcript.

Pi 1.6 writes a ``message`` entry with ``role: "system"`` when a session starts and whenever the
system prompt or the tool set changes (``content``, named ``sections`` that later messages patch,
``toolsAdded``/``toolsRemoved``), and a compaction carries the replayed state as ``systemMessage``.
They are never sent as conversation messages; piwork builds its own system prompt, and counts the
recorded prompt in token estimates as Pi does.

piwork records the tool set the same way (:func:`tool_set_update`, no prompt text: the prompt is each
program's own), so either program reopening the session restores the tools it ran with
(:func:`recorded_tool_names`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any


def is_system_message(message: Any) -> bool:
    return isinstance(message, Mapping) and message.get("role") == "system"


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            b["text"]
            for b in content
            if isinstance(b, Mapping) and b.get("type") == "text" and isinstance(b.get("text"), str)
        )
    return ""


def _tool_name(tool: Any) -> Any:
    return tool.get("name") if isinstance(tool, Mapping) else None


def current_tools(messages: Iterable[Any]) -> list[Any]:
    """The tools in force after replaying every system message's removals and additions in order."""
    tools: dict[Any, Any] = {}
    for message in messages:
        if not is_system_message(message):
            continue
        for tool in message.get("toolsRemoved") or ():
            tools.pop(_tool_name(tool), None)
        for tool in message.get("toolsAdded") or ():
            tools[_tool_name(tool)] = tool
    return list(tools.values())


def current_system_message(messages: Iterable[Any]) -> dict[str, Any] | None:
    """All system messages replayed into one: texts joined by blank lines, sections patched by name
    (``null`` removes one), the tools in force; None when there is no system message or tool."""
    listed = list(messages)
    content: list[str] = []
    sections: dict[str, Any] = {}
    timestamp: Any = None
    seen = False
    for message in listed:
        if not is_system_message(message):
            continue
        if not seen:
            seen, timestamp = True, message.get("timestamp")
        text = _content_text(message.get("content"))
        if text:
            content.append(text)
        patch = message.get("sections")
        for name, value in patch.items() if isinstance(patch, Mapping) else ():
            if value is None:
                sections.pop(name, None)
            else:
                sections[name] = value
    tools = current_tools(listed)
    if not seen and not tools:
        return None
    out: dict[str, Any] = {"role": "system", "content": "\n\n".join(content)}
    if sections:
        out["sections"] = sections
    if tools:
        out["toolsAdded"] = tools
    out["timestamp"] = timestamp if timestamp is not None else 0
    return out


def tool_declaration(name: str, description: str, parameters: Mapping[str, Any]) -> dict[str, Any]:
    """A tool as a system message declares it: what the model is told, nothing executable."""
    return {"name": name, "description": description, "parameters": json.loads(json.dumps(parameters))}


def _same_declaration(left: Any, right: Any) -> bool:
    return json.dumps(left, sort_keys=True) == json.dumps(right, sort_keys=True)


def tool_set_update(
    recorded: Sequence[Mapping[str, Any]], current: Sequence[Mapping[str, Any]], timestamp: int
) -> dict[str, Any] | None:
    """The system message that takes the ``recorded`` tools to the ``current`` ones (a changed
    definition is removed and added again), or None when they declare the same."""
    before = {_tool_name(tool): tool for tool in recorded}
    after = {_tool_name(tool): tool for tool in current}
    removed = [
        dict(tool)
        for name, tool in before.items()
        if name not in after or not _same_declaration(tool, after[name])
    ]
    added = [
        dict(tool)
        for name, tool in after.items()
        if name not in before or not _same_declaration(tool, before[name])
    ]
    if not added and not removed:
        return None
    message: dict[str, Any] = {"role": "system", "content": ""}
    if added:
        message["toolsAdded"] = added
    if removed:
        message["toolsRemoved"] = removed
    message["timestamp"] = timestamp
    return message


def recorded_tool_names(messages: Iterable[Any]) -> list[str] | None:
    """The names of the tools the system messages leave in force, or None when none declares a tool
    set (a session without system messages keeps the tools it is opened with)."""
    listed = [m for m in messages if is_system_message(m)]
    if not listed:
        return None
    return [name for name in map(_tool_name, current_tools(listed)) if isinstance(name, str)]
