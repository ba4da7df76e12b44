"""Lenient tool-argument parsing: strict, repaired, partial, then empty."""

from __future__ import annotations

import json

import pytest

from piwork.core.llm.lenient_json import parse_partial_json, parse_tool_arguments, repair_json


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"path": "a.py"}', {"path": "a.py"}),
        ('{"path": "a.p', {"path": "a.p"}),
        ('{"a": [1, 2, {"b": "x', {"a": [1, 2, {"b": "x"}]}),
        ('{"a": 1', {"a": 1}),
        ('{"a": 1.', {"a": 1}),
        ('{"a": tr', {}),
        ('{"a": true, "b": nu', {"a": True}),
        ('{"k"', {}),
        ('{"k":', {}),
        ('{"s": "x\\', {"s": "x"}),
        ('{"s": "\\u00', {"s": ""}),
        ('{"s": "caf\\u00e9"', {"s": "café"}),
        ("", {}),
        ("   ", {}),
        ("[1, 2]", {}),
        ("not json at all", {}),
        ('{"a":1}}', {"a": 1}),
    ],
)
def test_parse_tool_arguments(text: str, expected: dict[str, object]) -> None:
    assert parse_tool_arguments(text) == expected


def test_raw_control_characters_and_bad_escapes_are_repaired() -> None:
    raw = '{"code": "line1\nline2\tend", "re": "\\d+\\.py"}'
    with pytest.raises(ValueError):
        json.loads(raw)
    assert parse_tool_arguments(raw) == {"code": "line1\nline2\tend", "re": "\\d+\\.py"}
    assert json.loads(repair_json(raw))["re"] == "\\d+\\.py"


def test_every_prefix_of_a_document_parses_without_error() -> None:
    doc = json.dumps(
        {"path": "src/ü.py", "edits": [{"old": 'a "q"', "new": "b\\n"}], "n": -12.5e3, "ok": False}
    )
    for end in range(len(doc) + 1):
        value = parse_tool_arguments(doc[:end])
        assert isinstance(value, dict)
    assert parse_tool_arguments(doc) == json.loads(doc)


def test_partial_top_level_values() -> None:
    assert parse_partial_json('"abc') == "abc"
    assert parse_partial_json("[1, [2") == [1, [2]]


def test_streaming_arguments_reparse_rarely_once_large() -> None:
    from piwork.core.llm.lenient_json import StreamingArguments

    doc = json.dumps({"path": "big.py", "content": "x = 1\n" * 30000})
    fragments = [doc[i : i + 40] for i in range(0, len(doc), 40)]
    arguments = StreamingArguments()
    refreshed = sum(arguments.append(fragment) for fragment in fragments)
    assert len(fragments) > 4000 and refreshed < 150  # linear total work, not one parse per fragment
    assert arguments.value["path"] == "big.py"  # the live value is a usable prefix
    assert arguments.final() == json.loads(doc)
    assert StreamingArguments().final() == {}
