"""OpenAI Chat Completions against the loopback server: text, reasoning, split tool calls, usage."""

from __future__ import annotations

import pytest

from piwork.core.llm.types import DoneEvent, ErrorEvent, ModelCost
from tests.core.llm.helpers import collect, types_of
from tests.support import LoopbackServer, Text, Thinking, ToolCall, Turn, Usage


def test_reasoning_text_and_two_split_tool_calls(loopback: LoopbackServer) -> None:
    loopback.script(
        Turn(
            [
                Thinking("think first", signature="reasoning"),
                Text("Two reads."),
                ToolCall("read", {"path": "a.py"}, id="call_a", fragments=['{"pa', 'th":', ' "a.py"}']),
                ToolCall("read", {"path": "b.py"}, id="call_b"),
            ]
        )
    )
    events = collect(loopback.openai_model())
    kinds = types_of(events)
    assert kinds[0] == "start" and kinds[-1] == "done"
    # No per-block end in this protocol: every *_end fires when the stream finishes, in content order.
    assert kinds[-5:] == ["thinking_end", "text_end", "toolcall_end", "toolcall_end", "done"]
    final = events[-1]
    assert isinstance(final, DoneEvent) and final.reason == "toolUse"
    assert final.message["content"] == [
        {"type": "thinking", "thinking": "think first", "thinkingSignature": "reasoning"},
        {"type": "text", "text": "Two reads."},
        {"type": "toolCall", "id": "call_a", "name": "read", "arguments": {"path": "a.py"}},
        {"type": "toolCall", "id": "call_b", "name": "read", "arguments": {"path": "b.py"}},
    ]
    assert final.message["responseId"].startswith("chatcmpl-loop")


def test_usage_from_the_usage_only_final_chunk(loopback: LoopbackServer) -> None:
    loopback.script(
        Turn([Text("hi")], usage=Usage(input=900, output=40, cache_read=100, cache_write=0, reasoning=12))
    )
    model = loopback.openai_model(cost=ModelCost(input=1.25, output=10, cache_read=0.125))
    usage = collect(model)[-1].message["usage"]  # type: ignore[union-attr]
    # prompt_tokens (1000) includes the cached 100: input counts only the uncached part.
    assert (usage["input"], usage["cacheRead"], usage["output"], usage["reasoning"]) == (900, 100, 40, 12)
    assert usage["totalTokens"] == 1040
    assert usage["cost"]["total"] == pytest.approx(900 * 1.25e-6 + 40 * 10e-6 + 100 * 0.125e-6)


@pytest.mark.parametrize(
    ("raw", "stop"), [("stop", "stop"), ("end", "stop"), ("length", "length"), ("function_call", "toolUse")]
)
def test_finish_reasons(loopback: LoopbackServer, raw: str, stop: str) -> None:
    loopback.script(Turn([Text("x")], raw_stop=raw))
    final = collect(loopback.openai_model())[-1]
    assert final.type == "done" and final.message["stopReason"] == stop  # type: ignore[union-attr]


def test_content_filter_is_an_error(loopback: LoopbackServer) -> None:
    loopback.script(Turn([Text("x")], raw_stop="content_filter"))
    final = collect(loopback.openai_model())[-1]
    assert isinstance(final, ErrorEvent) and final.message["errorMessage"] == "finish_reason: content_filter"


def test_split_bytes_do_not_change_the_result(loopback: LoopbackServer) -> None:
    pieces = [Thinking("α β"), Text("naïve café ☕ ok"), ToolCall("read", {"path": "日本.txt"}, id="c1")]
    loopback.script(Turn(pieces), Turn(pieces, split_bytes=2))
    first = collect(loopback.openai_model())[-1].message["content"]  # type: ignore[union-attr]
    second = collect(loopback.openai_model())[-1].message["content"]  # type: ignore[union-attr]
    assert first == second and second[1]["text"] == "naïve café ☕ ok"


def test_local_servers_are_never_proxied(loopback: LoopbackServer, monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.setenv(var, "http://127.0.0.1:9")
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    loopback.script(Turn([Text("direct")]))
    final = collect(loopback.openai_model(base_url=f"http://localhost:{loopback.port}/v1"))[-1]
    assert final.type == "done" and final.message["content"][0]["text"] == "direct"  # type: ignore[union-attr]


def test_tool_call_fragments_without_index_are_matched_by_id_or_continue_the_last_call() -> None:
    from piwork.core.llm.openai import OpenAIParser
    from piwork.core.llm.sse import SseEvent
    from piwork.core.llm.types import OPENAI_COMPLETIONS, Model

    parser = OpenAIParser(Model("m", "m", OPENAI_COMPLETIONS, "p", "http://x"))
    chunks = [
        {
            "choices": [
                {"delta": {"tool_calls": [{"id": "c1", "function": {"name": "read", "arguments": '{"pa'}}]}}
            ]
        },
        {"choices": [{"delta": {"tool_calls": [{"function": {"arguments": 'th": 1}'}}]}}]},
        {
            "choices": [
                {"delta": {"tool_calls": [{"id": "c2", "function": {"name": "ls", "arguments": "{}"}}]}}
            ]
        },
        {"choices": [{"delta": {}, "finish_reason": "tool_calls"}]},
    ]
    import json

    for chunk in chunks:
        parser.feed(SseEvent("message", json.dumps(chunk)))
    parser.finish()
    assert parser.message["content"] == [
        {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": 1}},
        {"type": "toolCall", "id": "c2", "name": "ls", "arguments": {}},
    ]


def test_reasoning_tokens_are_written_as_zero_when_not_reported(loopback: LoopbackServer) -> None:
    """Pi 1.6 writes usage.reasoning on every Chat Completions reply (0 when the server does not say)."""
    loopback.script(Turn([Text("hi")], usage=Usage(input=10, output=4)))
    usage = collect(loopback.openai_model())[-1].message["usage"]  # type: ignore[union-attr]
    assert usage["reasoning"] == 0 and "cacheWrite1h" not in usage
