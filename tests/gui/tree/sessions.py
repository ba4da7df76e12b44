"""Builders of session entry lists for the tree tests (plain dicts, as in a session file)."""

from __future__ import annotations

from typing import Any


class SessionBuilder:
    def __init__(self) -> None:
        self.entries: list[dict[str, Any]] = []
        self._n = 0
        self._leaf: str | None = None

    def _next(self, kind: str, parent: str | bool | None = True, **fields: Any) -> str:
        self._n += 1
        entry_id = f"e{self._n:05d}"
        parent_id = self._leaf if parent is True else parent
        seconds = self._n
        stamp = f"2025-01-01T{seconds // 3600 % 24:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}.000Z"
        self.entries.append(
            {"type": kind, "id": entry_id, "parentId": parent_id, "timestamp": stamp, **fields}
        )
        self._leaf = entry_id
        return entry_id

    def at(self, entry_id: str | None) -> SessionBuilder:
        self._leaf = entry_id
        return self

    def user(self, text: str, parent: str | bool | None = True) -> str:
        return self._next("message", parent, message={"role": "user", "content": text, "timestamp": self._n})

    def assistant(self, text: str = "", tool_call: str | None = None, stop: str = "stop") -> str:
        content: list[dict[str, Any]] = []
        if text:
            content.append({"type": "text", "text": text})
        if tool_call:
            content.append({"type": "toolCall", "id": f"call-{tool_call}", "name": "bash", "arguments": {}})
            stop = "toolUse"
        message = {"role": "assistant", "content": content, "provider": "p", "model": "m", "stopReason": stop}
        return self._next("message", message=message)

    def tool_result(self, call: str, text: str = "ok") -> str:
        message = {"role": "toolResult", "toolCallId": f"call-{call}", "toolName": "bash",
                   "content": [{"type": "text", "text": text}], "isError": False}  # fmt: skip
        return self._next("message", message=message)

    def label(self, target: str, label: str) -> str:
        return self._next("label", targetId=target, label=label)

    def model_change(self) -> str:
        return self._next("model_change", provider="p", modelId="m2")

    def compaction(self, summary: str, first_kept: str) -> str:
        return self._next("compaction", summary=summary, firstKeptEntryId=first_kept, tokensBefore=5000)

    def branch_summary(self, from_id: str, summary: str) -> str:
        return self._next("branch_summary", fromId=from_id, summary=summary)


def linear_session(turns: int) -> list[dict[str, Any]]:
    builder = SessionBuilder()
    for i in range(turns):
        builder.user(f"question {i}")
        builder.assistant(tool_call=str(i))
        builder.tool_result(str(i), f"result {i}")
        builder.assistant(f"answer {i}")
    return builder.entries
