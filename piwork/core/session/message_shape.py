"""Making a stored message safe to send: the shapes the providers, token counts and views rely on.

Session lines are JSON written by any program, so a ``message`` may hold a number where a list of
blocks belongs, ``null`` blocks, a tool call without a name. Pi fails on those. piwork keeps what is
usable: unusable blocks are left out, content of the wrong type becomes empty, a usage record that
is not numbers is dropped, tool arguments nested deeper than any real call are left out. A well-formed message is returned as is (no copy).
"""

from __future__ import annotations

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
        if isinstance(value, bool) or not isinstance(value, _NUMBER):
            return False
    cost = usage.get("cost", {})
    if type(cost) is not dict:
        return False
    # ``totalFromProvider`` (Pi 1.6) says whether ``total`` came from the provider's own bill
    for k, v in cost.items():  # a loop, not all(): this runs for every assistant message of a context
        if not (
            (isinstance(v, _NUMBER) and not isinstance(v, bool))
            or (k == "totalFromProvider" and type(v) is bool)
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
