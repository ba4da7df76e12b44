"""Pi 1.6's system messages as prompt state: replaying them, and declaring a tool set's changes."""

from __future__ import annotations

from typing import Any

from piwork.core.session.records import make_record
from piwork.core.session.system_messages import (
    current_system_message,
    recorded_tool_names,
    tool_declaration,
    tool_set_update,
)

READ = tool_declaration(
    "read", "Read a file.", {"type": "object", "properties": {"path": {"type": "string"}}}
)
LS = tool_declaration("ls", "List a folder.", {"type": "object", "properties": {}})
GREP = tool_declaration("grep", "Search.", {"type": "object", "properties": {}})


def _system(**fields: Any) -> dict[str, Any]:
    return {"role": "system", "content": "", "timestamp": 1, **fields}


def test_replaying_patches_sections_and_tools_in_order() -> None:
    messages = [
        _system(content="lead", sections={"a": "A", "b": "B"}, toolsAdded=[READ, LS]),
        {"role": "user", "content": "q"},
        _system(sections={"a": None, "c": "C"}, toolsRemoved=[LS], toolsAdded=[GREP]),
    ]
    assert current_system_message(messages) == {
        "role": "system",
        "content": "lead",
        "sections": {"b": "B", "c": "C"},
        "toolsAdded": [READ, GREP],
        "timestamp": 1,
    }
    assert recorded_tool_names(messages) == ["read", "grep"]
    assert recorded_tool_names([{"role": "user", "content": "q"}]) is None  # nothing declared
    assert recorded_tool_names([_system(sections={"a": "A"})]) == []  # declared: no tools


def test_a_tool_set_update_declares_only_the_changes() -> None:
    assert tool_set_update([READ, LS], [READ, LS], 5) is None
    assert tool_set_update([], [READ], 5) == {
        "role": "system",
        "content": "",
        "toolsAdded": [READ],
        "timestamp": 5,
    }
    assert tool_set_update([READ, LS], [READ, GREP], 5) == {
        "role": "system", "content": "", "toolsAdded": [GREP], "toolsRemoved": [LS], "timestamp": 5,
    }  # fmt: skip
    reworded = {**READ, "description": "Read one file."}
    assert tool_set_update([READ], [reworded], 5) == {
        "role": "system", "content": "", "toolsAdded": [reworded], "toolsRemoved": [READ], "timestamp": 5,
    }  # fmt: skip


def test_a_tools_only_system_message_previews_its_changes() -> None:
    entry = {"type": "message", "id": "s1", "parentId": None, "timestamp": "2026-01-01T00:00:00.000Z"}
    added = make_record({**entry, "message": _system(toolsAdded=[READ, GREP], toolsRemoved=[LS])}, 1)
    assert added.preview == "tools +read +grep −ls"
    sections = make_record({**entry, "message": _system(sections={"preamble": "x", "tools": "y"})}, 1)
    assert sections.preview == "sections preamble, tools"
    assert make_record({**entry, "message": _system(content="You are…")}, 1).preview == "You are…"
