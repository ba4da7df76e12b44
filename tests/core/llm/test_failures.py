"""Every failure ends the stream with one error event (never a raise, never a hang), for both protocols."""

from __future__ import annotations

import asyncio
import json
import socket
import time

import pytest

from piwork.core.llm.anthropic import AnthropicParser
from piwork.core.llm.sse import SseEvent
from piwork.core.llm.streaming import complete, stream
from piwork.core.llm.types import ErrorEvent, ErrorKind, Model, StreamOptions
from tests.core.llm.helpers import collect, context
from tests.support import Failure, LoopbackServer, Text, ToolCall, Turn

PROTOCOLS = ["anthropic", "openai"]
ANTHROPIC_429 = '{"type":"error","error":{"type":"rate_limit_error","message":"Number of requests exceeded"}}'
ANTHROPIC_529 = '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}'
OVERFLOW = '{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}'


def model_for(server: LoopbackServer, protocol: str) -> Model:
    return server.anthropic_model() if protocol == "anthropic" else server.openai_model()


def final_error(server: LoopbackServer, protocol: str, options: StreamOptions | None = None) -> ErrorEvent:
    events = collect(model_for(server, protocol), context(), options or StreamOptions(api_key="sk-test"))
    assert events[0].type == "start"
    assert [e.type for e in events].count("error") == 1 and events[-1].type == "error"
    final = events[-1]
    assert isinstance(final, ErrorEvent)
    return final


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_429_with_retry_after(loopback: LoopbackServer, protocol: str) -> None:
    loopback.script(Turn(failure=Failure.http(429, ANTHROPIC_429, {"retry-after": "7"})))
    final = final_error(loopback, protocol)
    assert final.message["stopReason"] == "error"
    # worded as Pi words it: the whole JSON body (Anthropic), the error object (OpenAI-compatible)
    assert final.message["errorMessage"].startswith("429 " if protocol == "anthropic" else "429: ")
    assert "rate_limit_error" in final.message["errorMessage"]
    assert final.error.kind is ErrorKind.RATE_LIMIT and final.error.retryable
    assert final.error.retry_after_ms == 7000 and final.error.status == 429


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_529_overloaded(loopback: LoopbackServer, protocol: str) -> None:
    loopback.script(Turn(failure=Failure.http(529, ANTHROPIC_529)))
    final = final_error(loopback, protocol)
    assert final.error.kind is ErrorKind.OVERLOADED and final.error.retryable


def test_context_overflow_is_classified_and_not_retryable(loopback: LoopbackServer) -> None:
    loopback.script(Turn(failure=Failure.http(400, OVERFLOW)))
    final = final_error(loopback, "anthropic")
    assert final.error.kind is ErrorKind.CONTEXT_OVERFLOW and not final.error.retryable


def test_401_is_auth_and_the_key_never_appears(loopback: LoopbackServer) -> None:
    key = "sk-ant-SECRET-0123456789"
    loopback.script(Turn(failure=Failure.http(401, f'{{"error": "invalid x-api-key {key}"}}')))
    final = final_error(loopback, "anthropic", StreamOptions(api_key=key))
    assert final.error.kind is ErrorKind.AUTH
    assert key not in repr(final) and "***" in final.message["errorMessage"]


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_error_body_is_truncated(loopback: LoopbackServer, protocol: str) -> None:
    loopback.script(Turn(failure=Failure.http(500, "x" * 10000)))
    text = final_error(loopback, protocol).message["errorMessage"]
    assert text.startswith("500 ") and text.endswith("x... [truncated 6000 chars]")


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("abrupt", [True, False])
def test_stream_cut_mid_message_keeps_what_arrived(
    loopback: LoopbackServer, protocol: str, abrupt: bool
) -> None:
    loopback.script(
        Turn([Text("one two three four five")], failure=Failure.cut(after_events=5, abrupt=abrupt))
    )
    final = final_error(loopback, protocol)
    text = final.message["errorMessage"]
    if abrupt:
        assert text.startswith("Connection lost")
        assert final.error.kind is ErrorKind.NETWORK
    elif protocol == "anthropic":
        assert text == "stream ended before message_stop"
    else:
        assert text == "stream ended without finish_reason"
    assert final.error.retryable
    assert final.message["content"] and final.message["content"][0]["type"] == "text"


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_malformed_event_line(loopback: LoopbackServer, protocol: str) -> None:
    loopback.script(Turn([Text("a b c")], failure=Failure.malformed(after_events=3, line='{"type": broken')))
    final = final_error(loopback, protocol)
    assert final.error.kind is ErrorKind.MALFORMED_STREAM
    assert "Malformed stream" in final.message["errorMessage"]


def test_anthropic_error_event_mid_stream(loopback: LoopbackServer) -> None:
    loopback.script(Turn([Text("partial answer")], failure=Failure.error_event(4, ANTHROPIC_529)))
    final = final_error(loopback, "anthropic")
    assert final.message["errorMessage"] == ANTHROPIC_529
    assert final.error.kind is ErrorKind.OVERLOADED and final.error.retryable


def test_openai_error_chunk_mid_stream(loopback: LoopbackServer) -> None:
    body = '{"error": {"message": "Rate limit reached", "type": "rate_limit_exceeded"}}'
    loopback.script(Turn([Text("partial answer")], failure=Failure.error_event(2, body)))
    final = final_error(loopback, "openai")
    assert "Rate limit reached" in final.message["errorMessage"]
    assert final.error.kind is ErrorKind.RATE_LIMIT


def test_openai_missing_finish_reason_is_inferred_when_compat_says_so(loopback: LoopbackServer) -> None:
    loopback.script(Turn([ToolCall("read", {"path": "a"})], omit_finish_reason=True))
    model = loopback.openai_model(compat={"supportsFinishReason": False})
    final = collect(model)[-1]
    assert final.type == "done" and final.message["stopReason"] == "toolUse"  # type: ignore[union-attr]
    loopback.script(Turn([Text("x")], omit_finish_reason=True))
    assert final_error(loopback, "openai").message["errorMessage"] == "stream ended without finish_reason"


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_idle_timeout_when_the_server_hangs(loopback: LoopbackServer, protocol: str) -> None:
    loopback.script(Turn(failure=Failure.hang()))
    final = final_error(loopback, protocol, StreamOptions(api_key="k", idle_timeout=0.3))
    assert final.error.kind is ErrorKind.TIMEOUT and not final.error.retryable  # a hung server stays hung
    assert "(silence limit: httpIdleTimeoutMs, 0.3 s per reply)" in final.message["errorMessage"]


def test_total_timeout_during_a_slow_drip(loopback: LoopbackServer) -> None:
    loopback.script(Turn([Text("w " * 200)], drip=0.05))
    final = final_error(loopback, "anthropic", StreamOptions(api_key="k", total_timeout=0.4))
    assert final.error.kind is ErrorKind.TIMEOUT and not final.error.retryable
    assert (
        "longer than 0.4 s in all (reply time limit: retry.provider.timeoutMs"
        in final.message["errorMessage"]
    )
    assert final.message["content"], "what arrived before the limit is kept"


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_connection_refused_on_this_computer_is_said_at_once(loopback: LoopbackServer, protocol: str) -> None:
    """Nothing listens on the local port: no retry brings a server up, so the reply fails at once and
    says what to do; a refused remote host stays a network error worth retrying."""
    port = _closed_port()
    url = f"http://127.0.0.1:{port}"
    model = (
        loopback.anthropic_model(base_url=url)
        if protocol == "anthropic"
        else loopback.openai_model(base_url=url)
    )
    final = collect(model)[-1]
    assert isinstance(final, ErrorEvent)
    text = final.message["errorMessage"]
    assert text.startswith(f"Connection refused: nothing is listening at 127.0.0.1:{port} on this computer")
    assert "Start the local model server" in text
    assert final.error.kind is ErrorKind.NETWORK and not final.error.retryable


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_abort_mid_stream_ends_with_aborted_message(loopback: LoopbackServer, protocol: str) -> None:
    loopback.script(Turn([Text("word " * 500)], drip=0.01))
    model = model_for(loopback, protocol)

    async def run() -> list[object]:
        abort = asyncio.Event()
        seen = []
        async for event in stream(model, context(), StreamOptions(api_key="k", abort=abort)):
            seen.append(event)
            if event.type == "text_delta" and len(seen) > 6:
                abort.set()
        return seen

    events = asyncio.run(asyncio.wait_for(run(), 20))
    final = events[-1]
    assert isinstance(final, ErrorEvent) and final.reason == "aborted"
    assert final.message["stopReason"] == "aborted" and final.error.kind is ErrorKind.ABORTED
    assert final.message["content"][0]["text"].startswith("word word")
    if protocol == "anthropic":  # usage from message_start survives the abort
        assert final.message["usage"]["input"] == 100 and final.message["usage"]["totalTokens"] >= 100


def test_abort_while_waiting_for_the_server(loopback: LoopbackServer) -> None:
    loopback.script(Turn(failure=Failure.hang()))
    model = loopback.anthropic_model()

    async def run() -> dict[str, object]:
        abort = asyncio.Event()
        asyncio.get_running_loop().call_later(0.2, abort.set)
        started = time.monotonic()
        message = await complete(model, context(), StreamOptions(api_key="k", abort=abort))
        assert time.monotonic() - started < 5
        return message

    message = asyncio.run(asyncio.wait_for(run(), 20))
    assert message["stopReason"] == "aborted"


def test_plain_task_cancellation_propagates_and_closes_the_stream(loopback: LoopbackServer) -> None:
    loopback.script(Turn([Text("word " * 500)], drip=0.01))
    model = loopback.anthropic_model()

    async def run() -> None:
        task = asyncio.create_task(complete(model, context(), StreamOptions(api_key="k")))
        await asyncio.sleep(0.2)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(asyncio.wait_for(run(), 20))


def test_unsupported_api_is_an_error_event(loopback: LoopbackServer) -> None:
    final = collect(loopback.anthropic_model(api="google-generative-ai"))[-1]
    assert isinstance(final, ErrorEvent) and "google-generative-ai" in final.message["errorMessage"]


@pytest.mark.parametrize(
    ("protocol", "line"),
    [
        ("anthropic", '{"type": "content_block_delta", "index": "first", "delta": 5}'),
        ("anthropic", '{"type": "content_block_delta", "index": 0, "delta": "stop"}'),
        ("openai", '{"choices": [{"delta": {"tool_calls": [{"index": 0, "function": "oops"}]}}]}'),
    ],
)
def test_valid_json_of_the_wrong_shape_is_a_malformed_stream(
    loopback: LoopbackServer, protocol: str, line: str
) -> None:
    loopback.script(Turn([Text("a b c")], failure=Failure.malformed(after_events=3, line=line)))
    final = final_error(loopback, protocol)
    assert final.error.kind is ErrorKind.MALFORMED_STREAM


def test_huge_error_body_is_read_only_in_part(loopback: LoopbackServer) -> None:
    loopback.script(Turn(failure=Failure.http(502, "y" * 5_000_000)))
    text = final_error(loopback, "openai").message["errorMessage"]
    assert len(text) < 4100 and text.endswith("+ chars]")


def test_anthropic_ignores_unnamed_and_unknown_events(loopback: LoopbackServer) -> None:
    parser = AnthropicParser(loopback.anthropic_model())
    assert parser.feed(SseEvent("message", "{garbage")) == []
    assert parser.feed(SseEvent("some_future_event", "{garbage")) == []
    assert parser.feed(SseEvent("ping", "")) == []
    start = {"type": "message_start", "message": {"id": "m1", "usage": {"input_tokens": 3}}}
    assert parser.feed(SseEvent("message", json.dumps(start))) == []  # typed by its data alone
    assert parser.message["responseId"] == "m1" and parser.message["usage"]["input"] == 3


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("key", ["sk-pasted-secret-123\n", "sk-pasted-sécret-123", "sk-a\x00b-secret-123"])
def test_key_the_http_library_refuses_is_an_error_event_that_hides_it(
    loopback: LoopbackServer, protocol: str, key: str
) -> None:
    final = final_error(loopback, protocol, StreamOptions(api_key=key))
    text = final.message["errorMessage"]
    assert final.message["stopReason"] == "error" and "API key" in text
    assert "pasted" not in text and "secret" not in text and not final.error.retryable
    assert len(loopback.requests) == 0


def test_secret_header_values_from_the_model_are_hidden_too(loopback: LoopbackServer) -> None:
    model = loopback.openai_model(headers={"Authorization": "Bearer tok-custom-secret\n"})
    events = collect(model, context(), StreamOptions(api_key="sk-test"))
    final = events[-1]
    assert isinstance(final, ErrorEvent)
    assert "tok-custom-secret" not in final.message["errorMessage"]
