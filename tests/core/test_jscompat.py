from __future__ import annotations

import json

import pytest

from piwork.core.jscompat import (
    UNDEFINED,
    js_json_length,
    js_json_stringify,
    js_number_str,
    js_quote,
    js_sorted,
    js_trim,
    js_truthy,
    json_loads_js,
    utf16_len,
    utf16_slice,
)


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (0, "0"),
        (-0.0, "0"),
        (1.5, "1.5"),
        (1e-7, "1e-7"),
        (1e-6, "0.000001"),
        (1e21, "1e+21"),
        (1e20, "100000000000000000000"),
        (123.456, "123.456"),
        (2**60, "1152921504606847000"),
        (5e-324, "5e-324"),
    ],
)
def test_numbers_print_like_javascript(value: float, text: str) -> None:
    assert js_number_str(value) == text


def test_stringify_matches_json_stringify() -> None:
    value = {"a": [1, 2.0, "x\u2028é"], "b": None, "c": {"d": float("nan")}}
    assert js_json_stringify(value) == '{"a":[1,2,"x\u2028é"],"b":null,"c":{"d":null}}'
    assert js_json_stringify({"k": [1]}, indent=2) == '{\n  "k": [\n    1\n  ]\n}'
    assert js_json_stringify("\ud800") == '"\\ud800"'


def _quoted_by_the_rule(text: str) -> str:
    """JSON.stringify's string literal, character by character: the short escapes, other controls and lone
    surrogates as lowercase ``\\u00xx``, everything else as it is (U+2028, DEL and astral characters too)."""
    short = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
    return (
        '"'
        + "".join(
            short.get(c) or (f"\\u{ord(c):04x}" if ord(c) < 0x20 or 0xD800 <= ord(c) <= 0xDFFF else c)
            for c in text
        )
        + '"'
    )


@pytest.mark.parametrize(
    "text",
    [
        "".join(chr(i) for i in range(0x10000) if not 0xD800 <= i <= 0xDFFF) + "\U0001f600\U0010ffff",
        "".join(chr(i) for i in range(0x10000)),  # lone surrogates among them
        "a\udbff\udc00b\udc00",  # a pair written as two lone halves, and a lone low half
        "",
        'plain "quoted" \\ text\n',
    ],
)
def test_strings_are_quoted_like_json_stringify(text: str) -> None:
    assert js_quote(text) == _quoted_by_the_rule(text)


def test_trim_keeps_characters_python_would_strip() -> None:
    assert js_trim("\u0085 x \ufeff") == "\u0085 x"
    assert js_trim("\x1c") == "\x1c"


def test_sort_by_utf16_units() -> None:
    assert js_sorted(["～", "😀", "a"]) == ["a", "😀", "～"]


def test_utf16_length_and_slice() -> None:
    assert utf16_len("a🙂") == 3
    assert utf16_slice("a🙂b", 0, 2) == "a\ud83d"
    assert utf16_slice("a🙂b", 1, 3) == "🙂"


def test_json_parse_rejects_nan_and_rounds_big_integers() -> None:
    with pytest.raises(ValueError):
        json_loads_js("[NaN]")
    assert json_loads_js("9007199254740993") == 9007199254740992.0
    assert json_loads_js('{"a": 1}') == json.loads('{"a": 1}')


def test_stringify_enumerates_array_index_keys_first_like_javascript() -> None:
    value = {"b": 1, "10": 2, "2": 3, "01": 4, "a": {"1": 0, "x": 1}}
    assert js_json_stringify(value) == '{"2":3,"10":2,"b":1,"01":4,"a":{"1":0,"x":1}}'


@pytest.mark.parametrize(
    ("value", "truthy"),
    [
        (None, False),
        (UNDEFINED, False),
        (False, False),
        (0, False),
        (0.0, False),
        (-0.0, False),
        (float("nan"), False),
        ("", False),
        (True, True),
        (1, True),
        (-1.5, True),
        ("0", True),
        (" ", True),
        ([], True),
        ({}, True),
    ],
)
def test_truthiness_follows_javascript(value: object, truthy: bool) -> None:
    assert js_truthy(value) is truthy


@pytest.mark.parametrize(
    "value",
    [
        "".join(chr(i) for i in range(0x110000) if not 0xD800 <= i <= 0xDFFF),  # every escape and width
        {"path": "src/é.py", "offset": 500, "limit": 1, "all": True, "none": None},
        {"nested": [{"a": ["\u2028", -(2**53), 2**53]}], "2": "array-index keys go first"},
        {"float": 1.0, "big": 2**60, "tiny": 1e-7},  # printed differently by Python: the general path
        {"lone": "\udc00"},  # orjson refuses it: the general path
        {1: "not a string key"},
        [],
        {},
    ],
)
def test_json_length_is_the_length_of_json_stringify(value: object) -> None:
    assert js_json_length(value) == utf16_len(js_json_stringify(value))
