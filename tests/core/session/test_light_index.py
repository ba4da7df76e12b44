"""The byte-level index of message lines agrees with a full parse, and falls back when unsure."""

from __future__ import annotations

from pathlib import Path

import pytest

from piwork.core.session.format import serialize
from piwork.core.session.line_index import light_record
from piwork.core.session.reader import read_session_file
from piwork.core.session.records import make_record
from piwork.core.session.store import open_session

from .helpers import HEADER, assistant, user

TEXTS = [
    "",
    "   ",
    "\n\t",
    "\u00a0x",
    "\u00a0",
    "\u3000",
    "é start",
    "😀",
    '"quoted"',
    "a\\b",
    "x" * 2000,
    " \n" * 300 + "late text",
    "\u2028",
    "ok",
    "!",
    "~ tail",
    "[x]",
    "\\leading backslash",
    '"',
    "\x7f",
    "/slash",
    "\bbackspace",
    "\f",
    "\f\u2028",
    " \n\\",
    '\t"',
]


def _assistant_with(text: str, stop: str = "stop") -> dict:
    entry = assistant("a1", "u1", text, 2, stopReason=stop)
    entry["message"]["content"].append(
        {"type": "toolCall", "id": "c", "name": "read", "arguments": {"path": "x"}}
    )
    return entry


@pytest.mark.parametrize("text", TEXTS)
def test_light_records_agree_with_full_parse(text: str) -> None:
    for entry in (user("u1", None, text), _assistant_with(text), _assistant_with(text, "toolUse")):
        raw = serialize(entry).rstrip("\n").encode("utf-8")
        full = make_record(entry, 0)
        light = light_record(raw, 0, 1, 0)
        if light is None:
            continue  # unsure cases are parsed in full by the reader
        assert (light.id, light.parent_id, light.type, light.timestamp, light.role) == (
            full.id,
            full.parent_id,
            full.type,
            full.timestamp,
            full.role,
        )
        for key in ("hasText", "stopReason"):
            assert light.meta.get(key) == full.meta.get(key), (text, key)
        light.body = entry
        assert light.preview == full.preview


def test_lines_in_other_layouts_are_parsed_in_full() -> None:
    entry = user("u1", None, "x")
    spaced = (
        '{"type": "message", "id": "u1", "parentId": null, "timestamp": "t", "message": {"role": "user"}}'
    )
    assert light_record(spaced.encode(), 0, 1, 0) is None
    reordered = serialize({"id": "u1", **entry}).rstrip("\n").encode()
    assert light_record(reordered, 0, 1, 0) is None


def test_a_line_that_only_looks_complete_is_reported_when_read(tmp_path: Path) -> None:
    good = serialize(user("u1", None, "fine", 1))
    broken = serialize(user("u2", "u1", "broken", 2)).replace('"broken"', '"bro}').rstrip("\n") + "}\n"
    path = tmp_path / "s.jsonl"
    path.write_text(serialize(HEADER) + good + broken, encoding="utf-8")
    assert [r.id for r in read_session_file(path).records] == ["u1", "u2"]
    with open_session(path, writable=False) as session:
        messages = session.tree.build_context("u2").messages
        assert [m["content"] for m in messages] == ["fine"]
        assert [(d.kind, d.line) for d in session.tree.diagnostics] == [("malformed_json", 3)]


def test_suspect_lines_are_the_lines_holding_a_word_or_a_control_character() -> None:
    """Sparse and dense first letters (the search changes its way past a share of the block) name the
    same lines a plain look at each line names."""
    import random

    from piwork.core.session.line_index import suspect_lines

    rng = random.Random(11)
    parts = [
        b"N",
        b"a",
        b"I",
        b"nfinity",
        b"NaN",
        b"Infinity",
        b"x" * 40,
        b"\t",
        b"\r",
        b"Na",
        b"Infinit",
        b"aN",
    ]
    for _ in range(400):
        weights = [rng.random() for _ in parts]
        lines = [
            b"".join(rng.choices(parts, weights, k=rng.randrange(1, 60))).replace(b"\r", b"r")
            + (b"\r" if rng.random() < 0.2 else b"")
            for _ in range(rng.randrange(1, 80))
        ]
        data = b"\n".join(lines) + b"\n"
        expected = []
        start = 0
        for line in lines:
            body = line[:-1] if line.endswith(b"\r") else line
            if b"NaN" in line or b"Infinity" in line or any(c < 0x20 for c in body):
                expected.append((start, start + len(line)))
            start += len(line) + 1
        assert suspect_lines(data, 0, len(data)) == expected
