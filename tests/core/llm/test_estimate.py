"""The prompt-size figure that caps ``max_tokens``: provider usage first, chars/4 for what follows."""

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
    assert estimate_context(context) == 100 + 10 + math.ceil(len(schema) / 4)  # compact JSON, as Pi counts it


def test_reported_usage_replaces_the_estimate_of_its_prefix() -> None:
    usage = {"input": 20000, "output": 30, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 20030}
    context = LlmContext("x" * 400, [_user("hi"), _assistant(usage), _user("z" * 80, 3)], [TOOL])
    assert estimate_context(context) == 20030 + 20
    assert clamp_max_tokens(40000, estimate_context(context), 32000) == 40000 - 20050 - 4096


def test_failed_or_empty_usage_and_usage_older_than_an_inserted_prefix_are_ignored() -> None:
    usage = {"input": 5000, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0}
    errored = LlmContext("", [_user("hi"), _assistant(usage, stop="error")])
    assert estimate_context(errored) == 1 + 1
    summary_later = LlmContext("", [_user("summary", timestamp=10), _assistant(usage, timestamp=5)])
    assert estimate_context(summary_later) == 2 + 1
    no_usage = LlmContext(
        "", [_user("hi"), _assistant({"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0})]
    )
    assert estimate_context(no_usage) == 1 + 1
