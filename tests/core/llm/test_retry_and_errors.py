"""Provider-level retries (Retry-After, retry-after-ms, the delay cap) and error classification tables."""

from __future__ import annotations

import time

import httpx
import pytest

from piwork.core.llm.errors import classify, is_context_overflow, is_retryable_text
from piwork.core.llm.transport import retry_after_ms
from piwork.core.llm.types import ErrorKind, StreamOptions
from tests.core.llm.helpers import collect
from tests.support import Failure, LoopbackServer, Text, Turn

BUSY = '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}'


def test_retries_after_the_server_delay_then_succeeds(loopback: LoopbackServer) -> None:
    loopback.script(
        Turn(failure=Failure.http(429, BUSY, {"retry-after-ms": "150"})),
        Turn(failure=Failure.http(503, BUSY, {"retry-after": "0"})),
        Turn([Text("finally")]),
    )
    started = time.monotonic()
    final = collect(loopback.anthropic_model(), options=StreamOptions(api_key="k", max_retries=2))[-1]
    assert final.type == "done" and final.message["content"][0]["text"] == "finally"  # type: ignore[union-attr]
    assert time.monotonic() - started >= 0.15
    assert len(loopback.requests) == 3


def test_no_retry_by_default(loopback: LoopbackServer) -> None:
    loopback.script(Turn(failure=Failure.http(500, BUSY)), Turn([Text("never")]))
    assert collect(loopback.openai_model())[-1].type == "error"
    assert loopback.pending == 1


def test_server_delay_above_the_cap_fails_at_once(loopback: LoopbackServer) -> None:
    loopback.script(Turn(failure=Failure.http(429, BUSY, {"retry-after": "120"})), Turn([Text("never")]))
    final = collect(
        loopback.anthropic_model(), options=StreamOptions(api_key="k", max_retries=3, max_retry_delay_ms=1000)
    )[-1]
    text = final.message["errorMessage"]  # type: ignore[union-attr]
    assert text.startswith("Server requested 120s retry delay (max: 1s). 429 ")
    assert is_retryable_text(text) and loopback.pending == 1


def test_x_should_retry_false_and_non_retryable_statuses(loopback: LoopbackServer) -> None:
    loopback.script(
        Turn(failure=Failure.http(500, BUSY, {"x-should-retry": "false"})),
        Turn(failure=Failure.http(400, '{"error": "bad request"}')),
        Turn(failure=Failure.http(400, '{"error": "try me"}', {"x-should-retry": "true"})),
        Turn([Text("ok")]),
    )
    options = StreamOptions(api_key="k", max_retries=1)
    assert collect(loopback.openai_model(), options=options)[-1].message["errorMessage"].startswith("500")  # type: ignore[union-attr]
    assert collect(loopback.openai_model(), options=options)[-1].message["errorMessage"].startswith("400")  # type: ignore[union-attr]
    assert collect(loopback.openai_model(), options=options)[-1].type == "done"


def test_retry_after_header_forms() -> None:
    assert retry_after_ms(httpx.Headers({"retry-after-ms": "1500.5"})) == 1500
    assert retry_after_ms(httpx.Headers({"retry-after": "2"})) == 2000
    assert (
        retry_after_ms(httpx.Headers({"retry-after": "Wed, 21 Oct 2015 07:28:10 GMT"}), now=1445412480.0)
        == 10000
    )
    assert retry_after_ms(httpx.Headers({"retry-after": "soon"})) is None
    assert retry_after_ms(httpx.Headers({})) is None


@pytest.mark.parametrize(
    "text",
    [
        '400 {"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 213462 tokens > 200000 maximum"}}',
        '413 {"error":{"type":"request_too_large"}}',
        "400 This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens",
        "Your input exceeds the context window of this model",
        "400 the request exceeds the available context size, try increasing it",
        "trying to keep 9000 tokens which is greater than the context length of 8192",
        "prompt too long; exceeded max context length by 120 tokens",
        '{"error": {"code": "context_length_exceeded"}}',
        "400 (no body)",
        "413 status code (no body)",
    ],
)
def test_overflow_texts(text: str) -> None:
    assert classify(text).kind is ErrorKind.CONTEXT_OVERFLOW
    assert not is_retryable_text(text)
    assert is_context_overflow({"stopReason": "error", "errorMessage": text})


def test_rate_limit_text_is_never_overflow() -> None:
    text = "429 rate limit: too many tokens per minute"
    assert classify(text).kind is ErrorKind.RATE_LIMIT and is_retryable_text(text)


@pytest.mark.parametrize(
    ("text", "retryable"),
    [
        ("529 overloaded_error", True), ("Connection error: [Errno 111] Connection refused", True),
        ("Timed out: no data from the server for 300 s", True), ("stream ended before message_stop", True),
        ("502 Bad Gateway", True), ("upstream connect error or disconnect/reset before headers", True),
        ('429 {"error": {"type": "insufficient_quota"}}', False), ("403 billing hard limit reached", False),
        ("400 max_tokens: 5000 is too large", False),  # 5000 is not status 500
        ("401 invalid x-api-key", False), ("", False),
    ],
)  # fmt: skip
def test_retryable_table(text: str, retryable: bool) -> None:
    assert is_retryable_text(text) is retryable


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("401 authentication_error", ErrorKind.AUTH), ("429 rate_limit_error", ErrorKind.RATE_LIMIT),
        ("529 overloaded", ErrorKind.OVERLOADED), ("500 api_error", ErrorKind.SERVER),
        ('429 {"code": "insufficient_quota"}', ErrorKind.QUOTA), ("404 model not found", ErrorKind.INVALID_REQUEST),
        ("Connection lost: peer closed connection", ErrorKind.NETWORK), ("Request timed out", ErrorKind.TIMEOUT),
        ("stream ended without finish_reason", ErrorKind.MALFORMED_STREAM),
    ],
)  # fmt: skip
def test_kind_table(text: str, kind: ErrorKind) -> None:
    assert classify(text).kind is kind


def test_silent_overflow_from_usage() -> None:
    usage = {"input": 150000, "cacheRead": 60000, "output": 10}
    assert is_context_overflow({"stopReason": "stop", "usage": usage}, 200000)
    assert not is_context_overflow({"stopReason": "stop", "usage": usage}, 0)
    length = {"input": 199000, "cacheRead": 0, "output": 0}
    assert is_context_overflow({"stopReason": "length", "usage": length}, 200000)
    assert not is_context_overflow({"stopReason": "length", "usage": {**length, "output": 5}}, 200000)
