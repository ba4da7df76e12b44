"""Small builders for session files used by the session tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from piwork.core.session.format import serialize

HEADER = {
    "type": "session",
    "version": 3,
    "id": "0193e5b2-7c1d-7a4e-9f00-1234567890ab",
    "timestamp": "2024-12-03T14:00:00.000Z",
    "cwd": "/home/ana/proj",
}


def stamp(second: int) -> str:
    return f"2024-12-03T14:{second // 60:02d}:{second % 60:02d}.000Z"


def user(entry_id: str, parent: str | None, text: str, second: int = 1) -> dict[str, Any]:
    return {
        "type": "message",
        "id": entry_id,
        "parentId": parent,
        "timestamp": stamp(second),
        "message": {"role": "user", "content": text, "timestamp": 1733234400000 + second * 1000},
    }


def assistant(entry_id: str, parent: str | None, text: str, second: int = 2, **extra: Any) -> dict[str, Any]:
    message = {
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
        "api": "anthropic-messages",
        "provider": "anthropic",
        "model": "claude-sonnet-4-5",
        "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2},
        "stopReason": "stop",
        "timestamp": 1733234400000 + second * 1000,
    }
    message.update(extra)
    return {
        "type": "message",
        "id": entry_id,
        "parentId": parent,
        "timestamp": stamp(second),
        "message": message,
    }


def write_session(path: Path, entries: list[Any], header: dict[str, Any] | None = None) -> Path:
    path.write_text("".join(serialize(v) for v in [header or HEADER, *entries]), encoding="utf-8")
    return path


def conversation(turns: int = 3) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    parent = None
    for n in range(turns):
        u, a = f"u{n}", f"a{n}"
        out.append(user(u, parent, f"question {n}", 2 * n + 1))
        out.append(assistant(a, u, f"answer {n}", 2 * n + 2))
        parent = a
    return out
