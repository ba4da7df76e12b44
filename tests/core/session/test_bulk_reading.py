"""Reading in blocks and windows gives what a line-by-line reading gives, on awkward files too."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from piwork.core.session import body_source, reader
from piwork.core.session.body_source import FileBodySource
from piwork.core.session.context import build_session_context
from piwork.core.session.format import json_loads, json_loads_bytes
from piwork.core.session.reader import read_session_file
from piwork.core.session.records import EntryRecord
from piwork.core.session.store import open_session

from .helpers import HEADER, assistant, serialize, user


@pytest.mark.parametrize(
    "raw",
    [
        b'{"a":"\\ud800"}',  # a lone surrogate: kept as Python keeps it
        b'{"a":"caf\xff"}',  # invalid UTF-8: U+FFFD
        b"[1e400, -1e400]",  # overflow: infinities, like JSON.parse
        b'{"big":123456789012345678,"f":0.1,"neg":-0.0,"e":1E-7}',
        b' {"a": [1, 2.5, "x"]} \r',
        b'{"a":1,"a":2}',
    ],
)
def test_bytes_parser_matches_the_standard_one(raw: bytes) -> None:
    expected = json_loads(raw.decode("utf-8", "replace"))
    got = json_loads_bytes(raw)
    assert json.dumps(got) == json.dumps(expected)
    assert [type(v) for v in _leaves(got)] == [type(v) for v in _leaves(expected)]


@pytest.mark.parametrize("raw", [b"NaN", b"[Infinity]", b"\xef\xbb\xbf{}", b"{", b"{} x", b"", b"[1,]"])
def test_bytes_parser_rejects_what_json_parse_rejects(raw: bytes) -> None:
    with pytest.raises(ValueError):
        json_loads_bytes(raw)


def _leaves(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return [leaf for v in value.values() for leaf in _leaves(v)]
    if isinstance(value, list):
        return [leaf for v in value for leaf in _leaves(v)]
    return [value]


def _awkward_file(path: Path) -> list[dict[str, Any]]:
    """Message lines in Pi's layout mixed with every kind of line the block scanner hands on."""
    entries: list[dict[str, Any]] = [user("u0", None, "hi", 1), assistant("a0", "u0", "x" * 300, 2)]
    lines = [serialize(HEADER), serialize(entries[0]), "\n", serialize(entries[1]).replace("\n", "\r\n")]
    spaced = json.dumps(user("u1", "a0", "spaced layout", 3)) + "\n"
    lines += [spaced, "{garbage}\n", "  \n", "42\n"]
    entries.append(json.loads(spaced))
    nested = assistant("a1", "u1", "", 4, stopReason="toolUse")
    nested["message"]["content"].append(
        {"type": "toolCall", "id": "c", "name": "t", "arguments": {"inner": user("zz", None, "nested")}}
    )
    label = {"type": "label", "id": "l1", "parentId": "a1", "timestamp": "2024-12-03T14:00:05.000Z"}
    label["targetId"] = "u0"
    label["label"] = "start"
    entries += [nested, label]
    lines += [serialize(nested), serialize(label)]
    for n in range(40):
        entry = user(f"m{n}", entries[-1]["id"], f"line {n} " + "é😀" * (n * 7), 10 + n)
        entries.append(entry)
        lines.append(serialize(entry))
    lines.append(serialize(user("torn", "m39", "cut"))[:30])
    path.write_text("".join(lines), encoding="utf-8")
    return entries


def _facts(path: Path) -> tuple[Any, ...]:
    loaded = read_session_file(path)
    records = [(r.id, r.parent_id, r.type, r.role, r.line, r.offset, r.length) for r in loaded.records]
    metas = [dict(r.meta) for r in loaded.records if r.role == "assistant"]
    return records, metas, [d.to_json() for d in loaded.diagnostics], loaded.torn, loaded.header


@pytest.mark.parametrize("chunk", [1, 7, 64, 333, 4096])
def test_small_read_blocks_index_like_one_big_block(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int
) -> None:
    path = tmp_path / "s.jsonl"
    _awkward_file(path)
    whole = _facts(path)
    monkeypatch.setattr(reader, "READ_CHUNK", chunk)
    assert _facts(path) == whole
    records, metas, diagnostics, torn, _ = whole
    assert [r[0] for r in records][:5] == ["u0", "a0", "u1", "a1", "l1"]
    assert metas == [{"hasText": True, "stopReason": "stop"}, {"hasText": False, "stopReason": "toolUse"}]
    assert [(d["kind"], d["line"]) for d in diagnostics] == [
        ("malformed_json", 6),
        ("malformed_json", 8),
        ("torn_tail", 51),
    ]
    assert torn


def _bodies_by_line(path: Path, records: list[EntryRecord]) -> list[Any]:
    data = path.read_bytes()
    return [json_loads(data[r.offset : r.offset + r.length].decode("utf-8", "replace")) for r in records]


@pytest.mark.parametrize("window", [1, 200, 5000, 1 << 22])
def test_windows_load_the_same_bodies_in_any_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, window: int
) -> None:
    path = tmp_path / "s.jsonl"
    _awkward_file(path)
    monkeypatch.setattr(body_source, "WINDOW", window)
    records = read_session_file(path).records
    wanted = records[::-1][:20] + records[:7] + records[30:45:3]  # out of order, gaps, runs
    source = FileBodySource(path)
    try:
        assert source.load_many(wanted) == _bodies_by_line(path, wanted)
    finally:
        source.close()


def test_a_bad_line_inside_a_run_is_reported_alone(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    lines = [serialize(HEADER)]
    parent = None
    for n in range(6):
        lines.append(serialize(user(f"u{n}", parent, f"text {n}", n + 1)))
        parent = f"u{n}"
    lines[3] = lines[3].replace('"text 2"', '"text 2}').replace("}}\n", "}}}\n")
    path.write_text("".join(lines), encoding="utf-8")
    with open_session(path, writable=False) as session:
        messages = session.tree.build_context("u5").messages
        assert [m["content"] for m in messages] == ["text 0", "text 1", "text 3", "text 4", "text 5"]
        assert [(d.kind, d.line) for d in session.tree.diagnostics] == [("malformed_json", 4)]


def test_lines_that_parse_only_together_are_not_taken_for_entries(tmp_path: Path) -> None:
    """Two broken lines whose halves form valid JSON once joined must not pass as entries."""
    path = tmp_path / "s.jsonl"
    first = serialize(user("u0", None, "a", 1)).rstrip("\n")
    opened = first[:-2] + ',"x":[{}'  # ends with "}" but is cut inside a list
    closing = serialize(user("u1", "u0", "b", 2)).rstrip("\n") + "]}}"
    path.write_text(serialize(HEADER) + opened + "\n" + closing + "\n", encoding="utf-8")
    with open_session(path, writable=False) as session:
        assert session.tree.build_context("u1").messages == []
        assert sorted(d.kind for d in session.tree.diagnostics) == ["malformed_json", "malformed_json"]


def test_a_file_that_shrank_after_indexing_reads_line_by_line(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    entries = [user("u0", None, "a", 1), user("u1", "u0", "b", 2)]
    path.write_text("".join(map(serialize, [HEADER, *entries])), encoding="utf-8")
    records = read_session_file(path).records
    path.write_text(serialize(HEADER) + serialize(entries[0]), encoding="utf-8")
    source = FileBodySource(path)
    failed: list[str] = []
    source.on_error = lambda record: failed.append(str(record.id))
    try:
        assert source.load_many(records) == [entries[0], None]
    finally:
        source.close()
    assert failed == ["u1"]


def test_overflowing_numbers_still_load(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    entry = assistant("a0", None, "x", 1)
    line = serialize(entry).replace('"input":1,', '"input":1e400,')
    path.write_text(serialize(HEADER) + line, encoding="utf-8")
    with open_session(path, writable=False) as session:
        (message,) = session.tree.build_context("a0").messages
        assert math.isinf(message["usage"]["input"])


FIXTURES = Path(__file__).resolve().parents[2] / "conformance" / "session.json"


def test_contexts_read_from_files_match_the_projection_of_plain_entries(tmp_path: Path) -> None:
    """Every session_context fixture, written as a file and read back through the byte index."""
    checked = 0
    for case in json.loads(FIXTURES.read_text(encoding="utf-8"))["cases"]:
        if case["op"] != "session_context" or "error" in case["expect"]:
            continue
        entries = case["args"]["entries"]
        if not entries:
            continue
        if not all(isinstance(e, dict) and isinstance(e.get("id"), str) for e in entries):
            continue
        path = tmp_path / f"{checked}.jsonl"
        path.write_text("".join(map(serialize, [HEADER, *entries])), encoding="utf-8")
        leaf = case["args"].get("leafId", entries[-1]["id"])
        with open_session(path, writable=False) as session:
            if not isinstance(leaf, str) or not session.tree.has(leaf):
                leaf = entries[-1]["id"]
            expected = build_session_context(entries, leaf, honour_retained_tail=True)
            assert session.tree.build_context(leaf).to_json() == expected, case["id"]
        checked += 1
    assert checked >= 10


def _streamed(session: Any, leaf: Any) -> tuple[list[Any], list[Any]]:
    stream = session.tree.stream_context(leaf)
    messages = [m for batch in stream.batches() for m in batch]
    return messages, stream.entry_ids


def test_a_streamed_context_gives_the_built_context_batch_by_batch(tmp_path: Path) -> None:
    """Every session_context fixture and a path of many batches with a retained tail: the batches
    together are the built context's messages, in order, from the same entries."""
    cases = [
        c for c in json.loads(FIXTURES.read_text(encoding="utf-8"))["cases"] if c["op"] == "session_context"
    ]
    compaction = {"type": "compaction", "id": "c1", "parentId": "a0", "timestamp": "2024-12-03T14:01:00.000Z"}
    compaction |= {"summary": "S", "firstKeptEntryId": "u0", "tokensBefore": 10}
    compaction["retainedTail"] = [{"role": "user", "content": "kept", "timestamp": 5}]
    long = [user("u0", None, "q", 1), assistant("a0", "u0", "a", 2), compaction]
    for n in range(1, 700):
        long.append(
            user(f"u{n}", long[-1]["id"], f"q{n}", 3) if n % 2 else assistant(f"a{n}", long[-1]["id"], "a", 3)
        )
    cases.append({"args": {"entries": long}})
    checked = 0
    for case in cases:
        entries = case["args"]["entries"]
        if not entries or not all(isinstance(e, dict) and isinstance(e.get("id"), str) for e in entries):
            continue
        path = tmp_path / f"{checked}.jsonl"
        path.write_text("".join(map(serialize, [HEADER, *entries])), encoding="utf-8")
        with open_session(path, writable=False) as session:
            for leaf in (session.tree.leaf_id, entries[len(entries) // 2]["id"], None):
                built = session.tree.build_context(leaf)
                assert _streamed(session, leaf) == (built.messages, built.entry_ids)
        checked += 1
    assert checked >= 10


def test_retained_tail_and_appended_entries_from_a_file(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    compaction = {"type": "compaction", "id": "c1", "parentId": "a0", "timestamp": "2024-12-03T14:01:00.000Z"}
    compaction |= {"summary": "S", "firstKeptEntryId": "u0", "tokensBefore": 10}
    compaction["retainedTail"] = [{"role": "user", "content": "kept", "timestamp": 5}]
    entries = [
        user("u0", None, "q", 1),
        assistant("a0", "u0", "a", 2),
        compaction,
        user("u1", "c1", "after", 3),
    ]
    path.write_text("".join(map(serialize, [HEADER, *entries])), encoding="utf-8")
    with open_session(path) as session:
        session.tree.append_message({"role": "user", "content": "new", "timestamp": 9})
        messages = session.tree.build_context().messages
        assert [m.get("content", m.get("summary")) for m in messages] == ["S", "kept", "after", "new"]


def test_a_line_nested_too_deeply_is_reported_not_fatal(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    deep = (
        '{"type":"custom","id":"d","parentId":"u0","timestamp":"t","data":'
        + "[" * 100_000
        + "]" * 100_000
        + "}\n"
    )
    path.write_text(serialize(HEADER) + serialize(user("u0", None, "a", 1)) + deep, encoding="utf-8")
    loaded = read_session_file(path)
    assert [r.id for r in loaded.records] == ["u0"]
    assert [(d.kind, d.line) for d in loaded.diagnostics] == [("malformed_json", 3)]


def test_after_a_compaction_only_the_kept_tail_is_read(tmp_path: Path) -> None:
    """Lines before the kept entries are never parsed: damage there goes unnoticed by the context."""
    path = tmp_path / "s.jsonl"
    lines = [serialize(HEADER)]
    parent = None
    for n in range(6):
        line = serialize(user(f"u{n}", parent, f"old {n}", n + 1))
        lines.append(line.replace(f'"old {n}"', '"old }') if n < 3 else line)  # broken, looks whole
        parent = f"u{n}"
    compaction = {"type": "compaction", "id": "c", "parentId": "u5", "timestamp": "2024-12-03T14:01:00.000Z"}
    compaction |= {"summary": "S", "firstKeptEntryId": "u4", "tokensBefore": 1}
    lines += [serialize(compaction), serialize(user("u9", "c", "new", 70))]
    path.write_text("".join(lines), encoding="utf-8")
    with open_session(path, writable=False) as session:
        messages = session.tree.build_context().messages
        assert [m.get("content", m.get("summary")) for m in messages] == ["S", "old 4", "old 5", "new"]
        assert session.tree.diagnostics == []
        session.tree.build_context("u2")  # the old branch itself: now its lines are read
        assert [(d.kind, d.line) for d in session.tree.diagnostics] == [
            ("malformed_json", 2),
            ("malformed_json", 3),
            ("malformed_json", 4),
        ]
