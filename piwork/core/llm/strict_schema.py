"""Tool schemas in the strict subset providers accept for constrained sampling.

A strict schema lists every property as required, allows no other properties, and makes an optional
property nullable instead (``anyOf: [schema, {"type": "null"}]``). Schemas using keywords outside the
subset cannot be made strict; such a tool is then sent without strict sampling.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from typing import Any

KeywordCheck = Callable[[str, Any], bool]

_UNSUPPORTED = (
    "$ref", "$defs", "definitions", "allOf", "oneOf", "patternProperties", "dependentSchemas",
    "dependencies", "unevaluatedProperties", "propertyNames", "contains", "prefixItems", "not", "if",
    "then", "else",
)  # fmt: skip

# Keywords Anthropic's strict tool use rejects for the whole request.
_ANTHROPIC_UNSUPPORTED = frozenset(
    {
        "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "maxItems",
        "uniqueItems", "minContains", "maxContains", "minProperties", "maxProperties",
    }
)  # fmt: skip
_ANTHROPIC_FORMATS = frozenset(
    {"date-time", "time", "date", "duration", "email", "hostname", "uri", "ipv4", "ipv6", "uuid"}
)


class NotStrict(ValueError):
    """The schema uses something the strict subset does not have."""


def anthropic_rejects(key: str, value: Any) -> bool:
    """Whether Anthropic's strict mode refuses this keyword with this value."""
    if key in _ANTHROPIC_UNSUPPORTED:
        return True
    if key == "minItems":
        return value not in (0, 1) or isinstance(value, bool)
    if key == "format":
        return not isinstance(value, str) or value not in _ANTHROPIC_FORMATS
    return False


def _is_structured(schema: Any) -> bool:
    if not isinstance(schema, dict):
        return False
    kind = schema.get("type")
    kinds = [kind] if isinstance(kind, str) else kind if isinstance(kind, list) else []
    return "object" in kinds or "array" in kinds or "properties" in schema or "items" in schema


def _allows_null(schema: Any) -> bool:
    if not isinstance(schema, dict):
        return False
    kind = schema.get("type")
    if kind == "null" or (isinstance(kind, list) and "null" in kind):
        return True
    if ("const" in schema and schema["const"] is None) or (
        isinstance(schema.get("enum"), list) and None in schema["enum"]
    ):
        return True
    variants = schema.get("anyOf")
    return isinstance(variants, list) and any(_allows_null(v) for v in variants)


def _make_strict(schema: Any, rejects: KeywordCheck | None) -> None:
    if not isinstance(schema, dict):
        raise NotStrict("boolean schemas are unsupported")
    for key in _UNSUPPORTED:
        if key in schema:
            raise NotStrict(f"{key} schemas are unsupported")
    if rejects is not None:
        for key, value in schema.items():
            if rejects(key, value):
                raise NotStrict(f"{key} is unsupported")
    if "type" not in schema and "anyOf" not in schema and "enum" not in schema:
        raise NotStrict("schemas without a type are unsupported")
    if "anyOf" in schema:
        variants = schema["anyOf"]
        if not isinstance(variants, list) or not variants:
            raise NotStrict("anyOf must contain at least one schema")
        for variant in variants:
            if _is_structured(variant):
                raise NotStrict("object and array unions are unsupported")
            _make_strict(variant, rejects)
    if "items" in schema:
        if isinstance(schema["items"], list):
            raise NotStrict("tuple schemas are unsupported")
        _make_strict(schema["items"], rejects)
    is_object = schema.get("type") == "object"
    if "properties" in schema and not is_object:
        raise NotStrict("properties require type object")
    if not is_object:
        return
    if schema.get("additionalProperties", False) is not False:
        raise NotStrict("additionalProperties other than false is unsupported")
    properties = schema.get("properties", {})
    if not isinstance(properties, dict):
        raise NotStrict("object properties must be a schema map")
    required = schema.get("required", [])
    if not isinstance(required, list) or not all(isinstance(k, str) for k in required):
        raise NotStrict("object required must be a string array")
    if any(k not in properties for k in required):
        raise NotStrict("required contains an unknown property")
    for key, prop in list(properties.items()):
        _make_strict(prop, rejects)
        if key not in required and not _allows_null(prop):
            properties[key] = {"anyOf": [prop, {"type": "null"}]}
    schema["required"] = list(properties)
    schema["additionalProperties"] = False


def strict_parameters(
    schema: Mapping[str, Any], rejects: KeywordCheck | None = None
) -> dict[str, Any] | None:
    """``schema`` converted to the strict subset, or ``None`` when it cannot be."""
    converted = copy.deepcopy(dict(schema))
    try:
        _make_strict(converted, rejects)
    except NotStrict:
        return None
    return converted if converted.get("type") == "object" else None
