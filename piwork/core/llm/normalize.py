"""Request-side normalisation applied to every message list before it is serialised.

Missing content becomes empty; images become a placeholder for models that cannot read them; another
model's thinking is left out and its tool-call ids are rewritten for the target API; failed assistant
turns are dropped; a tool call left without a result gets a synthetic error result; unpaired
surrogates are removed.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from typing import Any

from piwork.core.llm.types import Message, Model
from piwork.core.llm.wire import now_ms

USER_IMAGE_PLACEHOLDER = "[image left out: this model cannot read images]"
TOOL_IMAGE_PLACEHOLDER = "[tool image left out: this model cannot read images]"
MISSING_RESULT_TEXT = "No result was recorded for this tool call."

_SURROGATES = re.compile("[\ud800-\udfff]")
_ANTHROPIC_ID_BAD = re.compile(r"[^A-Za-z0-9_-]")

IdRewriter = Callable[[str], str]


def anthropic_tool_id(tool_id: str) -> str:
    return _ANTHROPIC_ID_BAD.sub("_", tool_id)[:64]


def openai_tool_id(tool_id: str, strict_length: bool) -> str:
    """Chat Completions ids: ``call|item`` ids (from the Responses API) become one safe id of at most 40."""
    if "|" in tool_id:
        call, _, item = tool_id.partition("|")
        call, item = _ANTHROPIC_ID_BAD.sub("_", call), _ANTHROPIC_ID_BAD.sub("_", item)
        combined = f"{call}_{item}" if item else call
        if len(combined) <= 40:
            return combined
        digest = hashlib.sha256(tool_id.encode("utf-8", "surrogatepass")).hexdigest()[:8]
        return f"{call[: max(1, 40 - len(digest) - 1)]}_{digest}"
    return tool_id[:40] if strict_length else tool_id


def strip_surrogates(value: Any) -> Any:
    """Drop unpaired surrogate code points from every string in a JSON-like value.

    A whole request (a million messages) is checked in one serialisation at C speed; only a value that
    holds a surrogate, or cannot be serialised, is walked and copied string by string."""
    if isinstance(value, dict | list):
        return clean_body(value)[0]
    return _strip_each(value)


def clean_body(body: Any) -> tuple[Any, bytes | None]:
    """A request body as :func:`strip_surrogates` leaves it, with its JSON as it is sent (UTF-8) when that
    one serialisation could be kept: a body with nothing to strip (nearly all) is not serialised twice.
    None when it held a surrogate or cannot be serialised (the sender serialises it, failing as before)."""
    try:
        text = json.dumps(body, ensure_ascii=False, check_circular=False)
    except (TypeError, ValueError, RecursionError):
        return _strip_each(body), None
    if _has_surrogate(text):
        return _strip_each(body), None
    return body, text.encode("utf-8")


def _strip_each(value: Any) -> Any:
    if isinstance(value, str):
        return _SURROGATES.sub("", value) if _has_surrogate(value) else value
    if isinstance(value, dict):
        return {_strip_each(k): _strip_each(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_strip_each(v) for v in value]
    return value


def _has_surrogate(text: str) -> bool:
    if text.isascii():
        return False
    return _SURROGATES.search(text) is not None


def _downgrade_images(content: list[Any], placeholder: str) -> list[Any]:
    result: list[Any] = []
    previous_placeholder = False
    for block in content:
        if isinstance(block, dict) and block.get("type") == "image":
            if not previous_placeholder:
                result.append({"type": "text", "text": placeholder})
            previous_placeholder = True
            continue
        result.append(block)
        previous_placeholder = isinstance(block, dict) and block.get("text") == placeholder
    return result


def _is_same_model(message: Message, model: Model) -> bool:
    return (
        message.get("provider") == model.provider
        and message.get("api") == model.api
        and message.get("model") == model.id
    )


def _kept_thinking(block: dict[str, Any]) -> bool:
    return bool(
        block.get("redacted") or block.get("thinkingSignature") or (block.get("thinking") or "").strip()
    )


def _assistant_content(
    message: Message, model: Model, rewrite: IdRewriter | None, ids: dict[str, str]
) -> list[Any]:
    """The reply's blocks for ``model``; its own list when nothing changes (the same model's reply with
    no empty thinking: nearly every reply of a long session)."""
    same = _is_same_model(message, model)
    blocks = message.get("content") or []
    if same and type(blocks) is list:
        for block in blocks:
            if isinstance(block, dict) and block.get("type") == "thinking" and not _kept_thinking(block):
                break
        else:
            return blocks
    content: list[Any] = []
    for block in blocks:
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "thinking":
            # Another model's thinking is left out: its signature is valid only for the model that
            # wrote it, and replayed as text the new model would take it for part of the visible reply.
            if same and _kept_thinking(block):
                content.append(block)
        elif kind == "text":
            content.append(block if same else {"type": "text", "text": block.get("text", "")})
        elif kind == "toolCall":
            call = block
            if not same:
                call = {k: v for k, v in block.items() if k != "thoughtSignature"}
                if rewrite is not None:
                    new_id = rewrite(str(block.get("id", "")))
                    if new_id != block.get("id"):
                        ids[str(block.get("id", ""))] = new_id
                        call["id"] = new_id
            content.append(call)
        else:
            content.append(block)
    return content


def normalize_messages(
    messages: list[Message], model: Model, rewrite_id: IdRewriter | None = None
) -> list[Message]:
    """Return the message list a provider should serialise (inputs are never mutated; a message that
    needs no change is passed on as it is, not copied)."""
    ids: dict[str, str] = {}
    transformed: list[Message] = []
    images = model.supports_images
    for original in messages:
        msg = original
        content = original.get("content")
        if content is None:
            msg = dict(original)
            msg["content"] = content = []
        role = msg.get("role")
        if not images and isinstance(content, list) and role in ("user", "toolResult"):
            placeholder = USER_IMAGE_PLACEHOLDER if role == "user" else TOOL_IMAGE_PLACEHOLDER
            if msg is original:
                msg = dict(original)
            msg["content"] = _downgrade_images(content, placeholder)
        if role == "toolResult":
            mapped = ids.get(msg.get("toolCallId", ""))
            if mapped:
                if msg is original:
                    msg = dict(original)
                msg["toolCallId"] = mapped
        elif role == "assistant":
            blocks = _assistant_content(msg, model, rewrite_id, ids)
            if blocks is not content:
                if msg is original:
                    msg = dict(original)
                msg["content"] = blocks
        transformed.append(msg)
    return _pair_tool_results(transformed)


def _pair_tool_results(messages: list[Message]) -> list[Message]:
    """Drop failed assistant turns and give every unanswered tool call a synthetic error result."""
    result: list[Message] = []
    pending: list[dict[str, Any]] = []
    answered: set[str] = set()

    def flush() -> None:
        nonlocal pending, answered
        for call in pending:
            if call.get("id") not in answered:
                result.append(
                    {
                        "role": "toolResult",
                        "toolCallId": call.get("id"),
                        "toolName": call.get("name"),
                        "content": [{"type": "text", "text": MISSING_RESULT_TEXT}],
                        "isError": True,
                        "timestamp": now_ms(),
                    }
                )
        pending, answered = [], set()

    for msg in messages:
        role = msg.get("role")
        if role == "assistant":
            flush()
            if msg.get("stopReason") in ("error", "aborted"):
                continue
            calls = [b for b in msg["content"] if isinstance(b, dict) and b.get("type") == "toolCall"]
            if calls:
                pending, answered = calls, set()
            result.append(msg)
        elif role == "toolResult":
            answered.add(msg.get("toolCallId", ""))
            result.append(msg)
        elif role == "user":
            flush()
            result.append(msg)
        else:
            result.append(msg)
    flush()
    return result
