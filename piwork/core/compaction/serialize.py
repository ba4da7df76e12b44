"""Flatten LLM messages into the plain text a summarizer reads.

Serializing (instead of sending the messages as a conversation) keeps the summarizer from
continuing the conversation. Tool results are capped at 2,000 UTF-16 units: the summary needs
what happened, not whole file contents.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from piwork.core.compaction.tokens import utf16_units
from piwork.core.jscompat import js_json_stringify, js_number_str, utf16_slice, utf16_slice_head

TOOL_RESULT_MAX_CHARS = 2000
_UNDEFINED_TEXT = "undefined"  # how a template literal prints a missing field


def _join_item(value: Any) -> str:
    """How ``Array.prototype.join`` prints one element."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return js_number_str(value)
    return js_json_stringify(value)


def _text_of(content: Any, separator: str) -> str:
    """Text blocks of ``content`` joined by ``separator``; string content as is."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        raise TypeError("message content is not a list of content blocks")
    texts = []
    for block in content:
        if block is None:
            raise TypeError("content block is null")
        if isinstance(block, Mapping) and block.get("type") == "text":
            texts.append(_join_item(block.get("text")))
    return separator.join(texts)


def cap_tool_result(text: str, max_chars: int = TOOL_RESULT_MAX_CHARS) -> str:
    length = utf16_units(text)
    if length <= max_chars:
        return text
    # the count is of units beyond the cap, even when a pair at the cap is left out whole
    return f"{utf16_slice_head(text, max_chars)}\n\n[... {length - max_chars} more characters truncated]"


def _argument_pairs(args: Any) -> list[tuple[str, Any]]:
    """``Object.entries(args)`` for the values a tool call's arguments may hold."""
    if args is None:
        raise TypeError("tool call has no arguments")
    if isinstance(args, Mapping):
        return [(str(k), v) for k, v in args.items()]
    if isinstance(args, list):
        return [(str(i), v) for i, v in enumerate(args)]
    if isinstance(args, str):
        return [(str(i), utf16_slice(args, i, i + 1)) for i in range(utf16_units(args))]
    return []


def _tool_call_text(block: Mapping[str, Any]) -> str:
    pairs = _argument_pairs(block.get("arguments"))
    args_text = ", ".join(f"{key}={js_json_stringify(value)}" for key, value in pairs)
    name = block.get("name", _UNDEFINED_TEXT)
    return f"{'null' if name is None else _join_item(name)}({args_text})"


def _assistant_parts(content: Any) -> list[str]:
    if not isinstance(content, list):
        raise TypeError("assistant content is not a list of content blocks")
    calls: list[str] = []
    has_text = False
    for block in content:
        if block is None:
            raise TypeError("content block is null")
        kind = block.get("type") if isinstance(block, Mapping) else None
        # thinking is left out: replayed reasoning is often not what the model saw, and it can
        # make the summary request larger than the context it summarizes
        if kind == "toolCall":
            calls.append(_tool_call_text(block))
        elif kind == "text":
            has_text = True
    parts = []
    if has_text:
        parts.append("[Assistant]: " + _text_of(content, "\n"))
    if calls:
        parts.append("[Assistant tool calls]: " + "; ".join(calls))
    return parts


def serialize_conversation(llm_messages: Iterable[Mapping[str, Any]]) -> str:
    """Text of LLM messages (user/assistant/toolResult; run ``convert_to_llm`` first)."""
    parts: list[str] = []
    for message in llm_messages:
        role = message.get("role")
        if role == "user":
            text = _text_of(message.get("content"), "")
            if text:
                parts.append(f"[User]: {text}")
        elif role == "assistant":
            parts.extend(_assistant_parts(message.get("content")))
        elif role == "toolResult":
            text = _text_of(message.get("content"), "")
            if text:
                parts.append(f"[Tool result]: {cap_tool_result(text)}")
    return "\n\n".join(parts)
