"""Making a stored message safe to send: the shapes the providers, token counts and views rely on.

Session lines are JSON written by any program, so a ``message`` may hold a number where a list of
blocks belongs, ``null`` blocks, a tool call without a name. Pi fails on those. piwork keeps what is
usable: unusable blocks are left out, content of the wrong type becomes empty, a usage record that
is not numbers is dropped, tool arguments nested deeper than any real call are left out. A well-formed message is returned as is (no copy).
"""

from __future__ import annotations

from sys import intern
from typing import Any

from piwork.core.jscompat import MAX_JSON_DEPTH, json_depth_exceeds

_NUMBER = (int, float)
_USAGE_NUMBERS = ("input", "output", "cacheRead", "cacheWrite", "totalTokens")


def _usable_block(block: Any) -> bool:
    if type(block) is not dict or type(block.get("type")) is not str:
        return False
    kind = block["type"]
    if kind == "text":
        return type(block.get("text")) is str
    if kind == "thinking":
        return type(block.get("thinking")) is str
    if kind == "toolCall":
        return (
            type(block.get("id")) is str
            and type(block.get("name")) is str
            and type(block.get("arguments")) is dict
            and not json_depth_exceeds(block["arguments"], MAX_JSON_DEPTH)
        )
    if kind == "image":
        return type(block.get("data")) is str and type(block.get("mimeType")) is str
    return True


def _usable_usage(usage: Any) -> bool:
    if type(usage) is not dict:
        return False
    for key in _USAGE_NUMBERS:
        value = usage.get(key, 0)
        kind = type(value)
        if (
            kind is not int
            and kind is not float
            and (isinstance(value, bool) or not isinstance(value, _NUMBER))
        ):
            return False
    cost = usage.get("cost", {})
    if type(cost) is not dict:
        return False
    # ``totalFromProvider`` (Pi 1.6) says whether ``total`` came from the provider's own bill
    for k, v in cost.items():  # a loop, not all(): this runs for every assistant message of a context
        kind = type(v)
        if (
            kind is not int
            and kind is not float
            and not (
                (isinstance(v, _NUMBER) and not isinstance(v, bool))
                or (k == "totalFromProvider" and type(v) is bool)
            )
        ):
            return False
    return True


def usable_message(message: Any) -> dict[str, Any] | None:
    """``message`` when it is well formed, a repaired copy when parts of it are not, ``None`` when it
    is not a message at all (not an object, or no string ``role``)."""
    if type(message) is not dict or type(message.get("role")) is not str:
        return None
    content = message.get("content")
    fixed: dict[str, Any] | None = None
    if type(content) is list:
        for block in content:
            if not _usable_block(block):
                fixed = {**message, "content": [block for block in content if _usable_block(block)]}
                break
    elif type(content) is str:
        if message["role"] == "assistant":  # assistant content is always a list of blocks
            fixed = {**message, "content": [{"type": "text", "text": content}]}
    elif "content" in message or message["role"] in ("user", "assistant", "toolResult"):
        fixed = {**message, "content": []}
    if "usage" in message and not _usable_usage(message["usage"]):
        fixed = fixed if fixed is not None else dict(message)
        del fixed["usage"]
    return message if fixed is None else fixed


# Short values repeated in every message of a long session (the role is done apart).
_NAME_KEYS = ("api", "provider", "model", "stopReason", "toolName")
_ASSISTANT_NAMES = ("api", "provider", "model", "stopReason")


def shared_usable_message(message: dict[str, Any]) -> dict[str, Any] | None:
    """``usable_message`` of a message parsed from a file, whose repeated short values (role, model,
    block types, tool names ...) are first made to share one string object each (a long context keeps
    many messages). The usual message, well formed, is checked here in one pass over its blocks."""
    role = message.get("role")
    if type(role) is not str:
        return None
    message["role"] = role = intern(role)
    get = message.get
    for key in _ASSISTANT_NAMES if role == "assistant" else _NAME_KEYS:
        value = get(key)
        if type(value) is str:
            message[key] = intern(value)
    content = get("content")
    if type(content) is not list:
        if type(content) is str and role != "assistant" and "usage" not in message:
            return message  # a prompt's plain text
        return usable_message(message)
    for block in content:
        if type(block) is not dict:
            return usable_message(message)
        kind = block.get("type")
        if type(kind) is not str:
            return usable_message(message)
        block["type"] = kind = intern(kind)
        if kind == "text":
            if type(block.get("text")) is not str:
                return usable_message(message)
        elif kind == "toolCall":
            name = block.get("name")
            arguments = block.get("arguments")
            if type(name) is not str or type(block.get("id")) is not str or type(arguments) is not dict:
                return usable_message(message)
            block["name"] = intern(name)
            for value in arguments.values():  # the usual arguments hold no objects or lists
                if isinstance(value, (dict, list)):
                    if json_depth_exceeds(arguments, MAX_JSON_DEPTH):
                        return usable_message(message)
                    break
        elif not _usable_block(block):
            return usable_message(message)
    if "usage" in message and not _usable_usage(message["usage"]):
        return usable_message(message)
    return message
