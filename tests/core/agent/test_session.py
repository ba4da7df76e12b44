"""AgentSession against a real loopback provider and a real session file."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from piwork.core.agent.events import AgentEvent, MessageEnd
from piwork.core.agent.session import AgentBusy, NoModel
from piwork.core.llm.types import ModelCost
from piwork.core.session.store import open_session
from tests.support.loopback_server import Failure, LoopbackServer, Text, ToolCall, Turn, Usage

from .sessions_support import file_entries, file_messages, make_session

pytestmark = pytest.mark.anyio

OVERLOADED = '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}'


@pytest.fixture
def server() -> Any:
    with LoopbackServer() as srv:
        yield srv


@pytest.mark.parametrize("protocol", ["anthropic", "openai"])
async def test_two_tool_calls_conversation_is_recorded(
    server: LoopbackServer, tmp_path: Path, protocol: str
) -> None:
    model = server.anthropic_model() if protocol == "anthropic" else server.openai_model()
    server.script(
        Turn(
            [
                Text("Checking both."),
                ToolCall("gate", {"text": "a"}, id="c1"),
                ToolCall("gate", {"text": "b"}, id="c2"),
            ]
        ),
        Turn([Text("Both ok.")]),
    )
    session, store, rec, _ = make_session(model, tmp_path)
    await session.prompt("check a and b")
    roles = [m["role"] for m in file_messages(store)]
    assert roles == ["user", "assistant", "toolResult", "toolResult", "assistant"]
    results = [m for m in file_messages(store) if m["role"] == "toolResult"]
    assert [r["content"][0]["text"] for r in results] == ["ok:a", "ok:b"]
    assert file_messages(store)[-1]["content"][0]["text"] == "Both ok."
    assert [m["role"] for m in session.messages] == roles
    assert rec.of("agent_settled") and not session.is_streaming
    # the second request carried the tool results
    assert len(server.requests) == 2
    assert "test-key" not in store.path.read_text()  # type: ignore[union-attr]
    assert len(session.telemetry.records) == 2 and session.telemetry.records[0].stop_reason == "toolUse"


async def test_transient_error_is_retried_with_backoff(server: LoopbackServer, tmp_path: Path) -> None:
    server.script(
        Turn(failure=Failure.http(529, OVERLOADED)),
        Turn(failure=Failure.http(529, OVERLOADED)),
        Turn([Text("Finally.")]),
    )
    session, store, rec, _ = make_session(server.anthropic_model(), tmp_path)
    await session.prompt("hello")
    assert rec.sleeps == [2.0, 4.0]
    starts = rec.of("auto_retry_start")
    assert [(s.attempt, s.delay_ms) for s in starts] == [(1, 2000), (2, 4000)]
    assert "529" in starts[0].error_message
    ends = rec.of("auto_retry_end")
    assert len(ends) == 1 and ends[0].success and ends[0].attempt == 2
    stops = [m.get("stopReason") for m in file_messages(store) if m["role"] == "assistant"]
    assert stops == ["error", "error", "stop"]  # failures stay in the file...
    assert [m["role"] for m in session.messages] == ["user", "assistant"]  # ...not in the context
    assert [e.will_retry for e in rec.of("agent_end")] == [True, True, False]
    # each failed attempt is left out by a context edit, so reopening does not bring it back
    entries = file_entries(store)
    assert [e["type"] for e in entries] == [
        "message",
        "message",
        "context_edit",
        "message",
        "context_edit",
        "message",
    ]
    assert entries[2]["targetId"] == entries[1]["id"] and entries[2]["replacement"] is None
    assert entries[3]["parentId"] == entries[2]["id"]  # the retry continues after the edit
    store.close()
    reopened = open_session(store.path)  # type: ignore[arg-type]
    assert [m.get("stopReason") for m in reopened.tree.build_context().messages] == [None, "stop"]
    reopened.close()


async def test_retries_exhausted_reports_final_error(server: LoopbackServer, tmp_path: Path) -> None:
    server.script(*[Turn(failure=Failure.http(529, OVERLOADED)) for _ in range(4)])
    session, _, rec, _ = make_session(server.anthropic_model(), tmp_path)
    await session.prompt("hello")
    assert rec.sleeps == [2.0, 4.0, 8.0]
    end = rec.of("auto_retry_end")[-1]
    assert not end.success and end.attempt == 3 and "529" in end.final_error
    assert session.messages[-1]["stopReason"] == "error"


async def test_retry_after_lengthens_the_delay(server: LoopbackServer, tmp_path: Path) -> None:
    body = '{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}'
    server.script(Turn(failure=Failure.http(429, body, {"retry-after": "5"})), Turn([Text("ok")]))
    session, _, rec, _ = make_session(server.anthropic_model(), tmp_path)
    await session.prompt("hello")
    assert rec.sleeps == [5.0]


async def test_retry_after_beyond_the_cap_is_not_waited_for(server: LoopbackServer, tmp_path: Path) -> None:
    body = '{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}'
    server.script(Turn(failure=Failure.http(429, body, {"retry-after": "3600"})))
    session, _, rec, _ = make_session(server.anthropic_model(), tmp_path)
    await session.prompt("hello")
    assert rec.sleeps == [] and not rec.of("auto_retry_start")
    notices = rec.of("error")
    assert notices and "3600 s" in notices[0].message


async def test_non_retryable_error_stops_at_once(server: LoopbackServer, tmp_path: Path) -> None:
    body = '{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}'
    server.script(Turn(failure=Failure.http(401, body)))
    session, _, rec, _ = make_session(server.anthropic_model(), tmp_path)
    await session.prompt("hello")
    assert not rec.of("auto_retry_start")
    assert session.messages[-1]["stopReason"] == "error" and "401" in session.messages[-1]["errorMessage"]


async def test_abort_during_retry_wait(server: LoopbackServer, tmp_path: Path) -> None:
    server.script(Turn(failure=Failure.http(529, OVERLOADED)))
    waiting = asyncio.Event()

    async def slow_sleep(seconds: float) -> None:
        waiting.set()
        await asyncio.Event().wait()

    session, _, rec, _ = make_session(server.anthropic_model(), tmp_path, sleep=slow_sleep)
    run = asyncio.create_task(session.prompt("hello"))
    await waiting.wait()
    await session.abort()
    await run
    end = rec.of("auto_retry_end")[-1]
    assert not end.success and end.final_error == "Retry cancelled"


async def test_abort_mid_stream_records_aborted_message(server: LoopbackServer, tmp_path: Path) -> None:
    words = " ".join(f"w{i}" for i in range(200))
    server.script(Turn([Text(words)], drip=0.02))
    session, store, rec, _ = make_session(server.anthropic_model(), tmp_path)
    run = asyncio.create_task(session.prompt("talk"))
    while len(rec.of("message_update")) < 3:
        await asyncio.sleep(0.01)
    await session.abort()
    await run
    last = file_messages(store)[-1]
    assert last["role"] == "assistant" and last["stopReason"] == "aborted" and last["errorMessage"]
    assert last["content"][0]["text"].startswith("w0")
    assert len(rec.of("auto_retry_start")) == 0


async def test_abort_mid_tool_gives_every_call_a_result(server: LoopbackServer, tmp_path: Path) -> None:
    server.script(
        Turn([ToolCall("gate", {"text": "slow"}, id="c1"), ToolCall("gate", {"text": "fast"}, id="c2")])
    )
    session, store, _, gate = make_session(server.anthropic_model(), tmp_path)
    gate.gates["slow"] = asyncio.Event()
    run = asyncio.create_task(session.prompt("go"))
    while "slow" not in gate.started:
        await asyncio.sleep(0.01)
    await session.abort()
    await run
    messages = file_messages(store)
    assert [m["role"] for m in messages] == ["user", "assistant", "toolResult", "toolResult"]
    assert messages[2]["isError"] and messages[2]["content"][0]["text"] == "Operation aborted"
    assert messages[3]["content"][0]["text"] == "ok:fast"
    assert len(server.requests) == 1


async def test_steering_and_follow_up_queues(server: LoopbackServer, tmp_path: Path) -> None:
    server.script(
        Turn([ToolCall("gate", {"text": "wait"}, id="c1")]),
        Turn([Text("steered")]),
        Turn([Text("followed")]),
    )
    session, store, rec, gate = make_session(server.anthropic_model(), tmp_path)
    gate.gates["wait"] = release = asyncio.Event()
    run = asyncio.create_task(session.prompt("start"))
    while "wait" not in gate.started:
        await asyncio.sleep(0.01)
    await session.follow_up("after everything")
    await session.steer("change course")
    with pytest.raises(AgentBusy):
        await session.prompt("plain prompt while busy")
    await session.prompt("queued via prompt", behavior="follow_up")
    assert session.queued == (["change course"], ["after everything", "queued via prompt"])
    release.set()
    await run
    users = [m["content"][0]["text"] for m in file_messages(store) if m["role"] == "user"]
    assert users == ["start", "change course", "after everything", "queued via prompt"]
    assert session.queued == ([], [])
    assert rec.of("queue_update")[-1].steering == [] and rec.of("queue_update")[-1].follow_up == []


async def test_model_and_thinking_changes_are_recorded(server: LoopbackServer, tmp_path: Path) -> None:
    server.script(Turn([Text("hi")]))
    session, store, rec, _ = make_session(server.anthropic_model(), tmp_path)
    await session.prompt("hello")
    other = server.anthropic_model(id="other-model", reasoning=False)
    session.set_model(other)
    assert session.thinking_level == "off"
    reasoning = server.anthropic_model(id="thinker")
    session.set_model(reasoning)
    assert session.set_thinking_level("high") == "high"
    assert session.set_thinking_level("max") == "high"  # clamped to what the model supports
    kinds = [(e["type"], e.get("modelId") or e.get("thinkingLevel")) for e in file_entries(store)[2:]]
    assert kinds == [
        ("model_change", "other-model"),
        ("model_change", "thinker"),
        ("thinking_level_change", "high"),
    ]
    assert [e.type for e in rec.events if e.type in ("model_changed", "thinking_level_changed")] == [
        "model_changed", "model_changed", "thinking_level_changed"
    ]  # fmt: skip


async def test_no_model_or_no_key_is_a_clear_error(server: LoopbackServer, tmp_path: Path) -> None:
    session, _, _, _ = make_session(server.anthropic_model(base_url="https://api.example.invalid"), tmp_path,
                                    api_key_for=lambda _m: None)  # fmt: skip
    with pytest.raises(NoModel, match="No API key for anthropic"):
        await session.prompt("hello")
    assert not session.is_streaming


async def test_context_usage_and_session_stats(server: LoopbackServer, tmp_path: Path) -> None:
    server.script(
        Turn([ToolCall("gate", {"text": "a"}, id="c1")], usage=Usage(input=1000, output=20)),
        Turn([Text("done")], usage=Usage(input=1100, output=30, cache_read=50)),
    )
    session, _, _, _ = make_session(server.anthropic_model(context_window=10000), tmp_path)
    assert session.context_usage() is not None and session.context_usage().tokens == 0  # type: ignore[union-attr]
    await session.prompt("go")
    usage = session.context_usage()
    assert usage is not None and usage.tokens == 1100 + 30 + 50 and usage.context_window == 10000
    assert usage.percent == pytest.approx(11.8)
    stats = session.session_stats()
    assert (stats.user_messages, stats.assistant_messages, stats.tool_calls, stats.tool_results) == (
        1,
        2,
        1,
        1,
    )
    assert stats.tokens["input"] == 2100 and stats.tokens["cacheRead"] == 50
    assert session.telemetry.totals()["input"] == 2100


async def test_telemetry_file_is_outside_the_transcript(server: LoopbackServer, tmp_path: Path) -> None:
    from piwork.core.agent.telemetry import UsageTelemetry, telemetry_path

    path = telemetry_path(tmp_path / "agent", "s1")
    seen: list[Any] = []
    telemetry = UsageTelemetry(path, seen.append)
    server.script(Turn([Text("hi")], usage=Usage(input=10, output=2)))
    session, store, _, _ = make_session(server.anthropic_model(), tmp_path, telemetry=telemetry)
    await session.prompt("hello")
    import json

    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert len(lines) == 1 and lines[0]["usage"]["input"] == 10 and lines[0]["stop_reason"] == "stop"
    assert lines[0]["duration_ms"] >= 0 and seen[0].provider == "anthropic"
    assert "duration_ms" not in store.path.read_text()  # type: ignore[union-attr]


async def test_session_cost_covers_the_whole_file(server: LoopbackServer, tmp_path: Path) -> None:
    model = server.anthropic_model(cost=ModelCost(input=3, output=15))
    server.script(Turn([Text("one")], usage=Usage(input=1000, output=100)))
    session, store, _, _ = make_session(model, tmp_path)
    await session.prompt("hello")
    reopened, _, _, _ = make_session(model, store=open_session(store.path, cwd=str(tmp_path)))  # type: ignore[arg-type]
    cost = reopened.session_cost()
    assert cost["input"] == 1000 and cost["output"] == 100
    assert cost["cost"] == pytest.approx(3 * 1000 / 1e6 + 15 * 100 / 1e6)


async def test_prompt_with_an_image(server: LoopbackServer, tmp_path: Path) -> None:
    server.script(Turn([Text("a red dot")]))
    session, store, _, _ = make_session(server.anthropic_model(), tmp_path)
    image = {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}
    await session.prompt("what is this?", [image])
    user = file_messages(store)[0]
    assert user["content"] == [{"type": "text", "text": "what is this?"}, image]
    sent = server.requests[0].body["messages"][0]["content"]
    assert sent[1]["type"] == "image" and sent[1]["source"]["data"] == "iVBORw0KGgo="


async def test_a_session_file_that_cannot_be_written_stops_the_run(
    server: LoopbackServer, tmp_path: Path
) -> None:
    server.script(Turn([ToolCall("gate", {"text": "a"}, id="c1")]), Turn([Text("never asked")]))
    session, store, rec, gate = make_session(server.anthropic_model(), tmp_path)
    store.read_only = True  # e.g. another window holds the file
    await session.prompt("go")
    notices = [e for e in rec.of("error") if e.source == "session file"]
    assert notices and "could not save" in notices[0].message
    assert server.requests == [] and gate.started == []  # stopped before anything was sent
    assert not session.is_streaming


async def test_message_end_is_heard_once_the_entry_is_in_the_session_file(
    server: LoopbackServer, tmp_path: Path
) -> None:
    server.script(
        Turn([Text("First.")]),
        Turn([ToolCall("gate", {"text": "a"}, id="c1")]),
        Turn([Text("Done.")]),
    )
    session, store, _rec, _ = make_session(server.anthropic_model(), tmp_path)
    found: list[tuple[str, bool]] = []

    def on_event(event: AgentEvent) -> None:
        if isinstance(event, MessageEnd):
            # another reader of the file, as a second program would see it
            written = store.path is not None and store.path.exists()
            on_disk = [e["message"] for e in file_entries(store) if e["type"] == "message"] if written else []
            found.append((event.message["role"], event.message in on_disk))

    session.subscribe(on_event)
    await session.prompt("hello")  # a new session's file is first written with its first message
    assert found == [("user", True), ("assistant", True)]
    found.clear()
    await session.prompt("use the gate")
    assert found == [("user", True), ("assistant", True), ("toolResult", True), ("assistant", True)]


async def test_the_loop_runs_on_while_an_ended_message_waits_for_the_writer_lane(
    server: LoopbackServer, tmp_path: Path
) -> None:
    server.script(Turn([Text("First.")]), Turn([Text("Second.")]))
    session, store, rec, _ = make_session(server.anthropic_model(), tmp_path)
    await session.prompt("hello")
    assert store.path is not None
    ticks = 0
    with store._write_lock:  # the lane is busy (a slow fsync of another append): this run's writes wait
        prompt = asyncio.create_task(session.prompt("again"))
        while not (store.writes_pending and ticks > 20):  # the loop keeps running meanwhile
            ticks += 1
            await asyncio.sleep(0.001)
        assert not prompt.done()
        heard = [e.message["role"] for e in rec.events if isinstance(e, MessageEnd)]
        assert heard == ["user", "assistant"]  # the waiting user message is not announced yet
    await prompt
    assert [m["role"] for m in file_messages(store)] == ["user", "assistant", "user", "assistant"]


async def test_context_edits_change_the_next_request(server: LoopbackServer, tmp_path: Path) -> None:
    model = server.anthropic_model()
    server.script(Turn([Text("A long answer.")]), Turn([Text("Short.")]), Turn([Text("Again.")]))
    session, store, _, _ = make_session(model, tmp_path)
    await session.prompt("first question")
    entries = file_entries(store)
    user_id, answer_id = entries[0]["id"], entries[1]["id"]
    edit_id = await session.leave_out_of_context(answer_id)
    await session.replace_in_context(user_id, "first question, shortened")
    assert [(e.target_id, e.leaves_out) for e in session.context_edits()] == [
        (user_id, False),
        (answer_id, True),
    ]
    written = file_entries(store)[2]
    assert written == {
        "type": "context_edit",
        "id": edit_id,
        "parentId": answer_id,
        "timestamp": written["timestamp"],
        "targetId": answer_id,
        "replacement": None,
    }
    await session.prompt("second question")
    sent = server.requests[1].body["messages"]
    assert [(m["role"], _text(m["content"])) for m in sent] == [
        ("user", "first question, shortened"),
        ("user", "second question"),
    ]
    await session.restore_in_context(answer_id)
    assert [e.target_id for e in session.context_edits()] == [user_id]
    await session.prompt("third")
    sent = server.requests[2].body["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "user", "assistant", "user"]
    assert _text(sent[1]["content"]) == "A long answer."


def _text(content: Any) -> str:
    return content if isinstance(content, str) else "".join(b.get("text", "") for b in content)
