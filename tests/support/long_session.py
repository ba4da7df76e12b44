"""A long linear session file (thousands of messages: prompts, Markdown replies, tool calls and their
output), written fast with plain JSON lines, for tests that open a long conversation in the window; and
the tool-heavy transcript of the context benchmarks (``tool_transcript``: ~1,000 ``read``/``bash`` rounds,
~345K cl100k tokens for 2,100 messages), which the X-ray tests and benchmarks open."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

HEADER_ID = "0193e5b2-7c1d-7a4e-9f00-00000000a11c"


def _reply(i: int) -> str:
    """A reply as models write them: a few paragraphs of Markdown, a list and a short code block."""
    return (
        f"Looking at **module {i}**: it parses the notes, keeps them in a dictionary keyed by title and "
        "writes them back when the session ends. The parser accepts blank lines between entries and "
        "trims trailing spaces, which the tests rely on.\n\n"
        "- it parses\n- it stores `notes`\n- it reports what it could not read\n\n"
        f"```python\ndef load_{i}(path):\n    with open(path) as handle:\n"
        "        return parse(handle.read())\n```\n\nNext I will read the module that calls it."
    )


def long_conversation(count: int = 2_000) -> list[dict[str, Any]]:
    """About ``count`` messages: prompts, Markdown replies with tool calls, their output, a last reply."""
    messages: list[dict[str, Any]] = []
    i = 0
    while len(messages) < count:
        now = 1_767_600_000_000 + 10_000 * i
        if i % 10 == 0:
            messages.append(
                {"role": "user", "content": [{"type": "text", "text": f"Step {i}: go on"}], "timestamp": now}
            )
        body = "\n".join(
            f"{i:05d}:{n:02d} def function_{n}(value):  return value * {n} + {i}" for n in range(16)
        )
        name, args = (
            ("bash", {"command": f"cat src/module_{i % 40}.py"}) if i % 3 else ("read", {"path": f"m{i}.py"})
        )
        messages.append(
            {
                "role": "assistant",
                "content": [
                    {
                        "type": "text",
                        "text": _reply(i),
                    },
                    {"type": "toolCall", "id": f"call_{i}", "name": name, "arguments": args},
                ],
                "stopReason": "toolUse",
                "usage": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0},
                "timestamp": now + 1,
            }
        )
        messages.append(
            {
                "role": "toolResult",
                "toolCallId": f"call_{i}",
                "toolName": name,
                "content": [{"type": "text", "text": body}],
                "isError": False,
                "timestamp": now + 2,
            }
        )
        i += 1
    reply = "Done.\n\n```python\ndef last():\n    return 'the newest reply'\n```\n\nAll modules store notes."
    messages.append(
        {
            "role": "assistant",
            "content": [{"type": "text", "text": reply}],
            "stopReason": "stop",
            "usage": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0},
            "timestamp": 1_767_600_000_000 + 10_000 * i,
        }
    )
    return messages


def tool_round(i: int, now: int) -> list[dict[str, Any]]:
    """One ``read`` or ``bash`` call and its ~1,100-character result."""
    if i % 3 == 0:
        name, args = "bash", {"command": f"cat src/module_{i % 40}.py"}
    else:
        name, args = "read", {"path": f"src/module_{i % 90}.py"}
    body = "\n".join(f"{i:05d}:{n:02d} def function_{n}(value):  return value * {n} + {i}" for n in range(16))
    return [
        {
            "role": "assistant",
            "content": [
                {"type": "toolCall", "id": f"call_{i}", "name": name, "arguments": args},
            ],
            "stopReason": "toolUse",
            "usage": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0},
            "timestamp": now,
        },
        {
            "role": "toolResult",
            "toolCallId": f"call_{i}",
            "toolName": name,
            "content": [{"type": "text", "text": body}],
            "isError": False,
            "timestamp": now + 1,
        },
    ]


def tool_transcript(count: int) -> list[dict[str, Any]]:
    """About ``count`` messages (ending with a tool result): a prompt, then tool rounds, a user message
    every 50 rounds."""
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": [{"type": "text", "text": "Refactor the modules."}], "timestamp": 1}
    ]
    i = 0
    while len(messages) < count:
        if i and i % 50 == 0:
            messages.append(
                {"role": "user", "content": [{"type": "text", "text": f"Next {i}"}], "timestamp": 10 * i}
            )
        messages += tool_round(i, 10 * i + 2)
        i += 1
    return messages[:count] if messages[count - 1]["role"] == "toolResult" else messages[: count - 1]


def write_long_session(path: Path, cwd: Path, count: int = 2_000) -> list[dict[str, Any]]:
    """Write a session of about ``count`` messages (ending with a text reply) to ``path``; returns them."""
    messages = long_conversation(count)
    write_session_of(path, cwd, messages)
    return messages


def write_session_of(path: Path, cwd: Path, messages: list[dict[str, Any]]) -> None:
    """Write ``messages`` to ``path`` as one branch of a session started in ``cwd``."""
    header = {
        "type": "session",
        "version": 3,
        "id": HEADER_ID,
        "timestamp": "2026-01-05T09:00:00.000Z",
        "cwd": str(cwd),
    }
    lines = [json.dumps(header)]
    parent = None
    for n, message in enumerate(messages):
        entry_id = f"{n:08x}"
        stamp = f"2026-01-05T{9 + n // 3600:02d}:{n // 60 % 60:02d}:{n % 60:02d}.000Z"
        entry = {
            "type": "message",
            "id": entry_id,
            "parentId": parent,
            "timestamp": stamp,
            "message": message,
        }
        lines.append(json.dumps(entry, ensure_ascii=False))
        parent = entry_id
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
