"""The reply whose usage anchors the prompt estimate: the last one that still measures its prefix."""

from __future__ import annotations

import math
import random
from typing import Any

from piwork.core.llm.estimate import _last_usage
from piwork.core.usage import calculate_context_tokens, valid_usage


def _by_definition(messages: list[dict[str, Any]]) -> tuple[int, float] | None:
    """The rule spelled out: a reply counts when its time stamp is at least every earlier message's
    (non-numbers as 0) and its usage is valid; the last such reply wins."""
    found = None
    for index, message in enumerate(messages):
        stamps = [m.get("timestamp") for m in messages[: index + 1]]
        numbers = [s if isinstance(s, int | float) and not isinstance(s, bool) else 0 for s in stamps]
        earlier = max(numbers[:-1], default=-math.inf) if index else -math.inf
        if index and any(n != n for n in numbers[:-1]):  # NaN: the running max skips it, as before
            earlier = max((n for n in numbers[:-1] if n == n), default=-math.inf)
        usage = valid_usage(message) if message.get("role") == "assistant" else None
        if usage is not None and numbers[-1] >= earlier:
            found = (index, calculate_context_tokens(usage))
    return found


def test_last_usage_follows_its_rule_on_random_lists() -> None:
    rng = random.Random(11)
    stamps: list[Any] = [None, True, float("nan"), 5, 5.0, 3, 10, -1, 0, float("inf"), "x"]
    for _ in range(2000):
        messages = []
        for _ in range(rng.randrange(0, 10)):
            message: dict[str, Any] = {
                "role": rng.choice(["user", "assistant", "assistant", "toolResult"]),
                "timestamp": rng.choice(stamps),
            }
            if rng.random() < 0.7:
                total = rng.randrange(0, 9)
                message["usage"] = {"input": total, "output": 1, "cacheRead": 0, "cacheWrite": 0,
                                    "totalTokens": total}  # fmt: skip
            if rng.random() < 0.2:
                message["stopReason"] = rng.choice(["error", "aborted", "stop"])
            messages.append(message)
        assert _last_usage(messages) == _by_definition(messages), messages


def test_a_reply_older_than_a_message_before_it_is_not_the_anchor() -> None:
    usage = {"input": 7, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 8}
    messages = [
        {"role": "assistant", "timestamp": 10, "usage": usage},
        {"role": "user", "timestamp": 50},  # a summary put before a later reply carries a newer stamp
        {"role": "assistant", "timestamp": 20, "usage": {**usage, "totalTokens": 99}},
    ]
    assert _last_usage(messages) == (0, 8)
