"""Cheap prompt-size estimates (chars/4 in UTF-16 units, 1200 per image) used to clamp ``max_tokens``."""

from __future__ import annotations

import json
import math
from typing import Any

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
            chars += utf16_len(json.dumps(block.get("arguments") or {}, ensure_ascii=False))
        elif kind == "image":
            images += 1
    return chars, images


def estimate_message(message: Message) -> int:
    chars, images = message_chars(message)
    return math.ceil(chars / 4) + images * IMAGE_TOKENS


def estimate_context(context: LlmContext) -> int:
    total = chars4(context.system_prompt)
    if context.tools:
        spec = [
            {"name": t.name, "description": t.description, "parameters": t.parameters} for t in context.tools
        ]
        total += chars4(json.dumps(spec, ensure_ascii=False))
    return total + sum(estimate_message(m) for m in context.messages)


def clamp_max_tokens(context_window: int, prompt_tokens: int, max_tokens: int) -> int:
    """Keep ``prompt + max_tokens + 4096 <= context window`` (at least 1; no clamp without a window)."""
    if context_window <= 0:
        return max(1, max_tokens)
    return min(max_tokens, max(1, context_window - prompt_tokens - CONTEXT_SAFETY_TOKENS))
