"""Compaction checkpoints, overflow recovery, manual compaction and navigation through AgentSession."""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from piwork.core.compaction.prompts import BRANCH_INSTRUCTIONS
from piwork.core.errors import PiworkError
from piwork.core.session.store import open_session
from tests.support.loopback_server import Failure, LoopbackServer, Text, ToolCall, Turn, Usage
from tests.support.reference import NODE, PI_DIST

from .sessions_support import file_entries, make_session

pytestmark = pytest.mark.anyio

SMALL = {"compaction": {"reserveTokens": 1000, "keepRecentTokens": 100}}
TOO_LONG = '{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 5000 tokens > 4000 maximum"}}'
LONG = "word " * 60


@pytest.fixture
def server() -> Any:
    with LoopbackServer() as srv:
        yield srv


def summary_turn(text: str = "## Goal\nKeep going.") -> Turn:
    return Turn([Text(text)], usage=Usage(input=50, output=10))


async def warm_up(session: Any, server: LoopbackServer, rounds: int = 2) -> None:
    for i in range(rounds):
        server.script(Turn([Text(f"answer {i} {LONG}")], usage=Usage(input=100, output=50)))
        await session.prompt(f"question {i} {LONG}")


async def test_overflow_compacts_and_retries_once(server: LoopbackServer, tmp_path: Path) -> None:
    session, store, rec, _ = make_session(
        server.anthropic_model(context_window=4000), tmp_path, settings=SMALL
    )
    await warm_up(session, server)
    server.script(Turn(failure=Failure.http(400, TOO_LONG)), summary_turn(), Turn([Text("recovered")]))
    await session.prompt("one more")
    kinds = [e["type"] for e in file_entries(store)]
    assert "compaction" in kinds
    starts, ends = rec.of("compaction_start"), rec.of("compaction_end")
    assert [s.reason for s in starts] == ["overflow"]
    assert ends[0].will_retry and ends[0].result["summary"].startswith("## Goal")
    assert session.messages[0]["role"] == "compactionSummary"
    assert session.messages[-1]["content"][0]["text"] == "recovered"
    assert not any(m.get("stopReason") == "error" for m in session.messages)
    stops = [e["message"].get("stopReason") for e in file_entries(store) if e["type"] == "message"]
    assert "error" in stops  # the failed reply is kept in the file
    assert not rec.of("auto_retry_start")  # overflow is not a transient error


async def test_second_overflow_after_recovery_gives_up(server: LoopbackServer, tmp_path: Path) -> None:
    session, _, rec, _ = make_session(server.anthropic_model(context_window=4000), tmp_path, settings=SMALL)
    await warm_up(session, server)
    server.script(
        Turn(failure=Failure.http(400, TOO_LONG)), summary_turn(), Turn(failure=Failure.http(400, TOO_LONG))
    )
    await session.prompt("one more")
    last = rec.of("compaction_end")[-1]
    assert last.result is None and "after one compact-and-retry attempt" in last.error_message
    assert session.messages[-1]["stopReason"] == "error"
    assert server.pending == 0


async def test_threshold_compaction_after_the_run(server: LoopbackServer, tmp_path: Path) -> None:
    session, store, rec, _ = make_session(
        server.anthropic_model(context_window=4000), tmp_path, settings=SMALL
    )
    await warm_up(session, server)
    server.script(Turn([Text("big context")], usage=Usage(input=3500, output=10)), summary_turn())
    await session.prompt("grow")
    assert [s.reason for s in rec.of("compaction_start")] == ["threshold"]
    assert rec.of("compaction_end")[-1].will_retry is False
    assert file_entries(store)[-1]["type"] == "compaction"
    assert rec.events[-1].type == "agent_settled"


async def test_threshold_compaction_between_tool_batch_and_next_request(
    server: LoopbackServer, tmp_path: Path
) -> None:
    session, store, rec, _ = make_session(
        server.anthropic_model(context_window=4000), tmp_path, settings=SMALL
    )
    await warm_up(session, server)
    server.script(
        Turn([ToolCall("gate", {"text": "x"}, id="t1")], usage=Usage(input=3500, output=10)),
        summary_turn(),
        Turn([Text("after compaction")], usage=Usage(input=300, output=5)),
    )
    await session.prompt("use a tool")
    assert [s.reason for s in rec.of("compaction_start")] == ["threshold"]
    last_request = server.requests[-1].body["messages"]
    assert "compacted" in str(last_request[0]["content"])  # starts with the summary
    assert session.messages[-1]["content"][0]["text"] == "after compaction"
    assert [e["type"] for e in file_entries(store)].count("compaction") == 1


async def test_manual_compaction_and_its_errors(server: LoopbackServer, tmp_path: Path) -> None:
    session, store, rec, _ = make_session(server.anthropic_model(), tmp_path, settings=SMALL)
    with pytest.raises(PiworkError, match="Nothing to compact"):
        await session.compact()
    await warm_up(session, server)
    server.script(summary_turn("## Goal\nFocused summary."))
    result = await session.compact("focus on tests")
    assert result is not None and result["summary"].startswith("## Goal\nFocused summary.")
    assert "focus on tests" in str(server.requests[-1].body["messages"])
    assert file_entries(store)[-1]["type"] == "compaction"
    with pytest.raises(PiworkError, match="Already compacted"):
        await session.compact()
    assert [e.reason for e in rec.of("compaction_start")] == ["manual", "manual", "manual"]


OVERLOADED = '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}'


async def test_summary_retries_reach_subscribers_as_retry_events(
    server: LoopbackServer, tmp_path: Path
) -> None:
    session, _, rec, _ = make_session(server.anthropic_model(), tmp_path, settings=SMALL)
    await warm_up(session, server)
    server.script(Turn(failure=Failure.http(529, OVERLOADED)), summary_turn())
    assert await session.compact() is not None
    (start,) = rec.of("auto_retry_start")
    assert (start.attempt, start.max_attempts, start.delay_ms) == (
        1,
        3,
        2000,
    ) and "529" in start.error_message
    (end,) = rec.of("auto_retry_end")
    assert end.success and end.attempt == 1
    kinds = [e.type for e in rec.events]
    assert kinds.index("compaction_start") < kinds.index("auto_retry_start") < kinds.index("compaction_end")
    assert rec.sleeps == [2.0]


async def test_summary_retry_that_keeps_failing_ends_with_the_error(
    server: LoopbackServer, tmp_path: Path
) -> None:
    settings = {**SMALL, "retry": {"maxRetries": 1}}
    session, _, rec, _ = make_session(server.anthropic_model(), tmp_path, settings=settings)
    await warm_up(session, server)
    server.script(*[Turn(failure=Failure.http(529, OVERLOADED)) for _ in range(2)])
    with pytest.raises(PiworkError, match="Compaction failed"):
        await session.compact()
    assert len(rec.of("auto_retry_start")) == 1
    (end,) = rec.of("auto_retry_end")
    assert not end.success and end.attempt == 1 and "529" in (end.final_error or "")


async def test_navigate_with_branch_summary(server: LoopbackServer, tmp_path: Path) -> None:
    session, store, rec, _ = make_session(server.anthropic_model(), tmp_path, settings=SMALL)
    await warm_up(session, server)
    first_user = next(
        e for e in file_entries(store) if e["type"] == "message" and e["message"]["role"] == "user"
    )
    server.script(summary_turn("## Goal\nBranch explored."))
    result = await session.navigate(first_user["id"], summarize=True)
    assert not result.cancelled and result.summary_entry is not None
    entry = file_entries(store)[-1]
    assert entry["type"] == "branch_summary" and "Branch explored." in entry["summary"]
    assert rec.of("session_tree")[-1].summary_entry is not None
    assert [m["role"] for m in session.messages] == ["branchSummary"]


async def test_navigate_can_replace_the_summary_instructions_and_report_progress(
    server: LoopbackServer, tmp_path: Path
) -> None:
    session, store, _, _ = make_session(server.anthropic_model(), tmp_path, settings=SMALL)
    await warm_up(session, server)
    first_user = next(
        e for e in file_entries(store) if e["type"] == "message" and e["message"]["role"] == "user"
    )
    server.script(summary_turn("## Goal\nOnly the focus."))
    steps: list[str] = []
    result = await session.navigate(
        first_user["id"],
        summarize=True,
        focus="List the file names touched, nothing else.",
        replace_instructions=True,
        on_progress=lambda progress: steps.append(progress.stage),
    )
    assert not result.cancelled and result.summary_entry is not None
    sent = json.dumps(server.requests[-1].body)
    assert "List the file names touched, nothing else." in sent
    assert BRANCH_INSTRUCTIONS.split("\n")[0] not in sent  # the default template was replaced
    assert steps[0] == "collected" and "summarizing" in steps


PI_SESSION_MANAGER = PI_DIST / "core" / "session-manager.js"


@pytest.mark.skipif(
    not (NODE.exists() and PI_SESSION_MANAGER.exists()), reason="reference implementation not installed"
)
async def test_reference_builds_the_same_context_after_abort_retry_and_compaction(
    server: LoopbackServer, tmp_path: Path
) -> None:
    session, store, rec, _ = make_session(
        server.anthropic_model(context_window=4000), tmp_path, settings=SMALL
    )
    await warm_up(session, server)
    server.script(
        Turn(failure=Failure.http(529, '{"type":"error","error":{"type":"overloaded_error"}}')),
        Turn([Text("ok")]),
    )
    await session.prompt("retry me")
    server.script(Turn([Text(" ".join(f"w{i}" for i in range(300)))], drip=0.01))
    run = asyncio.create_task(session.prompt("talk"))
    while len(rec.of("message_update")) < 5:
        await asyncio.sleep(0.01)
    await session.abort()
    await run

    def answer(request: Any) -> Turn:  # summaries (one or two, if the turn is split) or the reply
        return (
            summary_turn()
            if "<conversation>" in json.dumps(request.body["messages"])
            else Turn([Text("after")])
        )

    server.script(answer, answer, answer)
    await session.compact()
    await session.prompt("continue")
    store.close()
    script = tmp_path / "context.mjs"
    script.write_text(
        f'const sm = await import("{PI_SESSION_MANAGER.as_uri()}");\n'
        f"const s = sm.SessionManager.open({json.dumps(str(store.path))});\n"
        "process.stdout.write(JSON.stringify(s.buildSessionContext()));\n"
    )
    node = subprocess.run([str(NODE), str(script)], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert node.returncode == 0, node.stderr
    reference = json.loads(node.stdout)
    ours = open_session(store.path, writable=False).tree.build_context()  # type: ignore[arg-type]
    assert reference["messages"] == json.loads(json.dumps(ours.messages))
    assert reference["messages"][0]["role"] == "compactionSummary"
    assert [m["role"] for m in session.messages] == [m["role"] for m in reference["messages"]]


async def test_summary_calls_are_billed_traffic_like_replies(server: LoopbackServer, tmp_path: Path) -> None:
    """A compaction's and a branch summary's model calls are billed: the context telemetry (which the
    window's 'today' figure reads) counts them as the session's own totals do."""
    session, store, _, _ = make_session(server.anthropic_model(), tmp_path, settings=SMALL)
    await warm_up(session, server)
    server.script(summary_turn("## Goal\nCompacted."))
    await session.compact()
    first_user = next(
        e for e in file_entries(store) if e["type"] == "message" and e["message"]["role"] == "user"
    )
    server.script(summary_turn("## Goal\nBranch explored."))
    await session.navigate(first_user["id"], summarize=True)
    billed = session.governance.telemetry.billed_totals
    totals = session.session_cost()
    for key in ("input", "output"):
        assert billed[key] == totals[key], (key, billed, totals)


async def test_overflowing_attempt_is_left_out_for_good(server: LoopbackServer, tmp_path: Path) -> None:
    """The failed attempt stays in the file behind a null context edit: reopened, it is not sent again."""
    session, store, _, _ = make_session(server.anthropic_model(context_window=4000), tmp_path, settings=SMALL)
    await warm_up(session, server)
    server.script(Turn(failure=Failure.http(400, TOO_LONG)), summary_turn(), Turn([Text("recovered")]))
    await session.prompt("one more")
    entries = file_entries(store)
    failed = next(e for e in entries if e["type"] == "message" and e["message"].get("stopReason") == "error")
    edit = next(e for e in entries if e["type"] == "context_edit")
    assert (
        edit["targetId"] == failed["id"] and edit["replacement"] is None and edit["parentId"] == failed["id"]
    )
    kinds = [e["type"] for e in entries[entries.index(failed) :]]
    assert kinds == ["message", "context_edit", "compaction", "message"]
    store.close()
    reopened = open_session(store.path)
    roles = [(m["role"], m.get("stopReason")) for m in reopened.tree.build_context().messages]
    assert ("assistant", "error") not in roles and roles[-1] == ("assistant", "stop")
    reopened.close()
