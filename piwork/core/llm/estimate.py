"""Cheap prompt-size estimates used to clamp ``max_tokens``, as Pi 1.6 makes them: 3.5 UTF-16 units a
token, an image counted as 4800 characters."""

from __future__ import annotations

import json
import math
from itertools import accumulate
from typing import Any

from piwork.core.jscompat import utf16_len
from piwork.core.llm.types import LlmContext, Message
from piwork.core.usage import calculate_context_tokens, valid_usage

IMAGE_TOKENS = 1200  # what an image counts where tokens are counted exactly (tokens.py)
CHARS_PER_TOKEN = 3.5
IMAGE_CHARS = 4800
CONTEXT_SAFETY_TOKENS = 4096
# Some routers count the input with their own tokenizer, up to 12% above the provider's count: a 15%
# margin is kept while it leaves this much output, else only the fixed margin (and at most this output).
CONTEXT_SAFETY_RATIO = 0.15
MIN_OUTPUT_WITH_RATIO_MARGIN = 32768


def text_tokens(text: str) -> int:
    return math.ceil(utf16_len(text) / CHARS_PER_TOKEN)


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
    return math.ceil((chars + images * IMAGE_CHARS) / CHARS_PER_TOKEN)


def _tools_tokens(context: LlmContext) -> int:
    if not context.tools:
        return 0
    spec = [{"name": t.name, "description": t.description, "parameters": t.parameters} for t in context.tools]
    return text_tokens(json.dumps(spec, ensure_ascii=False, separators=(",", ":")))


def _last_usage(messages: list[Message]) -> tuple[int, float] | None:
    """(index, reported context tokens) of the last response whose usage still describes its prefix.

    A response older than a message inserted before it later (a compaction summary carries an older
    position but a newer timestamp) no longer measures the prefix; aborted and failed responses and
    ones without usage never do.
    """
    stamps = [_stamp(message.get("timestamp")) for message in messages]
    # the latest time stamp before each message; the search runs from the end, so usage is looked at
    # only for the last replies, not every reply of a long session
    before = list(accumulate(stamps, max, initial=-math.inf))
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if message.get("role") == "assistant" and stamps[index] >= before[index]:
            usage = valid_usage(message)  # the same test compaction uses for the context size
            if usage is not None:
                return index, calculate_context_tokens(usage)
    return None


def _stamp(timestamp: Any) -> float:
    return timestamp if isinstance(timestamp, int | float) and not isinstance(timestamp, bool) else 0


def estimate_context(context: LlmContext) -> int:
    """Prompt size for the output cap: the last provider-reported usage plus estimates of what follows.

    Without such usage, everything is estimated: system prompt, tool schemas and every message. This
    is the figure Pi clamps with, so both cap ``max_tokens`` on the same turns even when the
    provider's count differs from the estimate.
    """
    anchor = _last_usage(context.messages)
    if anchor is not None:
        index, reported = anchor
        return math.ceil(reported) + sum(estimate_message(m) for m in context.messages[index + 1 :])
    total = text_tokens(context.system_prompt) + _tools_tokens(context)
    return total + sum(estimate_message(m) for m in context.messages)


def clamp_max_tokens(context_window: int, prompt_tokens: int, max_tokens: int) -> int:
    """Fit ``max_tokens`` into the window, leaving room for the prompt being counted higher than
    estimated (at least 1; no clamp without a window)."""
    if context_window <= 0:
        return max(1, max_tokens)
    margin = max(CONTEXT_SAFETY_TOKENS, math.ceil(prompt_tokens * CONTEXT_SAFETY_RATIO))
    room = context_window - prompt_tokens - margin
    if room < MIN_OUTPUT_WITH_RATIO_MARGIN:
        room = min(MIN_OUTPUT_WITH_RATIO_MARGIN, context_window - prompt_tokens - CONTEXT_SAFETY_TOKENS)
    return min(max_tokens, max(1, room))
