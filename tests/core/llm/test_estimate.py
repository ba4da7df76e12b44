"""The prompt-size figure that caps ``max_tokens``: provider usage first, 3.5 characters a token for what
follows (Pi 1.6; 0.85 counted 4)."""

from __future__ import annotations

import math
from typing import Any

from piwork.core.llm.estimate import clamp_max_tokens, estimate_context
from piwork.core.llm.types import LlmContext, ToolSpec

TOOL = ToolSpec("read", "Read a file", {"type": "object", "properties": {"path": {"type": "string"}}})


def _assistant(usage: dict[str, Any] | None, stop: str = "stop", timestamp: int = 2) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": [{"type": "text", "text": "abcd"}],
                               "stopReason": stop, "timestamp": timestamp}  # fmt: skip
    if usage is not None:
        message["usage"] = usage
    return message


def _user(text: str, timestamp: int = 1) -> dict[str, Any]:
    return {"role": "user", "content": text, "timestamp": timestamp}


def test_without_usage_everything_is_estimated() -> None:
    context = LlmContext("x" * 400, [_user("y" * 40)], [TOOL])
    schema = '[{"name":"read","description":"Read a file","parameters":{"type":"object","properties":{"path":{"type":"string"}}}}]'
    # compact JSON, as Pi counts it
    assert estimate_context(context) == math.ceil(400 / 3.5) + math.ceil(40 / 3.5) + math.ceil(
        len(schema) / 3.5
    )
    image = {"role": "user", "content": [{"type": "text", "text": "ab"}, {"type": "image"}], "timestamp": 1}
    assert estimate_context(LlmContext("", [image])) == math.ceil((2 + 4800) / 3.5)


def test_reported_usage_replaces_the_estimate_of_its_prefix() -> None:
    usage = {"input": 20000, "output": 30, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 20030}
    context = LlmContext("x" * 400, [_user("hi"), _assistant(usage), _user("z" * 80, 3)], [TOOL])
    assert estimate_context(context) == 20030 + math.ceil(80 / 3.5)
    assert clamp_max_tokens(40000, 20053, 32000) == 40000 - 20053 - 4096
    # a large window keeps a 15% margin while that leaves at least 32768 tokens of output
    assert clamp_max_tokens(1_000_000, 100_000, 900_000) == 1_000_000 - 100_000 - 15_000
    assert clamp_max_tokens(200_000, 150_000, 64_000) == 32768  # the ratio margin would leave too little
    assert clamp_max_tokens(0, 5, 9) == 9 and clamp_max_tokens(100, 500, 9) == 1


def test_failed_or_empty_usage_and_usage_older_than_an_inserted_prefix_are_ignored() -> None:
    usage = {"input": 5000, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0}
    errored = LlmContext("", [_user("hi"), _assistant(usage, stop="error")])
    assert estimate_context(errored) == 1 + 2
    summary_later = LlmContext("", [_user("summary", timestamp=10), _assistant(usage, timestamp=5)])
    assert estimate_context(summary_later) == 2 + 2
    no_usage = LlmContext(
        "", [_user("hi"), _assistant({"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0})]
    )
    assert estimate_context(no_usage) == 1 + 2
