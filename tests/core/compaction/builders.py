"""Small builders for session entries and messages (Pi's JSON shapes)."""

from __future__ import annotations

from typing import Any

_BASE_MS = 1_733_234_400_000


def iso(n: int) -> str:
    seconds = n % 60
    minutes = n // 60
    return f"2024-12-03T14:{minutes:02d}:{seconds:02d}.000Z"


def user(text: str, ts: int = 1) -> dict[str, Any]:
    return {"role": "user", "content": text, "timestamp": _BASE_MS + ts}


def assistant(
    text: str = "", *calls: dict[str, Any], ts: int = 2, usage: int = 0, stop: str | None = None
) -> dict[str, Any]:
    blocks: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    blocks.extend(calls)
    total = usage
    return {
        "role": "assistant",
        "content": blocks,
        "api": "anthropic-messages",
        "provider": "test",
        "model": "m1",
        "usage": {"input": total, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": total},
        "stopReason": stop or ("toolUse" if calls else "stop"),
        "timestamp": _BASE_MS + ts,
    }


def call(name: str, call_id: str = "c1", **arguments: Any) -> dict[str, Any]:
    return {"type": "toolCall", "id": call_id, "name": name, "arguments": arguments}


def result(text: str, call_id: str = "c1", name: str = "read", ts: int = 3) -> dict[str, Any]:
    return {
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": name,
        "content": [{"type": "text", "text": text}],
        "isError": False,
        "timestamp": _BASE_MS + ts,
    }


class Chain:
    """Builds a linear path of v3 entries with ids e1, e2, ..."""

    def __init__(self) -> None:
        self.entries: list[dict[str, Any]] = []

    def add(self, kind: str, **fields: Any) -> dict[str, Any]:
        n = len(self.entries) + 1
        entry = {
            "type": kind,
            "id": f"e{n}",
            "parentId": self.entries[-1]["id"] if self.entries else None,
            "timestamp": iso(n),
            **fields,
        }
        self.entries.append(entry)
        return entry

    def msg(self, message: dict[str, Any]) -> dict[str, Any]:
        return self.add("message", message=message)
