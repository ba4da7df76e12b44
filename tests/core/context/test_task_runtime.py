"""A task in a real runtime: bundle before the prompt, tool rules, and the verifier gate on the model's bash."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from piwork.core.context.contract import CONTEXT_TOOLS, TaskContract
from piwork.core.workflows.runtime import create_runtime
from piwork.core.workflows.tasks import begin_task, set_phase, set_verify
from tests.support.loopback_server import LoopbackServer, Text, ToolCall, Turn
from tests.support.runtime_options import runtime_options

pytestmark = pytest.mark.anyio


def _contract(**kw: Any) -> TaskContract:
    data = {"title": "Look", "goal": "find the entry point", "mode": "read-only", "phase": "scout"}
    data.update(kw)
    return TaskContract.from_json(data)


def _tools(request: Any) -> list[str]:
    return [t["name"] for t in request.body.get("tools", [])]


async def test_read_only_task_sends_bundle_first_and_only_reading_tools(
    server: LoopbackServer, tmp_path: Path, task_project: Path
) -> None:
    runtime = await create_runtime(runtime_options(tmp_path, server, trust_override=True))
    session = runtime.session
    started = begin_task(session, runtime.resources, _contract())
    reading = ["read", "grep", "find", "ls", *CONTEXT_TOOLS]
    assert started.active_tools == reading
    server.script(Turn([Text("ok")]))
    await session.prompt("where does it start?")
    request = server.requests[0]
    assert _tools(request) == reading
    first, second = request.body["messages"][0], request.body["messages"][1]
    bundle_text = first["content"][0]["text"] if isinstance(first["content"], list) else first["content"]
    assert bundle_text.count("<task_contract>") == 1 and '<context_layer kind="snapshot"' in bundle_text
    assert "A tiny app." in bundle_text
    assert second["content"][0]["text"] == "where does it start?"

    contract = set_phase(session, _contract(mode="source-write"), "implement")
    assert "edit" not in session.tool_names() and "bash" in session.tool_names()  # no verify yet
    set_verify(session, contract, "echo verified")
    assert {"edit", "write", "bash"} <= set(session.tool_names())
    runtime.store.close()


async def test_model_bash_of_a_verifier_reuses_a_pass_on_the_same_tree(
    server: LoopbackServer, tmp_path: Path, task_project: Path
) -> None:
    runtime = await create_runtime(runtime_options(tmp_path, server, trust_override=True))
    session = runtime.session
    begin_task(
        session, runtime.resources, _contract(mode="source-write", phase="verify", verify="echo verified")
    )
    server.script(
        Turn([ToolCall("bash", {"command": "echo verified"})]),
        Turn([ToolCall("bash", {"command": "echo verified"})]),
        Turn([Text("done")]),
    )
    await session.prompt("verify twice")
    results = [m for m in session.messages if m.get("role") == "toolResult"]
    assert [r["isError"] for r in results] == [False, False]
    assert results[0]["content"][0]["text"].strip() == "verified"
    assert "passed on this exact tree" in results[1]["content"][0]["text"]
    receipts = list((tmp_path / "agent" / "piwork" / "verifier-receipts").glob("*.jsonl"))
    assert len(receipts) == 1
    receipt = json.loads(receipts[0].read_text().splitlines()[0])
    assert results[1]["details"]["reusedReceipt"] == receipt["id"]
    header = session.tree.header
    assert header is not None and receipt["sessionId"] == header["id"]
    runtime.store.close()


async def test_context_compact_and_fresh_from_a_runtime(
    server: LoopbackServer, tmp_path: Path, task_project: Path
) -> None:
    from piwork.core.session.store import open_session
    from piwork.core.workflows.commands import compact_command, fresh_command
    from piwork.core.workflows.view import view_from_parts
    from tests.support.loopback_server import Usage

    (tmp_path / "agent").mkdir(exist_ok=True)
    (tmp_path / "agent" / "settings.json").write_text(
        json.dumps({"compaction": {"reserveTokens": 1000, "keepRecentTokens": 100}})
    )
    runtime = await create_runtime(runtime_options(tmp_path, server, trust_override=True))
    session = runtime.session
    assert (await compact_command(session))["ok"] is False  # nothing to compact yet
    begin_task(
        session, runtime.resources, _contract(mode="source-write", phase="implement", verify="echo verified")
    )
    long = "word " * 60
    for i in range(2):
        server.script(Turn([Text(f"answer {i} {long}")], usage=Usage(input=100, output=50)))
        await session.prompt(f"question {i} {long}")
    calls = len(server.requests)
    report = await compact_command(session)
    assert report["ok"] is True and report["tokensBefore"] > 0
    assert len(server.requests) == calls  # a task with a contract: deterministic summary, no model call
    compaction = [e for e in session.tree.entries() if e["type"] == "compaction"]
    assert len(compaction) == 1 and "## Task" in compaction[0]["summary"]
    again = await compact_command(session)
    assert again["ok"] is False and again["message"]

    view = view_from_parts(runtime.resources, session.tree, session.model, session.tool_names())
    source = str(runtime.store.path)
    result = fresh_command(view, "scout", tmp_path / "fresh", source)
    assert result.path is not None
    reopened = open_session(result.path)
    first = reopened.tree.entries()[0]
    assert (
        "question 1" in first["content"][0]["text"] and "find the entry point" in first["content"][0]["text"]
    )
    assert (reopened.tree.header or {}).get("parentSession") == source
    reopened.close()
    result.session.close()
    runtime.store.close()


async def test_changing_phase_forms_the_working_set_anew_for_the_next_request(
    server: LoopbackServer, tmp_path: Path, task_project: Path
) -> None:
    """Scout reads eight small files; the move to plan leaves the oldest of them out of the next request
    (the saving is under the 8K a projection needs elsewhere), while the session file keeps them."""
    runtime = await create_runtime(runtime_options(tmp_path, server, trust_override=True))
    session = runtime.session
    for i in range(8):
        (task_project / "src" / f"part{i}.py").write_text(
            "".join(f"# part {i} line {n:03d}\n" for n in range(300))
        )
    started = begin_task(session, runtime.resources, _contract())
    server.script(
        *[Turn([ToolCall("read", {"path": f"src/part{i}.py"}, id=f"toolu_{i}")]) for i in range(8)],
        Turn([Text("Scouted.")]),
    )
    await session.prompt("read every part")
    assert not any("piwork elided" in json.dumps(r.body["messages"]) for r in server.requests)

    set_phase(session, started.contract, "plan")
    server.script(Turn([Text("Planned.")]))
    await session.prompt("now plan")
    decision = session.governance.governor.log[-1]
    assert decision.triggers == ("boundary",) and decision.decision == "projected"
    assert decision.savings < decision.required  # re-formed by the phase change, not by the saving
    elided = [item.tool_call_id for item in decision.elided]
    assert elided == [f"toolu_{i}" for i in range(len(elided))] and len(elided) >= 3
    assert {item.reason for item in decision.elided} == {"earlier-phase"}
    results = [m for m in server.requests[-1].body["messages"] if m["role"] == "user"]
    stubs = [
        block
        for m in results
        if isinstance(m["content"], list)
        for block in m["content"]
        if block.get("type") == "tool_result" and "piwork elided" in json.dumps(block)
    ]
    assert len(stubs) == len(elided)
    kept = [m for m in session.messages if m.get("role") == "toolResult"]
    assert len(kept) == 8 and not any(
        "piwork elided" in json.dumps(m) for m in kept
    )  # the transcript keeps all
    runtime.store.close()
