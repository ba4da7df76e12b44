"""A branched session file with every kind of entry an export shows, for export and import tests.

Shape: u1 → a1 (thinking, bash call) → r1 (long output) → a1b → label(u1) →
  abandoned: u2 → a2 ("zebra" branch)
  active:    u3 → a3 (edit call) → r3 → c1 (compaction) → u4 → a4 → bs (branch summary) → u5 → a5
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.core.session.helpers import HEADER, assistant, stamp, user, write_session

LONG_OUTPUT = "\n".join(f"line {n}: some build output" for n in range(60))
ACTIVE_TEXT = "The linker needs -lm on the active branch."
ABANDONED_TEXT = "The zebra flag lives on the abandoned branch."


def _call(
    entry_id: str, parent: str, name: str, arguments: dict[str, Any], second: int, text: str = ""
) -> dict[str, Any]:
    entry = assistant(entry_id, parent, text, second, stopReason="toolUse")
    content: list[dict[str, Any]] = [{"type": "thinking", "thinking": "Let me check the build first."}]
    if text:
        content.append({"type": "text", "text": text})
    content.append({"type": "toolCall", "id": "call_" + entry_id, "name": name, "arguments": arguments})
    entry["message"]["content"] = content
    return entry


def _result(entry_id: str, call: str, name: str, output: str, second: int) -> dict[str, Any]:
    return {
        "type": "message",
        "id": entry_id,
        "parentId": call,
        "timestamp": stamp(second),
        "message": {
            "role": "toolResult",
            "toolCallId": "call_" + call,
            "toolName": name,
            "content": [{"type": "text", "text": output}],
            "isError": False,
            "timestamp": 1733234400000 + second * 1000,
        },
    }


def rich_entries() -> list[dict[str, Any]]:
    return [
        user("u1", None, "Why does the build fail? See https://example.com/ci and </script><b>x</b>", 1),
        _call("a1", "u1", "bash", {"command": "make 2>&1 | tail -60"}, 2),
        _result("r1", "a1", "bash", LONG_OUTPUT, 3),
        assistant(
            "a1b",
            "r1",
            "It fails at **link** time:\n\n```sh\ncc -o app main.o\n```\n\n```python\nreturn 'ok'  # linked\n```",
            4,
        ),
        {
            "type": "label",
            "id": "l1",
            "parentId": "a1b",
            "timestamp": stamp(5),
            "targetId": "u1",
            "label": "start here",
        },
        user("u2", "l1", "Try the zebra approach", 6),
        assistant("a2", "u2", ABANDONED_TEXT, 7),
        user("u3", "l1", "Forget that; check the linker", 8),
        _call("a3", "u3", "edit", {"path": "Makefile", "oldText": "LDLIBS =", "newText": "LDLIBS = -lm"}, 9),
        _result("r3", "a3", "edit", "Successfully replaced text in Makefile.", 10),
        {
            "type": "compaction",
            "id": "c1",
            "parentId": "r3",
            "timestamp": stamp(11),
            "summary": "We found the link error and edited the Makefile.",
            "firstKeptEntryId": "u3",
            "tokensBefore": 4321,
        },
        user("u4", "c1", "Does it build now?", 12),
        assistant("a4", "u4", "Yes.", 13),
        {
            "type": "branch_summary",
            "id": "bs",
            "parentId": "a4",
            "timestamp": stamp(14),
            "fromId": "a2",
            "summary": "The zebra idea went nowhere.",
        },
        user("u5", "bs", "Great, summarise.", 15),
        assistant("a5", "u5", ACTIVE_TEXT, 16),
    ]


def write_rich_session(path: Path, cwd: str = HEADER["cwd"]) -> Path:
    return write_session(path, rich_entries(), {**HEADER, "cwd": cwd})
