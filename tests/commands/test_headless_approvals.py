"""``piwork -p`` in a project that asks first: never waits; refuses with a clear result unless --yes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from piwork.core.approvals import NOBODY_TO_ASK_TEXT, READ_ONLY_TEXT, ApprovalStore, ProjectRules
from tests.commands.test_headless import Env
from tests.support.loopback_server import LoopbackServer, Text, ToolCall, Turn


@pytest.fixture
def server() -> Any:
    with LoopbackServer() as srv:
        yield srv


@pytest.fixture
def env(tmp_path: Path) -> Env:
    return Env(tmp_path)


def asking(env: Env, mode: Any = "ask") -> None:
    ApprovalStore(env.agent).update(str(env.cwd), lambda _r: ProjectRules(mode))


def last_tool_result(server: LoopbackServer) -> dict[str, Any]:
    (block,) = [
        b
        for m in server.requests[-1].body["messages"]
        if isinstance(m.get("content"), list)
        for b in m["content"]
        if b.get("type") == "tool_result"
    ]
    return block


def tool_result_text(block: dict[str, Any]) -> str:
    content = block["content"]
    return content if isinstance(content, str) else "".join(c.get("text", "") for c in content)


def test_an_ask_is_refused_without_yes_and_the_reply_goes_on(server: LoopbackServer, env: Env) -> None:
    asking(env)
    server.script(Turn([ToolCall("bash", {"command": "touch made"})]), Turn([Text("Could not run it.")]))
    done = env.call("-p", "make it", *env.args(server, "anthropic"))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "Could not run it."
    assert not (env.cwd / "made").exists()
    result = last_tool_result(server)
    assert result["is_error"] is True and tool_result_text(result) == NOBODY_TO_ASK_TEXT


def test_yes_allows_what_the_project_asks_about(server: LoopbackServer, env: Env) -> None:
    asking(env)
    server.script(Turn([ToolCall("bash", {"command": "touch made"})]), Turn([Text("Made.")]))
    done = env.run("-p", "make it", "--yes", *env.args(server, "anthropic"))
    assert done.returncode == 0, done.stderr
    assert (env.cwd / "made").exists()


def test_yes_does_not_open_a_read_only_project(server: LoopbackServer, env: Env) -> None:
    asking(env, "read-only")
    server.script(Turn([ToolCall("write", {"path": "x.txt", "content": "x"})]), Turn([Text("No.")]))
    done = env.call("-p", "write it", "-y", *env.args(server, "anthropic"))
    assert done.returncode == 0, done.stderr
    assert not (env.cwd / "x.txt").exists()
    assert tool_result_text(last_tool_result(server)) == READ_ONLY_TEXT


def test_help_names_the_yes_flag(env: Env) -> None:
    done = env.run("-p", "x", "--help")
    assert done.returncode == 0
    assert "-y, --yes" in done.stdout and "nobody is there to ask" in " ".join(done.stdout.split())
