"""Argument validation: conversion, optional nulls, Pi's message format, unknown and length-stopped calls."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from piwork.core.tools.base import (
    ToolContext,
    ToolError,
    ToolRegistry,
    length_stopped_message,
    validate_arguments,
)
from piwork.core.tools.edit import EditTool
from piwork.core.tools.read import ReadTool

SCHEMA_TOOL = EditTool()


def _validate(args: Any) -> Any:
    return validate_arguments(ReadTool(), args)


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ({"path": 1}, {"path": "1"}),
        ({"path": True}, {"path": "true"}),
        ({"path": 1e21}, {"path": "1e+21"}),
        ({"path": "a", "offset": "10"}, {"path": "a", "offset": 10}),
        ({"path": "a", "offset": " 0x10 "}, {"path": "a", "offset": 16}),
        ({"path": "a", "offset": ""}, {"path": "a", "offset": 0}),
        ({"path": "a", "offset": "1e3"}, {"path": "a", "offset": 1000}),
        ({"path": "a", "offset": ".5"}, {"path": "a", "offset": 0.5}),
        ({"path": "a", "offset": "12n"}, {"path": "a", "offset": 12}),
        ({"path": "a", "offset": "TRUE"}, {"path": "a", "offset": 1}),
        ({"path": "a", "offset": True}, {"path": "a", "offset": 1}),
        ({"path": "a", "offset": None}, {"path": "a"}),
        ({"path": "a", "extra": 1}, {"path": "a", "extra": 1}),
    ],
)
def test_arguments_are_converted_like_pi(args: Any, expected: Any) -> None:
    assert _validate(args) == expected


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            {"path": "a", "offset": "abc"},
            'Validation failed for tool "read":\n  - offset: expected number, got string\n\nReceived arguments:\n'
            '{\n  "path": "a",\n  "offset": "abc"\n}',
        ),
        (
            {},
            'Validation failed for tool "read":\n  - path: missing\n\nReceived arguments:\n{}',
        ),
        (
            {"path": [1], "offset": "Infinity"},
            'Validation failed for tool "read":\n  - path: expected string, got array\n'
            "  - offset: expected number, got string\n\n"
            'Received arguments:\n{\n  "path": [\n    1\n  ],\n  "offset": "Infinity"\n}',
        ),
    ],
)
def test_validation_messages_match_pi_1_6(args: Any, message: str) -> None:
    with pytest.raises(ToolError) as err:
        _validate(args)
    assert str(err.value) == message


def test_nested_problems_are_reported_in_order() -> None:
    with pytest.raises(ToolError) as err:
        validate_arguments(SCHEMA_TOOL, {"edits": [{}, 1]})
    assert str(err.value).splitlines()[:5] == [
        'Validation failed for tool "edit":',
        "  - path: missing",
        "  - edits.0.oldText: missing",
        "  - edits.0.newText: missing",
        "  - edits.1: expected object, got integer",
    ]


def test_edit_arguments_are_repaired_before_validation() -> None:
    edit = {"oldText": "a", "newText": "b"}
    assert validate_arguments(SCHEMA_TOOL, {"path": "f", "edits": '[{"oldText":"a","newText":"b"}]'})[
        "edits"
    ] == [edit]
    assert validate_arguments(SCHEMA_TOOL, {"path": "f", "edits": edit})["edits"] == [edit]
    legacy = validate_arguments(SCHEMA_TOOL, {"path": "f", "oldText": "a", "newText": "b"})
    assert legacy == {"path": "f", "edits": [edit]}


def test_registry_reports_unknown_tools_and_never_raises(tmp_path: Any) -> None:
    registry = ToolRegistry([ReadTool()])
    outcome = asyncio.run(registry.run("c", "nope", {}, ToolContext(cwd=str(tmp_path))))
    assert outcome.is_error and outcome.content == [{"type": "text", "text": "Tool nope not found"}]
    assert outcome.details == {}
    assert registry.names() == ["read"] and registry.snippets()["read"]
    assert [s.name for s in registry.specs()] == ["read"]


def test_length_stopped_message() -> None:
    assert length_stopped_message("bash") == (
        'Tool call "bash" was not executed: the response hit the output token limit, so its arguments may be '
        "truncated. Re-issue the tool call with complete arguments."
    )
