"""JavaScript semantics that Pi's files and numbers depend on.

Pi is written in TypeScript, so several observable behaviours follow JavaScript rules rather than
Python's: string lengths count UTF-16 code units, ``trim()`` uses a different whitespace set,
``Array.prototype.sort`` compares UTF-16 code units and ``JSON.stringify`` prints numbers its own
way. Everything here is pure and small; callers use it wherever the spec says "characters", "JS
sort" or "JS trim".
"""

from __future__ import annotations

import json
import json.encoder
import math
import re
from collections.abc import Callable
from decimal import Decimal
from typing import Any

import orjson

# JavaScript's String.prototype.trim() whitespace: WhiteSpace + LineTerminator.
JS_WHITESPACE = (
    "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000\ufeff"
)


def js_trim(text: str) -> str:
    """``String.prototype.trim``: unlike ``str.strip`` it keeps U+0085 and U+001C..U+001F."""
    return text.strip(JS_WHITESPACE)


def js_trim_end(text: str) -> str:
    return text.rstrip(JS_WHITESPACE)


def utf16_len(text: str) -> int:
    """Length in UTF-16 code units, i.e. JavaScript's ``.length``."""
    if text.isascii():
        return len(text)
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def utf16_slice(text: str, start: int, end: int | None = None) -> str:
    """``text.slice(start, end)`` in UTF-16 units; may split a surrogate pair like JS does."""
    if text.isascii():
        return text[start:end]
    units = text.encode("utf-16-le", "surrogatepass")
    n = len(units) // 2
    s = _clamp_index(start, n)
    e = n if end is None else _clamp_index(end, n)
    if e <= s:
        return ""
    return units[2 * s : 2 * e].decode("utf-16-le", "surrogatepass")


def utf16_slice_head(text: str, max_units: int) -> str:
    """At most the first ``max_units`` UTF-16 units of ``text``, never splitting a surrogate pair
    (a character that does not fit whole is left out)."""
    end = max(0, max_units)
    if text.isascii():
        return text[:end]
    units = text.encode("utf-16-le", "surrogatepass")
    n = len(units) // 2
    if 0 < end < n:
        last = int.from_bytes(units[2 * end - 2 : 2 * end], "little")
        following = int.from_bytes(units[2 * end : 2 * end + 2], "little")
        if 0xD800 <= last <= 0xDBFF and 0xDC00 <= following <= 0xDFFF:
            end -= 1
    return units[: 2 * min(end, n)].decode("utf-16-le", "surrogatepass")


def _clamp_index(i: int, n: int) -> int:
    if i < 0:
        return max(0, n + i)
    return min(i, n)


def js_sort_key(text: str) -> bytes:
    """Key that orders strings by UTF-16 code units, as ``Array.prototype.sort`` does."""
    return text.encode("utf-16-be", "surrogatepass")


def js_sorted(items: list[str]) -> list[str]:
    return sorted(items, key=js_sort_key)


def js_number_str(value: float | int) -> str:
    """``String(number)`` / ``JSON.stringify(number)`` formatting (non-finite handled by caller)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        if abs(value) <= 2**53:
            return str(value)
        value = float(value)  # JavaScript numbers are doubles
    if value == 0:
        return "0"
    # repr() gives the shortest round-trip digits, as JavaScript does; only the layout differs.
    sign = "-" if value < 0 else ""
    exact = Decimal(repr(abs(value))).normalize()
    tup = exact.as_tuple()
    digits = "".join(map(str, tup.digits))
    k = len(digits)
    n = k + int(tup.exponent)  # position of the decimal point
    if k <= n <= 21:
        return sign + digits + "0" * (n - k)
    if 0 < n <= 21:
        return sign + digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return sign + "0." + "0" * (-n) + digits
    e = n - 1
    exp = f"e{'+' if e >= 0 else '-'}{abs(e)}"
    if k == 1:
        return sign + digits + exp
    return sign + digits[0] + "." + digits[1:] + exp


def js_json_stringify(value: Any, indent: int | None = None) -> str:
    """``JSON.stringify(value)`` for JSON-like Python values.

    Differences from ``json.dumps`` that matter to Pi's files and estimates: compact separators,
    no ASCII escaping, JavaScript number printing (``1e-7``, ``1e+21``, ``-0`` → ``0``) and
    non-finite numbers as ``null``. Lone surrogates are escaped as ``\\udXXX`` like JS does.
    """
    parts: list[str] = []
    _stringify_into(value, parts, indent, 0)
    return "".join(parts)


def js_json_length(value: Any) -> int:
    """``JSON.stringify(value).length`` (UTF-16 units) without building the text in Python when ``value``
    holds only strings, booleans, nulls and integers JavaScript prints exactly: orjson writes those with the
    same escapes and no spaces, and key order does not change the length."""
    if _exact_in_orjson(value, 0):
        try:
            raw = orjson.dumps(value)
        except TypeError:  # a lone surrogate (orjson refuses it; JavaScript escapes it)
            pass
        else:
            return len(raw) if raw.isascii() else utf16_len(raw.decode())
    return utf16_len(js_json_stringify(value))


_MAX_EXACT_INT = 2**53  # beyond it JavaScript prints the nearest double, which may be longer


def _exact_in_orjson(value: Any, depth: int) -> bool:
    kind = type(value)
    if kind is str or kind is bool or value is None:
        return True
    if kind is int:
        return bool(-_MAX_EXACT_INT <= value <= _MAX_EXACT_INT)
    if depth > 50:  # deeper than any tool call's arguments: the general path
        return False
    if kind is dict:
        for k, v in value.items():  # loops, not all(): this runs for every tool call of a long context
            if type(k) is not str or (type(v) is not str and not _exact_in_orjson(v, depth + 1)):
                return False
        return True
    if kind is list:
        return all(type(v) is str or _exact_in_orjson(v, depth + 1) for v in value)
    return False  # floats (printed differently), tuples, undefined, anything else


def _stringify_into(value: Any, out: list[str], indent: int | None, depth: int) -> None:
    if value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, int):
        out.append(js_number_str(value))
    elif isinstance(value, float):
        out.append("null" if not math.isfinite(value) else js_number_str(value))
    elif isinstance(value, str):
        out.append(js_quote(value))
    elif isinstance(value, dict):
        if not value:
            out.append("{}")
            return
        out.append("{")
        first = True
        for key, item in _js_property_order(value):
            if item is _UNDEFINED:
                continue
            if not first:
                out.append(",")
            first = False
            if indent is not None:
                out.append("\n" + " " * (indent * (depth + 1)))
            out.append(js_quote(str(key)))
            out.append(": " if indent is not None else ":")
            _stringify_into(item, out, indent, depth + 1)
        if indent is not None and not first:
            out.append("\n" + " " * (indent * depth))
        out.append("}")
    elif isinstance(value, (list, tuple)):
        if not value:
            out.append("[]")
            return
        out.append("[")
        for i, item in enumerate(value):
            if i:
                out.append(",")
            if indent is not None:
                out.append("\n" + " " * (indent * (depth + 1)))
            _stringify_into(item, out, indent, depth + 1)
        if indent is not None:
            out.append("\n" + " " * (indent * depth))
        out.append("]")
    else:
        raise TypeError(f"cannot serialize {type(value).__name__} as JSON")


def _is_array_index(key: str) -> bool:
    return key.isascii() and key.isdigit() and (key == "0" or key[0] != "0") and int(key) < 2**32 - 1


def _js_property_order(obj: dict[Any, Any]) -> list[tuple[str, Any]]:
    """Keys as JavaScript enumerates them: array-index keys first, ascending, then insertion order."""
    items = [(str(k), v) for k, v in obj.items()]
    if any(_is_array_index(k) for k, _ in items):
        indexed = sorted(((k, v) for k, v in items if _is_array_index(k)), key=lambda kv: int(kv[0]))
        items = indexed + [(k, v) for k, v in items if not _is_array_index(k)]
    return items


class _Undefined:
    """Marker for a JavaScript ``undefined`` object field (omitted by JSON.stringify)."""

    def __repr__(self) -> str:
        return "undefined"


_UNDEFINED = _Undefined()
UNDEFINED: Any = _UNDEFINED


def js_truthy(value: Any) -> bool:
    """JavaScript truthiness of a JSON value: false for null, undefined, false, 0, NaN and ""."""
    if value is None or value is UNDEFINED or value is False:
        return False
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value != 0 and not (isinstance(value, float) and math.isnan(value))
    if isinstance(value, str):
        return value != ""
    return True


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
_encode_basestring: Callable[[str], str] = json.encoder.encode_basestring

_ESCAPES = {
    '"': '\\"',
    "\\": "\\\\",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
}


def js_quote(text: str) -> str:
    """JSON string literal exactly as ``JSON.stringify`` writes it (well-formed variant)."""
    if _LONE_SURROGATE.search(text) is None:
        # json's C encoder writes the same escapes (the short ones, other controls as lowercase \u00xx,
        # nothing else); only lone surrogates, which it leaves raw, need the loop below
        return _encode_basestring(text)
    out = ['"']
    for ch in text:
        code = ord(ch)
        esc = _ESCAPES.get(ch)
        if esc is not None:
            out.append(esc)
        elif code < 0x20 or 0xD800 <= code <= 0xDFFF:
            out.append(f"\\u{code:04x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def json_loads_js(text: str) -> Any:
    """``JSON.parse`` equivalent: rejects NaN/Infinity literals that Python would accept.

    A document nested deeper than :data:`MAX_JSON_DEPTH` is a ``ValueError`` like any other
    unreadable text (the code walking it afterwards recurses too).
    """

    def _reject(name: str) -> Any:
        raise ValueError(f"invalid JSON literal {name}")

    try:
        value = json.loads(text, parse_constant=_reject, parse_int=_js_int)
    except RecursionError:
        raise ValueError("the JSON is nested too deeply") from None
    if json_depth_exceeds(value, MAX_JSON_DEPTH):
        raise ValueError("the JSON is nested too deeply")
    return value


MAX_JSON_DEPTH = 200
"""Deeper settings, models or trust files are refused: nothing legitimate nests this far."""


def json_depth_exceeds(value: Any, limit: int) -> bool:
    """Whether lists/objects in ``value`` nest deeper than ``limit`` (iterative: no recursion)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return False


def _js_int(literal: str) -> int | float:
    """Integers beyond 2**53 lose precision in JavaScript; keep them as doubles too."""
    value = int(literal)
    return value if abs(value) <= 2**53 else float(value)
