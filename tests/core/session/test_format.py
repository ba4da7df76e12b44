"""Session format: names, locations, serialization bytes, the loose text parser, time stamps."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest

from piwork.core.session.format import (
    encode_cwd,
    is_valid_session_id,
    json_loads,
    new_session_id,
    parse_session_text,
    serialize,
    session_file_name,
)
from piwork.core.session.timestamps import file_timestamp, iso_from_ms, js_date_ms


@pytest.mark.parametrize(
    ("cwd", "folder"),
    [
        ("/home/ana/proj", "--home-ana-proj--"),
        ("/", "----"),
        ("/srv/my app/é.x", "--srv-my app-é.x--"),
        ("/srv/a:b/", "--srv-a-b--"),
    ],
)
def test_cwd_folder_names(cwd: str, folder: str) -> None:
    assert encode_cwd(cwd) == folder


def test_distinct_cwds_can_share_a_folder() -> None:
    assert encode_cwd("/srv/my-app") == encode_cwd("/srv/my/app")


def test_file_name_and_session_id() -> None:
    session_id = new_session_id()
    assert re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}", session_id)
    assert is_valid_session_id(session_id)
    assert not is_valid_session_id("-bad") and not is_valid_session_id("a b")
    name = session_file_name("2024-12-03T14:00:00.000Z", "0193e5b2-7c1d-7a4e-9f00-1234567890ab")
    assert name == "2024-12-03T14-00-00-000Z_0193e5b2-7c1d-7a4e-9f00-1234567890ab.jsonl"
    assert file_timestamp("2024-12-03T14:00:00.000Z") == "2024-12-03T14-00-00-000Z"


def test_serialize_matches_javascript_json_stringify() -> None:
    entry = {
        "type": "custom",
        "customType": "x",
        "data": {"b": 1, "10": "ten", "2": "two", "f": 1.0, "big": 2**60, "inf": math.inf, "u": "é😀\u2028"},
        "id": "abcd1234",
        "parentId": None,
        "timestamp": "2024-12-03T14:00:00.000Z",
        "lone": "\ud800",
    }
    line = serialize(entry)
    assert line.endswith("\n") and line.count("\n") == 1
    assert line == (
        '{"type":"custom","customType":"x","data":{"2":"two","10":"ten","b":1,"f":1,"big":1152921504606847000,'
        '"inf":null,"u":"é😀\u2028"},"id":"abcd1234","parentId":null,"timestamp":"2024-12-03T14:00:00.000Z",'
        '"lone":"\\ud800"}\n'
    )
    line.encode("utf-8")  # always encodable, lone surrogates are escaped


def test_loose_parser_keeps_what_the_reference_keeps() -> None:
    text = '\n\n{"a":1}\r\n{not json\n42\n\ufeff{"bom":1}\n{"x":NaN}\n  \n{"s":"line\u2028sep"}\n'
    assert parse_session_text(text) == [{"a": 1}, 42, {"s": "line\u2028sep"}]


def test_json_loads_follows_json_parse() -> None:
    assert json_loads(' {"a": [1, 2.5, "x"]} \r') == {"a": [1, 2.5, "x"]}
    for bad in ["", "NaN", '{"a":Infinity}', "\ufeff{}", "{} x", "[1,"]:
        with pytest.raises(ValueError):
            json_loads(bad)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2024-12-03T14:00:01.123Z", 1733234401123),
        ("2024-12-03T14:00:01.123456Z", 1733234401123),
        ("2024-12-03T14:00:01.1Z", 1733234401100),
        ("2024-12-03 14:00:00Z", 1733234400000),
        ("2024-12-03T14:00Z", 1733234400000),
        ("2024-12-03T14:00:00+01:00", 1733230800000),
        ("2024-12-03t14:00:00z", 1733234400000),
        ("+002024-12-03T14:00:00Z", 1733234400000),
        ("2024", 1704067200000),
        ("2024-12", 1733011200000),
        ("2024-02-30", 1709251200000),
        ("2024-12-03T24:00:00Z", 1733270400000),
        (1733234400123, 1733234400123),
        (1.7, 1),
        (-1.7, -1),
        (None, 0),
        (True, 1),
    ],
)
def test_js_date_parse(value: object, expected: int) -> None:
    assert js_date_ms(value) == expected


@pytest.mark.parametrize(
    "value",
    ["not-a-date", " 2024-12-03T14:00:00Z", "2024-13-01", "2024-12-03T14:00:60Z", "1733234400123", {}, 9e15],
)
def test_js_date_parse_invalid(value: object) -> None:
    assert math.isnan(js_date_ms(value))


def test_iso_from_ms() -> None:
    assert iso_from_ms(1733234401005) == "2024-12-03T14:00:01.005Z"


def test_session_dir_precedence(tmp_path: Path) -> None:
    from piwork.core.session.format import default_session_dir, resolve_session_dir

    env = {"HOME": str(tmp_path), "PI_CODING_AGENT_SESSION_DIR": "~/from-env"}
    assert resolve_session_dir("/p", tmp_path, "/flag", env, "/setting") == Path("/flag")
    assert resolve_session_dir("/p", tmp_path, None, env, "/setting") == tmp_path / "from-env"
    assert resolve_session_dir("/p", tmp_path, None, {"HOME": str(tmp_path)}, "/setting") == Path("/setting")
    assert resolve_session_dir("/p", tmp_path, None, {}, None) == default_session_dir("/p", tmp_path)
