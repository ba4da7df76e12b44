"""Reading loosely-typed JSON the way JavaScript does, for entries parsed from user files.

Session files are parsed without validation (like Pi does), so the engine must cope with any JSON
value where an object is expected. These helpers give JavaScript's answers: property access on an
object, ``undefined`` for a missing key or a primitive, a ``TypeError`` on ``null``/``undefined``;
strict equality; and ``Map`` keys. ``UNDEFINED`` and truthiness live in ``piwork.core.jscompat``.
"""

from __future__ import annotations

import math
from typing import Any

from piwork.core.jscompat import UNDEFINED

__all__ = ["js_get", "js_same", "map_key"]


def js_get(value: Any, key: str) -> Any:
    """``value[key]``: ``UNDEFINED`` when missing; raises ``TypeError`` on null/undefined."""
    if isinstance(value, dict):
        return value.get(key, UNDEFINED)
    if value is None or value is UNDEFINED:
        raise TypeError(f"cannot read property {key!r} of {'null' if value is None else 'undefined'}")
    return UNDEFINED


def js_same(a: Any, b: Any) -> bool:
    """``a === b`` for JSON values (objects compare by identity)."""
    if isinstance(a, str) or isinstance(b, str):
        return isinstance(a, str) and isinstance(b, str) and a == b
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    return a is b


def map_key(value: Any) -> Any:
    """A hashable stand-in with JavaScript ``Map`` (SameValueZero) key semantics."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, (int, float)):
        if isinstance(value, float) and math.isnan(value):
            return ("nan",)
        return ("num", float(value))
    if value is None:
        return ("null",)
    if value is UNDEFINED:
        return ("undefined",)
    return ("object", id(value))
