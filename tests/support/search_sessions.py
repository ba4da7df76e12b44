"""A session file with an abandoned branch, for the session search tests of the engine and the window.

u1 → a1 → (abandoned: u2 → t2 (a bash call) → r2 (its output) → a2)
        → (active:    u3 → a3)
"""

from __future__ import annotations

from typing import Any

from tests.core.session.helpers import assistant, stamp, user


def tool_call(
    entry_id: str, parent: str, command: str, second: int, thinking: str | None = None
) -> dict[str, Any]:
    """An assistant entry that runs ``command`` with bash (after a thinking block, when given)."""
    entry = assistant(entry_id, parent, "", second, stopReason="toolUse")
    call = {"type": "toolCall", "id": "call_" + entry_id, "name": "bash", "arguments": {"command": command}}
    thought = [{"type": "thinking", "thinking": thinking}] if thinking is not None else []
    entry["message"]["content"] = [*thought, call]
    return entry


def tool_output(entry_id: str, parent: str, output: str, second: int) -> dict[str, Any]:
    """The bash result answering the call ``parent``."""
    return {
        "type": "message",
        "id": entry_id,
        "parentId": parent,
        "timestamp": stamp(second),
        "message": {
            "role": "toolResult",
            "toolCallId": "call_" + parent,
            "toolName": "bash",
            "content": [{"type": "text", "text": output}],
            "isError": False,
            "timestamp": 1733234400000 + second * 1000,
        },
    }


def two_branches(
    question: str,
    tried: str,
    command: str,
    output: str,
    finding: str,
    redirect: str,
    thinking: str | None = None,
) -> list[dict[str, Any]]:
    """The entries u1 … a3: ``tried`` starts the abandoned branch, ``redirect`` the active one."""
    return [
        user("u1", None, question, 1),
        assistant("a1", "u1", "Let me look at the Makefile.", 2),
        user("u2", "a1", tried, 3),
        tool_call("t2", "u2", command, 4, thinking),
        tool_output("r2", "t2", output, 5),
        assistant("a2", "r2", finding, 6),
        user("u3", "a1", redirect, 7),
        assistant("a3", "u3", "The linker needs -lm.", 8),
    ]
