"""What each built-in tool declares about itself holds when the tool runs, and the engine's consumers
(the task contract, elision, summaries' file lists, branch activity) take their tool lists from it."""

from __future__ import annotations

from pathlib import Path

import pytest

from piwork.core.compaction.file_ops import FileOps
from piwork.core.context.contract import READ_ONLY_TOOLS, TaskContract, allowed_tools
from piwork.core.context.elision import call_command, classify, main_argument
from piwork.core.session.branch_activity import branch_activity
from piwork.core.tools import ToolFacts, tool_facts
from piwork.core.tools.registry import ALL_TOOL_NAMES, BUILTIN_TOOLS, create_default_tools
from tests.core.tools.helpers import call

CALLS = {
    "read": {"path": "a.txt"},
    "bash": {"command": "echo hi > made.txt"},
    "edit": {"path": "a.txt", "edits": [{"oldText": "one", "newText": "uno"}]},
    "write": {"path": "b.txt", "content": "new\n"},
    "grep": {"pattern": "one", "path": "."},
    "find": {"pattern": "*.txt", "path": "."},
    "ls": {"path": "."},
}


def _snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("name", ALL_TOOL_NAMES)
def test_declared_facts_hold_when_the_tool_runs(tmp_path: Path, name: str) -> None:
    (tmp_path / "a.txt").write_text("one\ntwo\n")
    before = _snapshot(tmp_path)
    facts = tool_facts(name)
    outcome = call(name, CALLS[name], tmp_path, log_dir=None)
    assert not outcome.is_error, outcome.content
    changed = {p for p, data in _snapshot(tmp_path).items() if before.get(p) != data}
    if facts.read_only:
        assert changed == set()
    if facts.changes_files:
        assert facts.path_argument is not None
        assert changed == {CALLS[name][facts.path_argument]}
    if facts.command_argument is not None:
        assert changed == {"made.txt"}  # the command ran


@pytest.mark.parametrize("tool", BUILTIN_TOOLS)
def test_named_arguments_are_parameters_of_the_tool(tool: type) -> None:
    facts: ToolFacts = tool.facts
    properties = tool.parameters["properties"]
    for argument in (facts.path_argument, facts.pattern_argument, facts.command_argument):
        assert argument is None or argument in properties
    assert not (facts.read_only and facts.changes_files)
    assert facts.file_action is None or facts.path_argument is not None


def test_unknown_tools_declare_nothing() -> None:
    assert tool_facts("mystery") == ToolFacts()
    assert create_default_tools(["read"]).facts("bash") == ToolFacts()
    assert create_default_tools(["read"]).facts("read") == tool_facts("read")


def test_consumers_take_their_lists_from_the_facts() -> None:
    assert READ_ONLY_TOOLS == ("read", "grep", "find", "ls")
    contract = TaskContract("t", "g", "source-write", "implement", "now")
    assert allowed_tools(contract, ALL_TOOL_NAMES) == ["read", "bash", "grep", "find", "ls"]
    assert [n for n in ALL_TOOL_NAMES if classify(n, CALLS[n]) == "read"] == ["read", "grep", "find", "ls"]
    assert call_command("bash", {"command": " make "}) == "make"
    assert call_command("mystery", {"command": "make"}) == ""
    assert main_argument("grep", {"pattern": "x", "path": "src"}) == "x in src"
    assert main_argument("read", {"path": "a.py", "offset": 5}) == "a.py offset=5"

    ops = FileOps()
    ops.add_from_message(
        {
            "role": "assistant",
            "content": [{"type": "toolCall", "name": n, "arguments": CALLS[n]} for n in CALLS],
        }
    )
    assert ops.to_json() == {"read": ["a.txt"], "written": ["b.txt"], "edited": ["a.txt"]}


def test_branch_activity_reads_file_actions_and_commands_from_the_facts(tmp_path: Path) -> None:
    calls = [
        {"type": "toolCall", "id": f"c{i}", "name": n, "arguments": CALLS[n]} for i, n in enumerate(CALLS)
    ]
    entries: list[dict[str, object]] = [
        {"type": "message", "id": "a", "message": {"role": "assistant", "content": calls}}
    ]
    for i, name in enumerate(CALLS):
        result = {
            "role": "toolResult",
            "toolCallId": f"c{i}",
            "toolName": name,
            "content": [],
            "isError": False,
        }
        entries.append({"type": "message", "id": f"r{i}", "message": result})
    activity = branch_activity(entries, str(tmp_path))
    assert [(t.path, t.action) for t in activity.touches] == [
        ("a.txt", "read"),
        ("a.txt", "edit"),
        ("b.txt", "write"),
    ]
    assert [c.command for c in activity.commands] == ["echo hi > made.txt"]
