"""Token estimates (chars / 4) and the context size that decides when to compact.

"Chars" are UTF-16 code units, as in Pi (an emoji outside the BMP counts 2). These numbers are a
deliberately cheap heuristic: they only drive the compaction threshold and the cut point, never
billing or the governor's occupancy figure.

Message dicts are Pi's JSON objects. Structurally broken messages (``content`` missing or null,
a tool call without ``arguments``) raise ``TypeError``/``KeyError``, like the reference fails on
them; callers that read user files validate messages first.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from piwork.core.jscompat import js_json_length
from piwork.core.session.system_messages import current_system_message
from piwork.core.usage import calculate_context_tokens, valid_usage

if TYPE_CHECKING:  # only named in annotations: estimating tokens does not load the settings schema
    from piwork.core.compaction.settings import CompactionSettings

CHARS_PER_TOKEN = 4
IMAGE_CHARS = 4800  # an image block counts as 1200 tokens

_MISSING: Any = object()


def utf16_units(text: str) -> int:
    """JavaScript ``text.length``; encodes in C, which matters on long non-ASCII tool output."""
    return len(text) if text.isascii() else len(text.encode("utf-16-le", "surrogatepass")) // 2


def _length(value: Any, what: str) -> int:
    """JavaScript ``value.length`` for the values a message may hold."""
    if isinstance(value, str):
        return utf16_units(value)
    if isinstance(value, list):
        return len(value)
    raise TypeError(f"{what} is not text")


def _blocks(content: Any, what: str) -> list[Any]:
    if not isinstance(content, list):
        raise TypeError(f"{what} is not a list of content blocks")
    return content


def _block_type(block: Any) -> Any:
    if block is None:
        raise TypeError("content block is null")
    return block.get("type") if isinstance(block, dict) else None


def _text_and_image_chars(content: Any) -> int:
    """User, tool-result and custom content: a string, or text and image blocks."""
    if isinstance(content, str):
        return utf16_units(content)
    chars = 0
    for block in _blocks(content, "message content"):
        kind = block.get("type") if type(block) is dict else _block_type(block)
        if kind == "text":
            text = block.get("text")
            if text:
                # the usual ASCII text block counted inline (this runs for every message of a long context)
                chars += len(text) if type(text) is str and text.isascii() else _length(text, "text block")
        elif kind == "image":
            chars += IMAGE_CHARS
    return chars


def _assistant_chars(content: Any) -> int:
    if isinstance(content, str):
        return 0  # iterating a string yields no typed blocks
    chars = 0
    for block in _blocks(content, "assistant content"):
        kind = block.get("type") if type(block) is dict else _block_type(block)
        if kind == "text":
            text = block.get("text", _MISSING)
            chars += len(text) if type(text) is str and text.isascii() else _length(text, "text block")
        elif kind == "thinking":
            chars += _length(block.get("thinking", _MISSING), "thinking block")
        elif kind == "toolCall":
            name = block.get("name", _MISSING)
            name_len = len(name) if type(name) is str and name.isascii() else _length(name, "tool call name")
            if "arguments" not in block:
                raise TypeError("tool call has no arguments")
            chars += name_len + js_json_length(block["arguments"])
    return chars


def _system_chars(message: Mapping[str, Any]) -> int:
    """A system message (prompt state): its content, its section texts and its added tools."""
    chars = _text_and_image_chars(message.get("content", _MISSING))
    sections = message.get("sections")
    if isinstance(sections, Mapping):
        for text in sections.values():
            if text:
                chars += _length(text, "system section")
    tools = message.get("toolsAdded")
    if tools:
        chars += js_json_length(tools)
    return chars


def _ceil_tokens(chars: int) -> int:
    return math.ceil(chars / CHARS_PER_TOKEN)


def estimate_tokens(message: Mapping[str, Any]) -> int:
    """Estimated tokens of one AgentMessage (chars / 4, rounded up); unknown roles count 0."""
    role = message.get("role")
    if role == "system":
        return _ceil_tokens(_system_chars(message))
    if role in ("user", "custom", "toolResult"):
        return _ceil_tokens(_text_and_image_chars(message.get("content", _MISSING)))
    if role == "assistant":
        return _ceil_tokens(_assistant_chars(message.get("content", _MISSING)))
    if role == "bashExecution":
        command = _length(message.get("command", _MISSING), "bash command")
        return _ceil_tokens(command + _length(message.get("output", _MISSING), "bash output"))
    if role in ("branchSummary", "compactionSummary"):
        return _ceil_tokens(_length(message.get("summary", _MISSING), "summary"))
    return 0


def estimate_messages_tokens(messages: Sequence[Mapping[str, Any]]) -> int:
    """Sum of ``estimate_tokens`` (the "estimated tokens after" figure of a compaction)."""
    return sum(estimate_tokens(m) for m in messages)


@dataclass(frozen=True)
class ContextEstimate:
    """``tokens`` = provider-reported usage of the last valid response + estimates after it."""

    tokens: float
    usage_tokens: float
    trailing_tokens: int
    last_usage_index: int | None

    def to_json(self) -> dict[str, Any]:
        return {
            "tokens": self.tokens,
            "usageTokens": self.usage_tokens,
            "trailingTokens": self.trailing_tokens,
            "lastUsageIndex": self.last_usage_index,
        }


def estimate_context_tokens(messages: Sequence[Mapping[str, Any]]) -> ContextEstimate:
    """Context size of a message list, preferring the last valid provider usage."""
    for index in range(len(messages) - 1, -1, -1):
        usage = valid_usage(messages[index])
        if usage is not None:
            usage_tokens = calculate_context_tokens(usage)
            trailing = estimate_messages_tokens(messages[index + 1 :])
            return ContextEstimate(usage_tokens + trailing, usage_tokens, trailing, index)
    estimated = estimate_messages_tokens(messages)
    return ContextEstimate(estimated, 0, estimated, None)


def estimate_projected_context_tokens(
    entry_messages: Sequence[tuple[Any, Sequence[Mapping[str, Any]]]],
    path_ids_and_types: Sequence[tuple[Any, Any]],
) -> ContextEstimate:
    """Context size of a projection, trusting provider usage only when nothing changed it since.

    ``entry_messages`` are the projected context entries as (entry id, messages); ``path_ids_and_types``
    the branch's entries as (id, type). The last valid usage counts only when its entry comes after
    the branch's latest ``context_edit`` or ``compaction``: an edit or a compaction changes what the
    next request holds, so older usage no longer measures it. Otherwise every message is estimated,
    the recorded system prompt once (replayed), the other system messages not again.
    """
    messages = [m for _, listed in entry_messages for m in listed]
    estimate = estimate_context_tokens(messages)
    if estimate.last_usage_index is not None:
        seen = 0
        usage_entry: Any = None
        for entry_id, listed in entry_messages:
            if estimate.last_usage_index < seen + len(listed):
                usage_entry = entry_id
                break
            seen += len(listed)
        usage_at = next(
            (
                i
                for i, (entry_id, _) in enumerate(path_ids_and_types)
                if usage_entry is not None and entry_id == usage_entry
            ),
            -1,
        )
        invalidated_at = next(
            (
                i
                for i in range(len(path_ids_and_types) - 1, -1, -1)
                if path_ids_and_types[i][1] in ("context_edit", "compaction")
            ),
            -1,
        )
        if usage_at > invalidated_at:
            return estimate
    system = current_system_message(messages)
    tokens = estimate_tokens(system) if system is not None else 0
    tokens += sum(estimate_tokens(m) for m in messages if m.get("role") != "system")
    return ContextEstimate(tokens, 0, tokens, None)


def should_compact(context_tokens: float, context_window: float, settings: CompactionSettings) -> bool:
    """Automatic compaction is due when the context exceeds ``window - reserveTokens`` (strictly)."""
    if not settings.enabled:
        return False
    return context_tokens > context_window - settings.reserve_tokens
