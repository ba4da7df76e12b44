"""Hand-built agent-message transcripts for the context tests (Pi-shaped dicts, fixed timestamps)."""

from __future__ import annotations

from typing import Any

Message = dict[str, Any]
_clock = [1_700_000_000_000]


def _ts() -> int:
    _clock[0] += 1000
    return _clock[0]


def user(text: str) -> Message:
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": _ts()}


def call(call_id: str, name: str, **arguments: Any) -> dict[str, Any]:
    return {"type": "toolCall", "id": call_id, "name": name, "arguments": arguments}


def assistant(*calls: dict[str, Any], text: str = "", stop: str | None = None) -> Message:
    content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    content += list(calls)
    return {
        "role": "assistant",
        "content": content,
        "api": "anthropic-messages",
        "provider": "scripted",
        "model": "scripted-1",
        "usage": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0},
        "stopReason": stop or ("toolUse" if calls else "stop"),
        "timestamp": _ts(),
    }


def result(call_id: str, name: str, text: str, *, is_error: bool = False, images: int = 0) -> Message:
    content: list[dict[str, Any]] = [{"type": "text", "text": text}]
    content += [{"type": "image", "data": "AAAA", "mimeType": "image/png"}] * images
    return {
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": name,
        "content": content,
        "isError": is_error,
        "timestamp": _ts(),
    }


def custom(custom_type: str, text: str) -> Message:
    return {"role": "custom", "customType": custom_type, "content": text, "display": True, "timestamp": _ts()}


def lines(prefix: str, n: int, width: int = 60) -> str:
    """``n`` distinct lines of about ``width`` characters (≈ width/4 tokens each in chars/4)."""
    return "\n".join(f"{prefix} {i:05d} " + "x" * (width - len(prefix) - 8) for i in range(n))
