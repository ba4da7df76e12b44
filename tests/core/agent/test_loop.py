"""The low-level loop: event order, tool batches, length stops, queues, abort."""

from __future__ import annotations

import asyncio
from typing import Any, ClassVar

import pytest

from piwork.core.agent.abort import AbortSignal
from piwork.core.agent.events import AgentEvent
from piwork.core.agent.loop import AgentLoop, LoopConfig, RequestSetup
from piwork.core.agent.queues import MessageQueue
from piwork.core.agent.tool_calls import BlockDecision
from piwork.core.llm.types import StreamOptions
from piwork.core.llm.types import ToolSpec as LlmToolSpec
from piwork.core.settings_schema import FOLLOW_UP_MODE, STEERING_MODE
from piwork.core.tools.base import Tool, ToolContext, ToolError, ToolRegistry, ToolResult

from .scripted import MODEL, Reply, ScriptedProvider, calls, text

pytestmark = pytest.mark.anyio


class Echo(Tool):
    name = "echo"
    description = "Echo text back."
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "required": ["text"],
    }
    snippet = "echo text"

    def __init__(self) -> None:
        self.gates: dict[str, asyncio.Event] = {}
        self.started: dict[str, asyncio.Event] = {}

    async def execute(
        self, call_id: str, args: dict[str, Any], ctx: ToolContext, on_update: Any = None
    ) -> ToolResult:
        self.started.setdefault(call_id, asyncio.Event()).set()
        if on_update is not None:
            on_update(ToolResult.text("partial " + args["text"]))
        gate = self.gates.get(call_id)
        if gate is not None:
            try:
                await gate.wait()
            except asyncio.CancelledError:
                raise ToolError("Operation aborted", aborted=True) from None
        if args["text"] == "boom":
            raise ToolError("echo refused: boom", {"why": "boom"})
        return ToolResult.text(args["text"], {"len": len(args["text"])})


def user(t: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": t}], "timestamp": 1}


class Harness:
    def __init__(self, replies: list[Reply], **config: Any) -> None:
        self.provider = ScriptedProvider(replies)
        self.echo = Echo()
        self.registry = ToolRegistry([self.echo])
        self.events: list[AgentEvent] = []
        self.signal = AbortSignal()
        self.steering = MessageQueue(STEERING_MODE.default)
        self.follow_up = MessageQueue(FOLLOW_UP_MODE.default)

        async def setup() -> RequestSetup:
            specs = [LlmToolSpec(s.name, s.description, s.parameters) for s in self.registry.specs()]
            return RequestSetup(MODEL, "system", specs, StreamOptions(), self.registry, ToolContext(cwd="."))

        self.config = LoopConfig(
            stream_fn=self.provider.stream,
            setup=setup,
            convert_to_llm=lambda ms: [m for m in ms if m["role"] in ("user", "assistant", "toolResult")],
            get_steering=self.steering.drain,
            get_follow_up=self.follow_up.drain,
            **config,
        )
        self.loop = AgentLoop(self.config, self.events.append, self.signal)

    def types(self) -> list[str]:
        return [e.type for e in self.events if e.type != "message_update"]

    def ends(self) -> list[dict[str, Any]]:
        return [e.message for e in self.events if e.type == "message_end"]


async def test_plain_text_reply_event_order() -> None:
    h = Harness([text("hello there friend")])
    added = await h.loop.run([user("hi")], [])
    assert h.types() == [
        "agent_start", "turn_start", "message_start", "message_end",
        "message_start", "message_end", "turn_end", "agent_end",
    ]  # fmt: skip
    updates = [e for e in h.events if e.type == "message_update"]
    assert len(updates) >= 3
    assert [m["role"] for m in added] == ["user", "assistant"]
    assert added[1]["content"][0]["text"] == "hello there friend"
    assert h.provider.requests[0].system_prompt == "system"
    assert [t.name for t in h.provider.requests[0].tools] == ["echo"]


async def test_parallel_tools_end_in_completion_order_results_in_call_order() -> None:
    h = Harness([calls(("a", "echo", {"text": "first"}), ("b", "echo", {"text": "second"})), text("done")])
    h.echo.gates["a"] = gate_a = asyncio.Event()
    run = asyncio.create_task(h.loop.run([user("go")], []))
    # b finishes while a still waits: its end event comes first
    while not any(e.type == "tool_execution_end" for e in h.events):
        await asyncio.sleep(0)
    gate_a.set()
    added = await run
    ends = [e.tool_call_id for e in h.events if e.type == "tool_execution_end"]
    starts = [e.tool_call_id for e in h.events if e.type == "tool_execution_start"]
    assert starts == ["a", "b"] and ends == ["b", "a"]
    results = [m for m in added if m["role"] == "toolResult"]
    assert [r["toolCallId"] for r in results] == ["a", "b"]
    assert results[0]["content"] == [{"type": "text", "text": "first"}]
    assert results[0]["details"] == {"len": 5} and results[0]["isError"] is False
    # second request carries both results after the assistant message
    roles = [m["role"] for m in h.provider.requests[1].messages]
    assert roles == ["user", "assistant", "toolResult", "toolResult"]
    updates = [e for e in h.events if e.type == "tool_execution_update"]
    assert {u.tool_call_id for u in updates} == {"a", "b"}


async def test_errors_unknown_tool_validation_and_tool_error() -> None:
    h = Harness([calls(("a", "nope", {}), ("b", "echo", {}), ("c", "echo", {"text": "boom"})), text("ok")])
    added = await h.loop.run([user("go")], [])
    results = {m["toolCallId"]: m for m in added if m["role"] == "toolResult"}
    assert all(r["isError"] for r in results.values())
    assert results["a"]["content"][0]["text"] == "Tool nope not found"
    assert results["b"]["content"][0]["text"].startswith('Validation failed for tool "echo"')
    assert results["c"]["content"][0]["text"] == "echo refused: boom"
    assert results["c"]["details"] == {"why": "boom"}


async def test_length_stop_does_not_execute_tool_calls() -> None:
    h = Harness([calls(("a", "echo", {"text": "x"}), stop="length"), text("again")])
    added = await h.loop.run([user("go")], [])
    assert "a" not in h.echo.started
    result = next(m for m in added if m["role"] == "toolResult")
    assert result["isError"] and "output token limit" in result["content"][0]["text"]
    assert added[-1]["content"][0]["text"] == "again"


async def test_before_tool_call_can_block() -> None:
    async def before(call: dict[str, Any], args: dict[str, Any]) -> BlockDecision | None:
        return BlockDecision("not allowed here") if args["text"] == "secret" else None

    h = Harness([calls(("a", "echo", {"text": "secret"}), ("b", "echo", {"text": "fine"})), text("ok")],
                before_tool_call=before)  # fmt: skip
    added = await h.loop.run([user("go")], [])
    results = [m for m in added if m["role"] == "toolResult"]
    assert results[0]["isError"] and results[0]["content"][0]["text"] == "not allowed here"
    assert results[1]["isError"] is False


@pytest.mark.parametrize("mode", ["one-at-a-time", "all"])
async def test_steering_is_delivered_after_tool_batch_before_next_call(mode: str) -> None:
    h = Harness([calls(("a", "echo", {"text": "x"})), text("saw steering"), text("second")])
    h.steering.mode = mode  # type: ignore[assignment]
    h.echo.gates["a"] = gate = asyncio.Event()
    run = asyncio.create_task(h.loop.run([user("go")], []))
    while "a" not in h.echo.started:
        await asyncio.sleep(0)
    h.steering.enqueue(user("steer one"))
    h.steering.enqueue(user("steer two"))
    gate.set()
    added = await run
    texts = [m["content"][0]["text"] for m in added if m["role"] == "user"]
    assert texts == ["go", "steer one", "steer two"]
    second_request = [m["role"] for m in h.provider.requests[1].messages]
    if mode == "all":
        assert second_request == ["user", "assistant", "toolResult", "user", "user"]
        assert len(h.provider.requests) == 2
    else:
        assert second_request == ["user", "assistant", "toolResult", "user"]
        assert len(h.provider.requests) == 3  # the second steering message gets its own turn


@pytest.mark.parametrize("mode", ["one-at-a-time", "all"])
async def test_follow_up_only_when_agent_would_stop(mode: str) -> None:
    h = Harness([text("one"), text("two"), text("three")])
    h.follow_up.mode = mode  # type: ignore[assignment]
    h.follow_up.enqueue(user("later 1"))
    h.follow_up.enqueue(user("later 2"))
    added = await h.loop.run([user("go")], [])
    roles = [m["role"] for m in added]
    if mode == "all":
        assert roles == ["user", "assistant", "user", "user", "assistant"]
    else:
        assert roles == ["user", "assistant", "user", "assistant", "user", "assistant"]
    assert [e.type for e in h.events].count("agent_end") == 1


async def test_abort_mid_stream_keeps_partial_as_aborted() -> None:
    hold = asyncio.Event()
    h = Harness([Reply([{"type": "text", "text": "partial words here"}], hold=hold)])
    run = asyncio.create_task(h.loop.run([user("go")], []))
    while not any(e.type == "message_update" for e in h.events):
        await asyncio.sleep(0)
    h.signal.abort()
    added = await run
    final = added[-1]
    assert final["stopReason"] == "aborted" and final["errorMessage"] == "Request aborted by the user."
    assert final["content"][0]["text"] == "partial"
    assert final["usage"]["input"] == 100  # what the provider reported before the abort is kept
    assert h.types()[-2:] == ["turn_end", "agent_end"]


async def test_abort_cancels_a_provider_that_ignores_the_abort_event() -> None:
    hold = asyncio.Event()
    h = Harness(
        [Reply([{"type": "text", "text": "partial words here"}], hold=hold)], abort_grace_seconds=0.01
    )
    h.provider.ignore_abort = True
    run = asyncio.create_task(h.loop.run([user("go")], []))
    while not any(e.type == "message_update" for e in h.events):
        await asyncio.sleep(0)
    h.signal.abort()
    added = await run
    assert added[-1]["stopReason"] == "aborted" and added[-1]["content"][0]["text"] == "partial"


async def test_abort_mid_tool_gives_every_call_a_result() -> None:
    h = Harness([calls(("a", "echo", {"text": "x"}), ("b", "echo", {"text": "y"})), text("never")])
    h.echo.gates["a"] = asyncio.Event()
    h.echo.gates["b"] = asyncio.Event()
    run = asyncio.create_task(h.loop.run([user("go")], []))
    while "b" not in h.echo.started:
        await asyncio.sleep(0)
    h.signal.abort()
    added = await run
    results = [m for m in added if m["role"] == "toolResult"]
    assert [r["toolCallId"] for r in results] == ["a", "b"]
    assert all(r["isError"] and r["content"][0]["text"] == "Operation aborted" for r in results)
    assert len(h.provider.requests) == 1  # no further request after an abort
    assert h.types()[-2:] == ["turn_end", "agent_end"]


async def test_provider_error_ends_run_with_error_message() -> None:
    h = Harness([Reply(error="529 overloaded_error")])
    added = await h.loop.run([user("go")], [])
    assert added[-1]["stopReason"] == "error"
    assert h.loop.last_error is not None and h.loop.last_error.retryable


async def test_provider_that_raises_becomes_error_message() -> None:
    h = Harness([])

    async def broken(*_: Any) -> Any:
        raise RuntimeError("adapter bug")
        yield  # pragma: no cover

    h.config.stream_fn = broken
    added = await h.loop.run([user("go")], [])
    assert added[-1]["stopReason"] == "error" and "adapter bug" in added[-1]["errorMessage"]


async def test_transform_context_changes_request_not_transcript() -> None:
    async def transform(messages: list[dict[str, Any]], _signal: AbortSignal) -> list[dict[str, Any]]:
        return [user("rewritten")]

    h = Harness([text("ok")], transform_context=transform)
    added = await h.loop.run([user("original")], [])
    assert h.provider.requests[0].messages[0]["content"][0]["text"] == "rewritten"
    assert added[0]["content"][0]["text"] == "original"


async def test_prepare_next_turn_can_replace_working_messages() -> None:
    seen: list[bool] = []

    async def prepare(turn: Any) -> list[dict[str, Any]] | None:
        seen.append(turn.will_continue)
        return [user("compacted"), *turn.messages[-2:]]

    h = Harness([calls(("a", "echo", {"text": "x"})), text("ok")], prepare_next_turn=prepare)
    await h.loop.run([user("go")], [user("old")])
    assert seen == [True]
    assert [m["role"] for m in h.provider.requests[1].messages] == ["user", "assistant", "toolResult"]
    assert h.provider.requests[1].messages[0]["content"][0]["text"] == "compacted"


async def test_resume_requires_non_assistant_tail() -> None:
    h = Harness([text("ok")])
    with pytest.raises(ValueError):
        await h.loop.resume([{"role": "assistant", "content": []}])
    added = await h.loop.resume([user("retry me")])
    assert [m["role"] for m in added] == ["assistant"]


async def test_a_setup_failure_ends_the_run_with_its_reason() -> None:
    from piwork.core.errors import PiworkError

    h = Harness([])

    async def no_key() -> RequestSetup:
        raise PiworkError("No API key for scripted")

    h.config.setup = no_key
    added = await h.loop.run([user("go")], [])
    assert added[-1]["stopReason"] == "error" and added[-1]["errorMessage"] == "No API key for scripted"
    assert h.provider.requests == [] and h.types()[-2:] == ["turn_end", "agent_end"]
