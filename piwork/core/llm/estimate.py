"""Cheap prompt-size estimates (chars/4 in UTF-16 units, 1200 per image) used to clamp ``max_tokens``."""

from __future__ import annotations

import json
import math
from typing import Any

from piwork.core.compaction.tokens import calculate_context_tokens, valid_usage
from piwork.core.jscompat import utf16_len
from piwork.core.llm.types import LlmContext, Message

IMAGE_TOKENS = 1200
CONTEXT_SAFETY_TOKENS = 4096


def chars4(text: str) -> int:
    return math.ceil(utf16_len(text) / 4)


def message_chars(message: Message) -> tuple[int, int]:
    """(UTF-16 characters, image count) of a message as the model would see it."""
    content: Any = message.get("content")
    if isinstance(content, str):
        return utf16_len(content), 0
    chars = images = 0
    for block in content or []:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text":
            chars += utf16_len(block.get("text") or "")
        elif kind == "thinking":
            chars += utf16_len(block.get("thinking") or "")
        elif kind == "toolCall":
            chars += utf16_len(block.get("name") or "")
            chars += utf16_len(
                json.dumps(block.get("arguments") or {}, ensure_ascii=False, separators=(",", ":"))
            )
        elif kind == "image":
            images += 1
    return chars, images


def estimate_message(message: Message) -> int:
    chars, images = message_chars(message)
    return math.ceil(chars / 4) + images * IMAGE_TOKENS


def _tools_tokens(context: LlmContext) -> int:
    if not context.tools:
        return 0
    spec = [{"name": t.name, "description": t.description, "parameters": t.parameters} for t in context.tools]
    return chars4(json.dumps(spec, ensure_ascii=False, separators=(",", ":")))


def _last_usage(messages: list[Message]) -> tuple[int, float] | None:
    """(index, reported context tokens) of the last response whose usage still describes its prefix.

    A response older than a message inserted before it later (a compaction summary carries an older
    position but a newer timestamp) no longer measures the prefix; aborted and failed responses and
    ones without usage never do.
    """
    latest_prefix = -math.inf
    found: tuple[int, float] | None = None
    for index, message in enumerate(messages):
        timestamp = message.get("timestamp")
        stamp = timestamp if isinstance(timestamp, int | float) and not isinstance(timestamp, bool) else 0
        if message.get("role") == "assistant" and stamp >= latest_prefix:
            usage = valid_usage(message)  # the same test compaction uses for the context size
            if usage is not None:
                found = (index, calculate_context_tokens(usage))
        latest_prefix = max(latest_prefix, stamp)
    return found


def estimate_context(context: LlmContext) -> int:
    """Prompt size for the output cap: the last provider-reported usage plus estimates of what follows.

    Without such usage, everything is estimated: system prompt, tool schemas and every message. This
    is the figure Pi clamps with, so both cap ``max_tokens`` on the same turns even when the
    provider's count differs from chars/4.
    """
    anchor = _last_usage(context.messages)
    if anchor is not None:
        index, reported = anchor
        return math.ceil(reported) + sum(estimate_message(m) for m in context.messages[index + 1 :])
    total = chars4(context.system_prompt) + _tools_tokens(context)
    return total + sum(estimate_message(m) for m in context.messages)


def clamp_max_tokens(context_window: int, prompt_tokens: int, max_tokens: int) -> int:
    """Keep ``prompt + max_tokens + 4096 <= context window`` (at least 1; no clamp without a window)."""
    if context_window <= 0:
        return max(1, max_tokens)
    return min(max_tokens, max(1, context_window - prompt_tokens - CONTEXT_SAFETY_TOKENS))
