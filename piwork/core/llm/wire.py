"""Helpers shared by the wire adapters: building assistant messages and usage/cost arithmetic."""

from __future__ import annotations

import time
from typing import Any

from piwork.core.llm.types import Message, Model, empty_usage


def now_ms() -> int:
    return int(time.time() * 1000)


def new_assistant_message(model: Model) -> Message:
    """The empty assistant message a stream starts from (stopReason ``stop`` until told otherwise)."""
    return {
        "role": "assistant",
        "content": [],
        "api": model.api,
        "provider": model.provider,
        "model": model.id,
        "usage": empty_usage(),
        "stopReason": "stop",
        "timestamp": now_ms(),
    }


def error_message(model: Model, text: str, *, aborted: bool = False, base: Message | None = None) -> Message:
    """A final failed message: ``base`` (what had streamed so far) or a fresh one, with the error set."""
    message = base if base is not None else new_assistant_message(model)
    message["stopReason"] = "aborted" if aborted else "error"
    message["errorMessage"] = text
    return message


def compute_cost(model: Model, usage: dict[str, Any]) -> dict[str, float]:
    """Fill ``usage["cost"]`` from the model's prices (USD per million tokens, tiers per whole request)."""
    cost = model.cost
    rate_in, rate_out, rate_cr, rate_cw = cost.input, cost.output, cost.cache_read, cost.cache_write
    prompt = usage.get("input", 0) + usage.get("cacheRead", 0) + usage.get("cacheWrite", 0)
    best = None
    for tier in cost.tiers:
        if prompt > tier.input_tokens_above and (
            best is None or tier.input_tokens_above > best.input_tokens_above
        ):
            best = tier
    if best is not None:
        rate_in, rate_out, rate_cr, rate_cw = best.input, best.output, best.cache_read, best.cache_write
    write_1h = usage.get("cacheWrite1h", 0) or 0
    write_5m = max(0, usage.get("cacheWrite", 0) - write_1h)
    result = {
        "input": rate_in / 1e6 * usage.get("input", 0),
        "output": rate_out / 1e6 * usage.get("output", 0),
        "cacheRead": rate_cr / 1e6 * usage.get("cacheRead", 0),
        "cacheWrite": rate_cw / 1e6 * write_5m + 2 * rate_in / 1e6 * write_1h,
    }
    result["total"] = result["input"] + result["output"] + result["cacheRead"] + result["cacheWrite"]
    usage["cost"] = result
    return result


def finish_usage(model: Model, usage: dict[str, Any]) -> None:
    """Recompute ``totalTokens`` and cost after any usage field changed."""
    usage["totalTokens"] = usage["input"] + usage["output"] + usage["cacheRead"] + usage["cacheWrite"]
    compute_cost(model, usage)
