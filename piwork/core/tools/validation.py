"""Tool-argument checking against a JSON schema, with the model-facing messages Pi produces.

Before checking, arguments go through two repairs: optional properties set to ``null`` are dropped,
and primitive values are converted towards the schema type the way Pi's schema library does
(``"10"`` → 10, ``"true"`` → true, 3 → ``"3"``, a lone value where an array is expected → a one-item
array). Problems are reported in the order Pi reports them: an object's ``required`` and
``additionalProperties`` problems first, then each property in schema order.
"""

from __future__ import annotations

import copy
import json
import math
import re
from typing import Any

from piwork.core.jscompat import js_number_str

Schema = dict[str, Any]

_MAX_SAFE_INTEGER = 2**53 - 1
_JS_WHITESPACE = " \t\n\v\f\r\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
_DECIMAL_LITERAL = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_RADIX_LITERAL = re.compile(r"0([xXoObB])([0-9a-fA-F]+)")
_BIGINT_LITERAL = re.compile(r"-?(?:0|[1-9]\d*)n")
_RADIX = {"x": 16, "o": 8, "b": 2}


def _schema_types(schema: Schema) -> list[str]:
    kind = schema.get("type")
    if isinstance(kind, str):
        return [kind]
    if isinstance(kind, list):
        return [k for k in kind if isinstance(k, str)]
    return []


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _js_string_to_number(text: str) -> float | int | None:
    """JavaScript's ``+text`` (``None`` for NaN); finite results only."""
    body = text.strip(_JS_WHITESPACE)
    if body == "":
        return 0
    radix = _RADIX_LITERAL.fullmatch(body)
    if radix:
        try:
            return int(radix.group(2), _RADIX[radix.group(1).lower()])
        except ValueError:
            return None
    if not _DECIMAL_LITERAL.fullmatch(body):
        return None
    number = float(body)
    if not math.isfinite(number):
        return None
    return int(number) if number.is_integer() and abs(number) <= _MAX_SAFE_INTEGER else number


def _to_number(value: Any) -> tuple[bool, Any]:
    if isinstance(value, bool):
        return True, 1 if value else 0
    if _is_number(value):
        return True, value
    if value is None:
        return True, 0
    if isinstance(value, str):
        number = _js_string_to_number(value)
        if number is not None:
            return True, number
        lower = value.lower()
        if lower in ("false", "true"):
            return True, 1 if lower == "true" else 0
        if _BIGINT_LITERAL.fullmatch(value):
            big = int(value[:-1])
            if abs(big) <= _MAX_SAFE_INTEGER:
                return True, big
    return False, value


def _to_boolean(value: Any) -> tuple[bool, Any]:
    if isinstance(value, bool):
        return True, value
    if _is_number(value) and value in (0, 1):
        return True, value == 1
    if value is None:
        return True, False
    if isinstance(value, str):
        lower = value.lower()
        if lower in ("true", "1"):
            return True, True
        if lower in ("false", "0"):
            return True, False
    return False, value


def _to_string(value: Any) -> tuple[bool, Any]:
    if isinstance(value, bool):
        return True, "true" if value else "false"
    if _is_number(value):
        return True, js_number_str(value)
    if value is None:
        return True, "null"
    if isinstance(value, str):
        return True, value
    return False, value


def convert(schema: Schema, value: Any) -> Any:
    """Convert ``value`` towards ``schema`` where a reasonable conversion exists (returns a new value)."""
    types = _schema_types(schema)
    if len(types) != 1:
        return value
    kind = types[0]
    if kind == "object":
        if not isinstance(value, dict):
            return value
        properties: dict[str, Schema] = schema.get("properties") or {}
        out = dict(value)
        for key, prop in properties.items():
            if key in out:
                out[key] = convert(prop, out[key])
        return out
    if kind == "array":
        items = value if isinstance(value, list) else [value]
        item_schema = schema.get("items")
        if isinstance(item_schema, dict):
            return [convert(item_schema, item) for item in items]
        return list(items)
    if kind in ("number", "integer"):
        ok, number = _to_number(value)
        if ok and kind == "integer":
            return math.trunc(number)
        return number
    if kind == "boolean":
        return _to_boolean(value)[1]
    if kind == "string":
        return _to_string(value)[1]
    return value


def drop_optional_nulls(schema: Schema, value: Any) -> None:
    """Remove optional properties whose value is ``null`` (unless the schema allows null), in place."""
    if isinstance(value, list):
        items = schema.get("items")
        if isinstance(items, dict):
            for item in value:
                drop_optional_nulls(items, item)
        return
    properties = schema.get("properties")
    if not isinstance(value, dict) or not isinstance(properties, dict):
        return
    required = set(schema.get("required") or [])
    for key, prop in properties.items():
        if key not in value:
            continue
        if value[key] is None and key not in required and not _accepts(prop, None):
            del value[key]
        else:
            drop_optional_nulls(prop, value[key])


def _accepts(schema: Schema, value: Any) -> bool:
    return not list(check(schema, value))


def _matches_type(value: Any, kind: str) -> bool:
    if kind == "string":
        return isinstance(value, str)
    if kind == "number":
        return _is_number(value) and math.isfinite(value)
    if kind == "integer":
        return _is_number(value) and math.isfinite(value) and float(value).is_integer()
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "null":
        return value is None
    if kind == "array":
        return isinstance(value, list)
    if kind == "object":
        return isinstance(value, dict)
    return True


def check(schema: Schema, value: Any, path: tuple[str, ...] = ()) -> list[tuple[str, str]]:
    """Every problem of ``value`` against ``schema`` as ``(dotted path, message)``, in Pi's order."""
    types = _schema_types(schema)
    if types and not any(_matches_type(value, kind) for kind in types):
        return [(_dotted(path), f"expected {' or '.join(types)}, got {type_name(value)}")]
    problems: list[tuple[str, str]] = []
    if "enum" in schema and isinstance(schema["enum"], list) and value not in schema["enum"]:
        problems.append((_dotted(path), f"expected one of {_listed(schema['enum'])}"))
    if isinstance(value, dict) and "object" in types:
        problems.extend(_check_object(schema, value, path))
    elif isinstance(value, list) and "array" in types:
        problems.extend(_check_array(schema, value, path))
    elif isinstance(value, str):
        problems.extend(_check_string(schema, value, path))
    elif _is_number(value):
        problems.extend(_check_number(schema, value, path))
    return problems


LISTED_VALUES = 20


def _listed(values: list[Any]) -> str:
    shown = json.dumps(values[:LISTED_VALUES], ensure_ascii=False, separators=(",", ":"))
    return (
        shown
        if len(values) <= LISTED_VALUES
        else f"{shown[:-1]}, ... and {len(values) - LISTED_VALUES} more]"
    )


def type_name(value: Any) -> str:
    """A value's JSON type as the model is told it (a whole number is an ``integer``)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    if isinstance(value, str):
        return "string"
    if isinstance(value, int) or (isinstance(value, float) and value.is_integer()):
        return "integer"
    if isinstance(value, float) and not math.isfinite(value):
        return js_number_str(value)
    return "number"


def _check_object(schema: Schema, value: dict[str, Any], path: tuple[str, ...]) -> list[tuple[str, str]]:
    problems: list[tuple[str, str]] = []
    properties: dict[str, Schema] = schema.get("properties") or {}
    for key in schema.get("required") or []:
        if isinstance(key, str) and key not in value:
            problems.append((_dotted((*path, key)), "missing"))
    for key, prop in properties.items():
        if key in value:
            problems.extend(check(prop, value[key], (*path, key)))
    if schema.get("additionalProperties") is False:
        problems.extend((_dotted((*path, key)), "unknown field") for key in value if key not in properties)
    return problems


def _check_array(schema: Schema, value: list[Any], path: tuple[str, ...]) -> list[tuple[str, str]]:
    problems: list[tuple[str, str]] = []
    min_items = schema.get("minItems")
    if isinstance(min_items, int) and len(value) < min_items:
        problems.append((_dotted(path), f"expected at least {min_items} items"))
    max_items = schema.get("maxItems")
    if isinstance(max_items, int) and len(value) > max_items:
        problems.append((_dotted(path), f"expected at most {max_items} items"))
    items = schema.get("items")
    if isinstance(items, dict):
        for index, item in enumerate(value):
            problems.extend(check(items, item, (*path, str(index))))
    return problems


def _check_string(schema: Schema, value: str, path: tuple[str, ...]) -> list[tuple[str, str]]:
    problems: list[tuple[str, str]] = []
    length = len(value.encode("utf-16-le", "surrogatepass")) // 2
    if isinstance(schema.get("minLength"), int) and length < schema["minLength"]:
        problems.append((_dotted(path), f"expected at least {schema['minLength']} characters"))
    if isinstance(schema.get("maxLength"), int) and length > schema["maxLength"]:
        problems.append((_dotted(path), f"expected at most {schema['maxLength']} characters"))
    return problems


def _check_number(schema: Schema, value: float, path: tuple[str, ...]) -> list[tuple[str, str]]:
    problems: list[tuple[str, str]] = []
    if _is_number(schema.get("minimum")) and value < schema["minimum"]:
        problems.append((_dotted(path), f"expected >= {js_number_str(schema['minimum'])}"))
    if _is_number(schema.get("maximum")) and value > schema["maximum"]:
        problems.append((_dotted(path), f"expected <= {js_number_str(schema['maximum'])}"))
    return problems


def _dotted(path: tuple[str, ...]) -> str:
    return ".".join(path) or "root"


def prepare_arguments(schema: Schema, arguments: Any) -> Any:
    """Copy, drop optional nulls and convert; the value that is then checked."""
    args = copy.deepcopy(arguments)
    drop_optional_nulls(schema, args)
    return convert(schema, args)
