"""Anthropic Messages against the loopback server: events, final message, usage, cost, stop reasons."""

from __future__ import annotations

import pytest

from piwork.core.llm.types import (
    CostTier,
    DoneEvent,
    ErrorEvent,
    ErrorKind,
    ModelCost,
    StreamOptions,
    ToolSpec,
)
from tests.core.llm.helpers import collect, context, types_of
from tests.support import Failure, LoopbackServer, Text, Thinking, ToolCall, Turn, Usage


def test_text_thinking_and_tool_call(loopback: LoopbackServer) -> None:
    loopback.script(
        Turn(
            [
                Thinking("plan it", signature="sig-A"),
                Text("Reading it."),
                ToolCall("read", {"path": "t.py"}, id="toolu_1"),
            ]
        )
    )
    events = collect(loopback.anthropic_model())
    assert types_of(events) == [
        "start",
        "thinking_start", "thinking_delta", "thinking_delta", "thinking_end",
        "text_start", "text_delta", "text_delta", "text_end",
        "toolcall_start", "toolcall_delta", "toolcall_delta", "toolcall_end",
        "done",
    ]  # fmt: skip
    final = events[-1]
    assert isinstance(final, DoneEvent) and final.reason == "toolUse"
    message = final.message
    assert message["content"] == [
        {"type": "thinking", "thinking": "plan it", "thinkingSignature": "sig-A"},
        {"type": "text", "text": "Reading it."},
        {"type": "toolCall", "id": "toolu_1", "name": "read", "arguments": {"path": "t.py"}},
    ]
    assert message["stopReason"] == "toolUse" and message["rawStopReason"] == "tool_use"
    assert message["responseId"].startswith("msg_loop")
    assert message["api"] == "anthropic-messages" and message["provider"] == "anthropic"
    assert "errorMessage" not in message


def test_live_tool_arguments_are_parsed_while_streaming(loopback: LoopbackServer) -> None:
    loopback.script(
        Turn([ToolCall("read", {"path": "src/app.py"}, fragments=['{"pa', 'th": "src/', 'app.py"}'])])
    )
    events = collect(loopback.anthropic_model())
    snapshots = [e for e in events if e.type == "toolcall_delta"]
    assert [e.delta for e in snapshots] == ['{"pa', 'th": "src/', 'app.py"}']  # type: ignore[union-attr]
    assert events[-1].message["content"][0]["arguments"] == {"path": "src/app.py"}  # type: ignore[union-attr]


def test_redacted_thinking_keeps_the_opaque_data(loopback: LoopbackServer) -> None:
    loopback.script(Turn([Thinking("", signature="OPAQUE==", redacted=True), Text("ok")]))
    message = collect(loopback.anthropic_model())[-1].message  # type: ignore[union-attr]
    block = message["content"][0]
    assert block["redacted"] is True and block["thinkingSignature"] == "OPAQUE==" and block["thinking"]


def test_usage_and_cost(loopback: LoopbackServer) -> None:
    loopback.script(
        Turn([Text("hi")], usage=Usage(input=1000, output=500, cache_read=2000, cache_write=400, reasoning=7))
    )
    model = loopback.anthropic_model(cost=ModelCost(input=3, output=15, cache_read=0.3, cache_write=3.75))
    usage = collect(model)[-1].message["usage"]  # type: ignore[union-attr]
    assert {k: usage[k] for k in ("input", "output", "cacheRead", "cacheWrite", "totalTokens", "reasoning")} == {
        "input": 1000, "output": 500, "cacheRead": 2000, "cacheWrite": 400, "totalTokens": 3900, "reasoning": 7,
    }  # fmt: skip
    assert usage["cost"]["input"] == pytest.approx(0.003)
    assert usage["cost"]["output"] == pytest.approx(0.0075)
    assert usage["cost"]["cacheRead"] == pytest.approx(0.0006)
    assert usage["cost"]["cacheWrite"] == pytest.approx(0.0015)
    assert usage["cost"]["total"] == pytest.approx(0.003 + 0.0075 + 0.0006 + 0.0015)


def test_tiered_cost_applies_to_the_whole_request(loopback: LoopbackServer) -> None:
    tier = CostTier(input_tokens_above=200000, input=6, output=22.5, cache_read=0.6, cache_write=7.5)
    model = loopback.anthropic_model(cost=ModelCost(3, 15, 0.3, 3.75, tiers=(tier,)))
    loopback.script(
        Turn([Text("a")], usage=Usage(input=150000, output=1000, cache_read=50001)),
        Turn([Text("b")], usage=Usage(input=150000, output=1000, cache_read=50000)),
    )
    above = collect(model)[-1].message["usage"]["cost"]  # type: ignore[union-attr]
    assert above["input"] == pytest.approx(0.9) and above["output"] == pytest.approx(0.0225)
    at = collect(model)[-1].message["usage"]["cost"]  # type: ignore[union-attr]
    assert at["input"] == pytest.approx(0.45) and at["output"] == pytest.approx(0.015)


@pytest.mark.parametrize(
    ("raw", "stop", "reason"),
    [("end_turn", "stop", "done"), ("pause_turn", "stop", "done"), ("stop_sequence", "stop", "done"),
     ("max_tokens", "length", "done"), ("refusal", "error", "error"), ("sensitive", "error", "error"),
     ("something_new", "error", "error")],
)  # fmt: skip
def test_stop_reason_mapping(loopback: LoopbackServer, raw: str, stop: str, reason: str) -> None:
    loopback.script(Turn([Text("x")], raw_stop=raw))
    final = collect(loopback.anthropic_model())[-1]
    assert final.type == reason
    assert final.message["stopReason"] == stop  # type: ignore[union-attr]
    if reason == "error":
        assert isinstance(final, ErrorEvent) and final.message["errorMessage"]
        if raw in ("refusal", "sensitive"):
            assert final.error.kind is ErrorKind.REFUSAL


def test_awkward_chunk_splits_give_the_same_message(loopback: LoopbackServer) -> None:
    pieces = [
        Thinking("a b c"),
        Text("héllo wörld 🐍 done"),
        ToolCall("read", {"path": "ü.py"}, id="toolu_x"),
    ]
    loopback.script(Turn(pieces), Turn(pieces, split_bytes=3), Turn(pieces, split_bytes=7))
    messages = [collect(loopback.anthropic_model())[-1].message for _ in range(3)]  # type: ignore[union-attr]
    contents = [m["content"] for m in messages]
    assert contents[0] == contents[1] == contents[2]
    assert contents[0][1]["text"] == "héllo wörld 🐍 done"


def test_messages_with_images_are_sent_as_base64_sources(loopback: LoopbackServer) -> None:
    loopback.script(Turn([Text("a cat")]))
    image = {"type": "image", "data": "aGVsbG8=", "mimeType": "image/png"}
    ctx_msg = {"role": "user", "content": [{"type": "text", "text": "what is it?"}, image], "timestamp": 1}
    collect(loopback.anthropic_model(), context(ctx_msg), StreamOptions(api_key="k"))
    sent = loopback.requests[-1].body["messages"][0]["content"]
    assert sent[1] == {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": "aGVsbG8="},
        "cache_control": {"type": "ephemeral"},  # the last block of the last user message
    }


def test_one_hour_cache_writes_cost_twice_the_input_rate(loopback: LoopbackServer) -> None:
    loopback.script(
        Turn([Text("x")], usage=Usage(input=100, output=10, cache_write=1000, cache_write_1h=400))
    )
    model = loopback.anthropic_model(cost=ModelCost(input=3, output=15, cache_read=0.3, cache_write=3.75))
    usage = collect(model)[-1].message["usage"]  # type: ignore[union-attr]
    assert usage["cacheWrite"] == 1000 and usage["cacheWrite1h"] == 400
    assert usage["cost"]["cacheWrite"] == pytest.approx(600 * 3.75e-6 + 400 * 2 * 3e-6)


def test_message_delta_usage_overwrites_only_non_null_fields(loopback: LoopbackServer) -> None:
    # message_start reports input 100 and output 1; message_delta reports only the final output count.
    loopback.script(Turn([Text("a b c")], usage=Usage(input=100, output=42)))
    usage = collect(loopback.anthropic_model())[-1].message["usage"]  # type: ignore[union-attr]
    assert (usage["input"], usage["output"], usage["totalTokens"]) == (100, 42, 142)


def test_response_model_is_recorded_only_when_it_differs(loopback: LoopbackServer) -> None:
    loopback.script(Turn([Text("a")]), Turn([Text("b")], model="claude-snapshot-20250929"))
    assert "responseModel" not in collect(loopback.anthropic_model())[-1].message  # type: ignore[union-attr]
    second = collect(loopback.anthropic_model())[-1].message  # type: ignore[union-attr]
    assert second["responseModel"] == "claude-snapshot-20250929" and second["model"] == "loopback-model"


def test_one_hour_cache_writes_are_written_as_zero_when_not_reported(loopback: LoopbackServer) -> None:
    """Pi 1.6 writes cacheWrite1h on every Anthropic reply (0 when the server gives no TTL breakdown)."""
    loopback.script(Turn([Text("x")], usage=Usage(input=100, output=10, cache_write=50)))
    usage = collect(loopback.anthropic_model())[-1].message["usage"]  # type: ignore[union-attr]
    assert usage["cacheWrite1h"] == 0 and "reasoning" not in usage


STRICT_READ = ToolSpec(
    "read", "Read a file", {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
    strict=True,
)  # fmt: skip
TOO_MANY = '{"type":"error","error":{"type":"invalid_request_error","message":"Too many strict tools (25). The maximum is 20."}}'


def test_strict_tools_over_claudes_limits_are_sent_again_non_strict(loopback: LoopbackServer) -> None:
    """A 400 that says the strict tools exceed Claude's limits: the same request at once without strict
    tools, one reply, the message noting the fallback; the session's later requests go non-strict."""
    model = loopback.anthropic_model(compat={"supportsStrictTools": True})
    options = StreamOptions(api_key="sk-test", session_id="strict-session")
    loopback.script(Turn(failure=Failure.http(400, TOO_MANY)), Turn([Text("Fine.")]), Turn([Text("Again.")]))
    events = collect(model, context(tools=[STRICT_READ]), options)
    assert types_of(events).count("start") == 1 and isinstance(events[-1], DoneEvent)
    first, second = (r.body["tools"][0] for r in loopback.requests)
    assert first["strict"] is True and "strict" not in second
    (note,) = events[-1].message["diagnostics"]
    assert (
        note["type"] == "anthropic_strict_tools_fallback"
        and "Too many strict tools" in note["error"]["message"]
    )
    assert note["details"] == {"reason": "strict_tool_limits_exceeded"}
    later = collect(model, context(tools=[STRICT_READ]), options)
    assert isinstance(later[-1], DoneEvent) and "diagnostics" not in later[-1].message
    assert "strict" not in loopback.requests[-1].body["tools"][0] and len(loopback.requests) == 3


def test_another_invalid_request_is_not_sent_again(loopback: LoopbackServer) -> None:
    model = loopback.anthropic_model(compat={"supportsStrictTools": True})
    body = '{"type":"error","error":{"type":"invalid_request_error","message":"messages: text content blocks must be non-empty"}}'
    loopback.script(Turn(failure=Failure.http(400, body)))
    events = collect(model, context(tools=[STRICT_READ]), StreamOptions(api_key="sk-test", session_id="s2"))
    assert isinstance(events[-1], ErrorEvent) and len(loopback.requests) == 1
