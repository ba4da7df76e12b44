"""``defaultTools`` in real settings files, layered global then project, and the session's starting tools."""

from __future__ import annotations

import json

import pytest

from piwork.core.settings import Settings
from piwork.core.tool_selection import (
    ToolListError,
    apply_tool_modifiers,
    merge_default_tools,
    resolve_default_tools,
    session_tool_names,
    tool_list_error,
)
from piwork.core.tools.registry import ALL_TOOL_NAMES

from .conftest import Tree


def _settings(tree: Tree, global_tools: object = None, project_tools: object = None) -> Settings:
    if global_tools is not None:
        tree.write("home/.pi/agent/settings.json", json.dumps({"defaultTools": global_tools}))
    if project_tools is not None:
        tree.write("proj/.pi/settings.json", json.dumps({"defaultTools": project_tools}))
    tree.mkdir("proj")
    return Settings.for_project(str(tree.root / "proj"), str(tree.agent), project_trusted=True)


@pytest.mark.parametrize(
    ("global_tools", "project_tools", "expected"),
    [
        (None, None, None),
        (["read", "grep"], None, ["read", "grep"]),
        (["-bash", "+grep"], None, ["read", "edit", "write", "grep"]),
        (["read", "ls"], ["-ls", "+find"], ["read", "find"]),  # modifiers change the global list
        (["-write"], ["+ls"], ["read", "bash", "edit", "ls"]),  # both layers only modifiers
        (["read", "ls"], ["bash"], ["bash"]),  # plain names replace the global list
        ([], None, []),
        (["+read"], None, ["read", "bash", "edit", "write"]),  # adding one already there
        (["read", 7, "grep"], None, ["read", "grep"]),  # entries that are not text are ignored
    ],
)
def test_default_tools_layered(
    tree: Tree, global_tools: object, project_tools: object, expected: list[str] | None
) -> None:
    assert _settings(tree, global_tools, project_tools).default_tools() == expected


def test_an_untrusted_project_does_not_change_the_tools(tree: Tree) -> None:
    tree.write("home/.pi/agent/settings.json", json.dumps({"defaultTools": ["read"]}))
    tree.write("proj/.pi/settings.json", json.dumps({"defaultTools": ["+bash"]}))
    settings = Settings.for_project(str(tree.root / "proj"), str(tree.agent), project_trusted=False)
    assert settings.default_tools() == ["read"]


def test_a_value_that_is_not_a_list_selects_no_tools_and_says_so(tree: Tree) -> None:
    settings = _settings(tree, "read")
    assert settings.default_tools() == []
    assert settings.type_warnings == [
        f'{tree.agent / "settings.json"}: defaultTools must be a list of tool names (got "read"); '
        "no tools are active"
    ]
    assert _settings(tree, ["read"]).type_warnings == []


def test_project_null_selects_no_tools(tree: Tree) -> None:
    tree.write("home/.pi/agent/settings.json", json.dumps({"defaultTools": ["read"]}))
    tree.write("proj/.pi/settings.json", '{"defaultTools": null}')
    settings = Settings.for_project(str(tree.root / "proj"), str(tree.agent), project_trusted=True)
    assert settings.default_tools() == []


def test_pure_helpers() -> None:
    assert merge_default_tools(["a"], None) is None  # a layer's null replaces
    assert merge_default_tools(None, ["+a"]) == ["+a"]
    assert merge_default_tools(["a"], ["+b", "-a"]) == ["a", "+b", "-a"]
    assert merge_default_tools(["a"], ["b", "+c"]) == ["b", "+c"]
    assert merge_default_tools("x", ["+b"]) == ["+b"]
    assert resolve_default_tools(["-read", "+read"]) == ["bash", "edit", "write", "read"]
    assert resolve_default_tools(["ls", "+grep", "-ls"]) == ["grep"]
    assert apply_tool_modifiers(["a"], ["+", "-", "+a", "-b"]) == ["a"]
    assert tool_list_error(["read", "bash"]) is None
    assert tool_list_error(["+read", "-bash"]) is None
    assert tool_list_error(["read", "-bash"]) == "tool names cannot be mixed with +name or -name entries"
    assert tool_list_error(["+gr*"]) == "+name and -name entries take exact tool names, not patterns: +gr*"


def test_session_tool_names() -> None:
    names = ALL_TOOL_NAMES
    assert session_tool_names(names) == ["read", "bash", "edit", "write"]
    assert session_tool_names(names, ["read", "grep"]) == ["read", "grep"]
    # an allowlist replaces the selection; a pattern activates every tool it matches
    assert session_tool_names(names, ["read"], tools=["ls", "f*"]) == ["ls", "find"]
    assert session_tool_names(names, ["read"], tools=["+ls", "-read"]) == ["ls"]
    assert session_tool_names(names, ["read", "bash"], no_tools=True) == []
    assert session_tool_names(names, ["read"], tools=["+grep"], no_tools=True) == ["grep"]
    assert session_tool_names(names, exclude=["b*", "write"]) == ["read", "edit"]
    # names piwork has no tool for (Pi's tool_search, codemode, MCP tools) are left out quietly
    assert session_tool_names(names, ["read", "tool_search", "codemode", "mcp__x__y"]) == ["read"]
    assert session_tool_names(names, tools=["*"]) == list(names)
    with pytest.raises(ToolListError, match="cannot be mixed"):
        session_tool_names(names, tools=["read", "+bash"])
