"""Approvals through a real runtime: each mode, each answer, saved rules, refusals the model reads."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from piwork.core.agent.tool_calls import BlockDecision, chain_hooks
from piwork.core.approvals import (
    NOBODY_TO_ASK_TEXT,
    READ_ONLY_TEXT,
    RULES_FILE_NAME,
    ApprovalAnswer,
    ApprovalRequest,
    ApprovalStore,
    ProjectRules,
)
from piwork.core.approvals.rules import command_matches, suggested_prefix
from piwork.core.workflows.runtime import AgentRuntime, create_runtime
from tests.support.loopback_server import LoopbackServer, Text, ToolCall, Turn
from tests.support.runtime_options import runtime_options

pytestmark = pytest.mark.anyio


@pytest.fixture
def server() -> Any:
    with LoopbackServer() as srv:
        yield srv


def set_rules(tmp_path: Path, rules: ProjectRules) -> None:
    ApprovalStore(tmp_path / "agent").update(str(tmp_path / "project"), lambda _r: rules)


def tool_results(body: Any) -> list[dict[str, Any]]:
    """The tool_result blocks of an Anthropic request body, in order."""
    return [
        block
        for message in body["messages"]
        if isinstance(message.get("content"), list)
        for block in message["content"]
        if block.get("type") == "tool_result"
    ]


def result_text(block: dict[str, Any]) -> str:
    content = block["content"]
    return content if isinstance(content, str) else "".join(c.get("text", "") for c in content)


Asker = Callable[[ApprovalRequest], Awaitable[ApprovalAnswer]]


async def run_one(
    tmp_path: Path, server: LoopbackServer, call: ToolCall, ask: Asker | None = None, **extra: Any
) -> AgentRuntime:
    server.script(Turn([call]), Turn([Text("Done.")]))
    runtime = await create_runtime(runtime_options(tmp_path, server, ask_approval=ask, **extra))
    await runtime.session.prompt("go")
    return runtime


def answering(*answers: ApprovalAnswer, seen: list[ApprovalRequest] | None = None) -> Asker:
    queue = list(answers)

    async def ask(request: ApprovalRequest) -> ApprovalAnswer:
        if seen is not None:
            seen.append(request)
        return queue.pop(0)

    return ask


async def never_asked(request: ApprovalRequest) -> ApprovalAnswer:
    raise AssertionError(f"asked about {request}")


async def test_run_everything_is_the_default_and_asks_nothing(tmp_path: Path, server: LoopbackServer) -> None:
    await run_one(tmp_path, server, ToolCall("bash", {"command": "echo hi > out.txt"}), never_asked)
    assert (tmp_path / "project" / "out.txt").read_text() == "hi\n"


async def test_read_only_refuses_bash_edit_and_write_and_lets_reads_run(
    tmp_path: Path, server: LoopbackServer
) -> None:
    (tmp_path / "project").mkdir()
    (tmp_path / "project" / "a.txt").write_text("alpha\n")
    set_rules(tmp_path, ProjectRules("read-only"))
    server.script(
        Turn(
            [
                ToolCall("bash", {"command": "echo hi > out.txt"}),
                ToolCall("edit", {"path": "a.txt", "edits": [{"oldText": "alpha", "newText": "beta"}]}),
                ToolCall("write", {"path": "new.txt", "content": "x"}),
                ToolCall("read", {"path": "a.txt"}),
            ]
        ),
        Turn([Text("Done.")]),
    )
    runtime = await create_runtime(runtime_options(tmp_path, server, ask_approval=never_asked))
    await runtime.session.prompt("go")
    project = tmp_path / "project"
    assert sorted(p.name for p in project.iterdir()) == ["a.txt"]
    assert (project / "a.txt").read_text() == "alpha\n"
    results = tool_results(server.requests[-1].body)
    assert [r.get("is_error", False) for r in results] == [True, True, True, False]
    assert all(result_text(r) == READ_ONLY_TEXT for r in results[:3])
    assert "alpha" in result_text(results[3])


async def test_an_approved_command_runs_with_its_folder_shown(tmp_path: Path, server: LoopbackServer) -> None:
    set_rules(tmp_path, ProjectRules("ask"))
    seen: list[ApprovalRequest] = []
    call = ToolCall("bash", {"command": "git status --short > out.txt"})
    await run_one(tmp_path, server, call, answering(ApprovalAnswer("approve"), seen=seen))
    assert [(r.tool, r.kind, r.command, r.cwd, r.suggestion) for r in seen] == [
        ("bash", "command", "git status --short > out.txt", str(tmp_path / "project"), "git status")
    ]
    assert (tmp_path / "project" / "out.txt").exists()


async def test_a_denial_reaches_the_model_with_its_reason_and_the_reply_goes_on(
    tmp_path: Path, server: LoopbackServer
) -> None:
    set_rules(tmp_path, ProjectRules("ask"))
    call = ToolCall("bash", {"command": "rm -rf build > gone.txt"})
    runtime = await run_one(
        tmp_path, server, call, answering(ApprovalAnswer("deny", "keep the build folder, run make clean"))
    )
    assert not (tmp_path / "project" / "gone.txt").exists()
    (result,) = tool_results(server.requests[-1].body)
    assert result["is_error"] is True
    assert result_text(result) == (
        "Not run: the user denied this bash call. Their reason: keep the build folder, run make clean"
    )
    assert runtime.session.messages[-1]["content"][0]["text"] == "Done."


async def test_an_edit_is_shown_as_its_diff_before_anything_is_written(
    tmp_path: Path, server: LoopbackServer
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "a.py").write_text("one\ntwo\nthree\n")
    set_rules(tmp_path, ProjectRules("ask"))
    on_disk_when_asked: list[str] = []
    seen: list[ApprovalRequest] = []

    async def ask(request: ApprovalRequest) -> ApprovalAnswer:
        on_disk_when_asked.append((project / "a.py").read_text())
        seen.append(request)
        return ApprovalAnswer("approve")

    edit = ToolCall("edit", {"path": "a.py", "edits": [{"oldText": "two", "newText": "TWO"}]})
    await run_one(tmp_path, server, edit, ask)
    assert on_disk_when_asked == ["one\ntwo\nthree\n"]
    change = seen[0].change
    assert change is not None and change.error is None and seen[0].suggestion == "a.py"
    assert change.diff == " 1 one\n-2 two\n+2 TWO\n 3 three"
    assert (project / "a.py").read_text() == "one\nTWO\nthree\n"


async def test_a_write_shows_a_new_file_and_an_edit_that_would_fail_says_why(
    tmp_path: Path, server: LoopbackServer
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "a.py").write_text("one\n")
    set_rules(tmp_path, ProjectRules("ask"))
    seen: list[ApprovalRequest] = []
    server.script(
        Turn(
            [
                ToolCall("write", {"path": "sub/new.txt", "content": "hello\n"}),
                ToolCall("edit", {"path": "a.py", "edits": [{"oldText": "missing", "newText": "x"}]}),
            ]
        ),
        Turn([Text("Done.")]),
    )
    ask = answering(ApprovalAnswer("deny"), ApprovalAnswer("deny"), seen=seen)
    runtime = await create_runtime(runtime_options(tmp_path, server, ask_approval=ask))
    await runtime.session.prompt("go")
    write, edit = (r.change for r in seen)
    assert write is not None and write.created and write.diff == "+1 hello"
    assert (
        edit is not None
        and edit.diff == ""
        and edit.error is not None
        and "Could not find the exact text in a.py" in edit.error
    )
    assert not (project / "sub").exists()


async def test_always_allow_is_saved_in_the_agent_folder_and_applies_next_time(
    tmp_path: Path, server: LoopbackServer
) -> None:
    set_rules(tmp_path, ProjectRules("ask"))
    call = ToolCall("bash", {"command": "touch one"})
    await run_one(tmp_path, server, call, answering(ApprovalAnswer("always", rule="touch")))
    saved = json.loads((tmp_path / "agent" / RULES_FILE_NAME).read_text())
    assert saved["projects"][str((tmp_path / "project").resolve())] == {
        "mode": "ask",
        "commands": ["touch"],
        "paths": [],
    }
    assert not list((tmp_path / "project").rglob("*.json"))  # nothing written into the project
    # a new session of the project: the rule answers, nobody is asked
    await run_one(tmp_path, server, ToolCall("bash", {"command": "touch two"}), never_asked)
    assert (tmp_path / "project" / "one").exists() and (tmp_path / "project" / "two").exists()
    # a chained command is not covered by the prefix
    await run_one(tmp_path, server, ToolCall("bash", {"command": "touch x; touch y"}), None)
    (result,) = tool_results(server.requests[-1].body)
    assert result_text(result) == NOBODY_TO_ASK_TEXT
    assert not (tmp_path / "project" / "y").exists() and not (tmp_path / "project" / "x").exists()


async def test_an_allowed_path_covers_edits_and_writes_under_it(
    tmp_path: Path, server: LoopbackServer
) -> None:
    set_rules(tmp_path, ProjectRules("ask", paths=("docs",)))
    await run_one(tmp_path, server, ToolCall("write", {"path": "docs/a.md", "content": "a"}), never_asked)
    assert (tmp_path / "project" / "docs" / "a.md").read_text() == "a"
    await run_one(tmp_path, server, ToolCall("write", {"path": "docsx/a.md", "content": "a"}), None)
    assert not (tmp_path / "project" / "docsx").exists()


async def test_rules_planted_in_the_project_are_ignored(tmp_path: Path, server: LoopbackServer) -> None:
    project = tmp_path / "project"
    (project / ".pi").mkdir(parents=True)
    planted = {"version": 1, "projects": {str(project.resolve()): {"mode": "run", "commands": ["touch"]}}}
    for name in (".pi/approvals.json", ".pi/" + RULES_FILE_NAME, RULES_FILE_NAME, ".pi/settings.json"):
        (project / name).write_text(json.dumps({**planted, "approvals": planted}))
    set_rules(tmp_path, ProjectRules("ask"))
    await run_one(tmp_path, server, ToolCall("bash", {"command": "touch planted"}), None, trust_override=True)
    assert not (project / "planted").exists()
    (result,) = tool_results(server.requests[-1].body)
    assert result_text(result) == NOBODY_TO_ASK_TEXT


async def test_nobody_to_ask_refuses_and_approve_all_runs(tmp_path: Path, server: LoopbackServer) -> None:
    set_rules(tmp_path, ProjectRules("ask"))
    await run_one(tmp_path, server, ToolCall("bash", {"command": "touch a"}))
    assert not (tmp_path / "project" / "a").exists()
    await run_one(tmp_path, server, ToolCall("bash", {"command": "touch a"}), approve_all=True)
    assert (tmp_path / "project" / "a").exists()


async def test_approve_all_does_not_open_a_read_only_project(tmp_path: Path, server: LoopbackServer) -> None:
    set_rules(tmp_path, ProjectRules("read-only"))
    await run_one(tmp_path, server, ToolCall("bash", {"command": "touch a"}), approve_all=True)
    assert not (tmp_path / "project" / "a").exists()


async def test_a_corrupt_rules_file_is_reported_kept_aside_and_counts_as_none(
    tmp_path: Path, server: LoopbackServer
) -> None:
    (tmp_path / "agent").mkdir()
    bad = tmp_path / "agent" / RULES_FILE_NAME
    bad.write_text('{"projects": {"/x": {"mode": "ask"')
    runtime = await run_one(tmp_path, server, ToolCall("bash", {"command": "touch ran"}), never_asked)
    assert (tmp_path / "project" / "ran").exists()  # no rules: Run everything
    assert not bad.exists()
    assert (
        tmp_path / "agent" / (RULES_FILE_NAME + ".bad")
    ).read_text() == '{"projects": {"/x": {"mode": "ask"'
    (warning,) = [w for w in runtime.file_warnings() if RULES_FILE_NAME in w]
    assert "kept as piwork-approvals.json.bad" in warning
    assert runtime.approvals is not None
    await runtime.approvals.set_mode("ask")  # saving works again, the bad file stays aside
    assert json.loads(bad.read_text())["projects"][str((tmp_path / "project").resolve())]["mode"] == "ask"


@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
async def test_a_rules_file_that_is_no_regular_file_is_set_aside_at_once(
    tmp_path: Path, server: LoopbackServer, kind: str
) -> None:
    """A FIFO would block the read for ever and /dev/zero never ends: neither is read, both are put aside."""
    (tmp_path / "agent").mkdir()
    bad = tmp_path / "agent" / RULES_FILE_NAME
    if kind == "fifo":
        os.mkfifo(bad)
    else:
        bad.symlink_to("/dev/zero")
    runtime = await run_one(tmp_path, server, ToolCall("bash", {"command": "touch ran"}), never_asked)
    assert (tmp_path / "project" / "ran").exists()  # no rules: Run everything
    assert not bad.exists() and not bad.is_symlink()
    (warning,) = [w for w in runtime.file_warnings() if RULES_FILE_NAME in w]
    assert "not a regular file" in warning and "kept as piwork-approvals.json.bad" in warning


async def test_stop_ends_a_waiting_call_with_the_aborted_result(
    tmp_path: Path, server: LoopbackServer
) -> None:
    set_rules(tmp_path, ProjectRules("ask"))
    asked = asyncio.Event()
    cancelled: list[bool] = []

    async def ask(request: ApprovalRequest) -> ApprovalAnswer:
        asked.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.append(True)
            raise
        raise AssertionError("unreachable")

    server.script(Turn([ToolCall("bash", {"command": "touch a"})]))
    runtime = await create_runtime(runtime_options(tmp_path, server, ask_approval=ask))
    running = asyncio.ensure_future(runtime.session.prompt("go"))
    await asyncio.wait_for(asked.wait(), 10)
    await runtime.session.abort()
    await asyncio.wait_for(running, 10)
    result = runtime.session.messages[-1]
    assert result["role"] == "toolResult" and result["isError"] is True
    assert result["content"] == [{"type": "text", "text": "Operation aborted"}]
    assert cancelled == [True] and not (tmp_path / "project" / "a").exists()


async def test_hooks_after_the_approval_see_only_allowed_calls(
    tmp_path: Path, server: LoopbackServer
) -> None:
    set_rules(tmp_path, ProjectRules("ask"))
    after: list[str] = []

    async def snapshot(call: dict[str, Any], args: dict[str, Any]) -> BlockDecision | None:
        after.append(args["command"])
        return None

    server.script(
        Turn([ToolCall("bash", {"command": "touch a"}), ToolCall("bash", {"command": "touch b"})]),
        Turn([Text("Done.")]),
    )
    ask = answering(ApprovalAnswer("deny"), ApprovalAnswer("approve"))
    runtime = await create_runtime(
        runtime_options(tmp_path, server, ask_approval=ask, after_approval=(snapshot,))
    )
    await runtime.session.prompt("go")
    assert after == ["touch b"]


async def test_chain_hooks_asks_in_order_until_one_blocks() -> None:
    asked: list[str] = []

    def hook(name: str, block: bool) -> Any:
        async def run(call: dict[str, Any], args: dict[str, Any]) -> BlockDecision | None:
            asked.append(name)
            return BlockDecision(name) if block else None

        return run

    assert chain_hooks() is None and chain_hooks(None) is None
    chained = chain_hooks(hook("a", False), None, hook("b", True), hook("c", False))
    assert chained is not None
    assert await chained({}, {}) == BlockDecision("b")
    assert asked == ["a", "b"]


def test_command_rules_match_whole_words_of_one_plain_command() -> None:
    assert command_matches("pytest -q tests", "pytest")
    assert command_matches("git  status", "git status")
    assert not command_matches("pytest-watch", "pytest")
    assert not command_matches("git statusx", "git status")
    for chained in ("pytest && rm x", "pytest; rm x", "pytest | sh", "pytest $(rm x)", "pytest `rm x`"):
        assert not command_matches(chained, "pytest")
    assert not command_matches("pytest > /etc/x", "pytest")
    assert not command_matches("pytest\nrm x", "pytest")
    assert suggested_prefix("git status --short") == "git status"
    assert suggested_prefix("pytest -q") == "pytest"
    assert suggested_prefix("./run.sh a") == "./run.sh"
    assert suggested_prefix("touch one") == "touch"
    assert suggested_prefix("npm test -- --watch") == "npm test"
