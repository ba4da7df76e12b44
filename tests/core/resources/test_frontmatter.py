from __future__ import annotations

import math

import pytest

from piwork.core.resources.frontmatter import FrontmatterError, parse_frontmatter, split_frontmatter


def test_core_schema_typing() -> None:
    fm = parse_frontmatter("---\na: yes\nb: True\nc: 0o17\nd: 1_000\ne: .inf\nf: 2024-01-01\ng: ~\n---\nbody")
    data = fm.data
    assert data["a"] == "yes" and data["b"] is True and data["c"] == 15 and data["d"] == "1_000"
    assert math.isinf(data["e"]) and data["f"] == "2024-01-01" and data["g"] is None
    assert fm.body == "body"


def test_delimiter_quirks_are_kept() -> None:
    assert split_frontmatter("---\nname: x\n----\nbody") == ("name: x", "-\nbody")
    assert parse_frontmatter("---\nname: x\n").data == {}
    assert parse_frontmatter(" ---\nname: x\n---\n").body == " ---\nname: x\n---\n"
    assert parse_frontmatter("\ufeff---\r\nname: crlf\r\n---\r\nbody\r\n").data == {"name": "crlf"}


@pytest.mark.parametrize(
    "text",
    [
        "---\na: 1\na: 2\n---\n",
        "---\nkey:\n\tbad: tab\n---\n",
        "---\nplain: a: b\n---\n",
        "---\nx: *nope\n---\n",
    ],
)
def test_invalid_yaml_is_rejected_with_a_message(text: str) -> None:
    with pytest.raises(FrontmatterError, match="invalid YAML frontmatter"):
        parse_frontmatter(text)


def test_non_mapping_documents_and_keys() -> None:
    assert parse_frontmatter("---\n- a\n- b\n---\n").data == ["a", "b"]
    assert parse_frontmatter("---\nnull\n---\n").data == {}
    data = parse_frontmatter("---\n? [a, b]\n: v\n1: x\n<<: m\n---\n").data
    assert data == {"[ a, b ]": "v", "1": "x", "<<": "m"}
    assert parse_frontmatter("---\nn: 12345678901234567890\n---\n").data["n"] == 12345678901234567890.0


def test_yaml_1_2_line_separators_are_ordinary_characters() -> None:
    data = parse_frontmatter('---\nd: "a \u2028 b"\n---\n').data
    assert data == {"d": "a \u2028 b"}


def test_block_scalar_at_document_end_keeps_its_newline() -> None:
    assert parse_frontmatter("---\nd: |\n  one\n  two\n---\n").data == {"d": "one\ntwo\n"}


FAST_PATH_SAMPLES = [
    "name: x\ndescription: plain text here",
    "name: \"quoted\"\ndescription: 'single'\nflag: true\nn: 0x1F\nempty:",
    "a: 1.50\nb: -3\nc: +.5e3\nd: ~\ne: NULL\nf: yes\ng: 2024-01-01",
    "x: a#b\ny: trailing spaces   \nz: {not flow",
    "1: one\ntrue: t\nnull: n",
    "k: a: b",
    "k: x # comment",
    "k: 'it''s'",
    'k: "esc \\t"',
    "k: - item",
    "k: v\nk: w",
    "k: \u00a0nbsp",
    "k:\tv",
]


def test_fast_path_agrees_with_the_full_parser() -> None:
    import json
    from pathlib import Path

    from piwork.core.resources.frontmatter import (
        FrontmatterError,
        parse_simple_mapping,
        parse_yaml_full,
        split_frontmatter,
    )

    fixture = Path(__file__).parents[2] / "conformance" / "frontmatter.json"
    sources = list(FAST_PATH_SAMPLES)
    for case in json.loads(fixture.read_text(encoding="utf-8"))["cases"]:
        source, _ = split_frontmatter(case["args"]["text"])
        if source:
            sources.append(source)
    taken = 0
    for source in sources:
        fast = parse_simple_mapping(source)
        if fast is None:
            continue
        taken += 1
        try:
            full = parse_yaml_full(source)
        except FrontmatterError:
            raise AssertionError(f"fast path accepted invalid YAML: {source!r}") from None
        assert json.dumps(fast, sort_keys=True) == json.dumps(full or {}, sort_keys=True), source
    assert taken >= 8
