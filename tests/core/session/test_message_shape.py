"""The one-pass check of a message read from a file gives what the general check gives, for every shape."""

from __future__ import annotations

import copy
import itertools
from typing import Any

from piwork.core.session.message_shape import shared_usable_message, usable_message

USAGE = {
    "input": 1,
    "output": 2,
    "cacheRead": 0,
    "cacheWrite": 0,
    "totalTokens": 3,
    "cost": {"input": 0.5, "output": 0, "total": 0.5},
}
BLOCKS: list[Any] = [
    {"type": "text", "text": "hello"},
    {"type": "text", "text": 7},
    {"type": "text"},
    {"type": "thinking", "thinking": "hmm"},
    {"type": "thinking", "thinking": None},
    {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "a.py"}},
    {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"edits": [{"old": "a", "new": "b"}]}},
    {"type": "toolCall", "id": "c1", "name": 3, "arguments": {}},
    {"type": "toolCall", "id": None, "name": "read", "arguments": {}},
    {"type": "toolCall", "id": "c1", "name": "read", "arguments": []},
    {"type": "toolCall", "id": "c1", "name": "read"},
    {"type": "image", "data": "AAAA", "mimeType": "image/png"},
    {"type": "image", "data": "AAAA"},
    {"type": "custom_thing", "x": 1},
    {"type": 5},
    {"text": "no type"},
    None,
    "a string block",
    [],
]
USAGES: list[Any] = [
    USAGE,
    {**USAGE, "input": "1"},
    {**USAGE, "output": True},
    {**USAGE, "cost": {"total": "free"}},
    {**USAGE, "cost": {"total": 1, "totalFromProvider": True}},
    {**USAGE, "cost": {"total": 1, "other": False}},
    {**USAGE, "cost": []},
    {"input": 1.5},
    None,
    "lots",
]


def _deep(depth: int) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for _ in range(depth):
        value = {"a": value}
    return value


def _messages() -> list[Any]:
    out: list[Any] = [None, 42, "text", [], {}, {"role": 1, "content": "x"}, {"role": None}]
    for role in ("user", "assistant", "toolResult", "custom", "bashExecution"):
        for content in ("plain", 12, None, {"type": "text"}, [], *[[block] for block in BLOCKS]):
            out.append({"role": role, "content": content})
            out.append({"role": role, "content": content, "usage": USAGE})
        out.append({"role": role})
        for pair in itertools.combinations(BLOCKS[:12], 2):
            out.append({"role": role, "content": list(pair), "api": "anthropic-messages", "toolName": "read"})
        for usage in USAGES:
            out.append({"role": role, "content": [BLOCKS[0]], "usage": usage, "provider": "p", "model": 3})
    deep = {"type": "toolCall", "id": "c", "name": "n", "arguments": {"x": _deep(250)}}
    out.append({"role": "assistant", "content": [BLOCKS[0], deep]})
    return out


def test_the_one_pass_check_agrees_with_the_general_one() -> None:
    for message in _messages():
        expected = usable_message(copy.deepcopy(message))
        given = copy.deepcopy(message)
        got = shared_usable_message(given) if type(given) is dict else usable_message(given)
        assert got == expected, message
        if expected is not None and got is not None:
            assert (got is given) == (expected == message), message  # a well-formed message is not copied


def test_repeated_names_share_one_string() -> None:
    def parsed() -> dict[str, Any]:
        block = {"type": "".join(["tool", "Call"]), "id": "c", "name": "".join(["re", "ad"]), "arguments": {}}
        return {"role": "".join(["assis", "tant"]), "content": [block], "model": "".join(["m", "1"])}

    first, second = shared_usable_message(parsed()), shared_usable_message(parsed())
    assert first is not None and second is not None
    assert first["role"] is second["role"] and first["model"] is second["model"]
    assert first["content"][0]["type"] is second["content"][0]["type"]
    assert first["content"][0]["name"] is second["content"][0]["name"]
