"""Reading damaged files: every problem is a diagnostic with its line, the rest loads, nothing is written."""

from __future__ import annotations

from pathlib import Path

import pytest

from piwork.core.session.reader import read_session_file
from piwork.core.session.store import NotASessionFile, UnsupportedSessionFormat, open_session

from .helpers import HEADER, assistant, conversation, serialize, user, write_session


def _kinds(path: Path) -> list[tuple[str, int]]:
    return [(d.kind, d.line) for d in read_session_file(path).diagnostics]


def test_garbage_line_in_the_middle_is_skipped_and_reported(tmp_path: Path) -> None:
    entries = conversation(2)
    path = tmp_path / "s.jsonl"
    lines = [serialize(HEADER), serialize(entries[0]), "{garbage\n", *map(serialize, entries[1:])]
    path.write_text("".join(lines), encoding="utf-8")
    before = path.read_bytes()
    loaded = read_session_file(path)
    assert [r.id for r in loaded.records] == ["u0", "a0", "u1", "a1"]
    assert [(d.kind, d.line, d.byte_offset) for d in loaded.diagnostics] == [
        ("malformed_json", 3, len((lines[0] + lines[1]).encode()))
    ]
    with open_session(path, writable=False) as session:
        assert session.tree.leaf_id == "a1"
    assert path.read_bytes() == before


def test_truncated_last_line_is_a_torn_tail(tmp_path: Path) -> None:
    path = write_session(tmp_path / "s.jsonl", conversation(1))
    with open(path, "a", encoding="utf-8") as out:
        out.write(serialize(user("u9", "a0", "cut here"))[:40])
    loaded = read_session_file(path)
    assert loaded.torn and [(d.kind, d.line) for d in loaded.diagnostics] == [("torn_tail", 4)]
    assert [r.id for r in loaded.records] == ["u0", "a0"]


def test_invalid_utf8_is_replaced_not_fatal(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    entry = serialize(user("u0", None, "caf\u00e9")).encode().replace("é".encode(), b"\xff\xfe")
    path.write_bytes(serialize(HEADER).encode() + entry)
    with open_session(path, writable=False) as session:
        message = session.tree.entry("u0")["message"]
        assert message["content"] == "caf\ufffd\ufffd"
        assert session.tree.diagnostics == []


def test_empty_and_header_only_files(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    assert read_session_file(empty).status == "empty"
    header_only = write_session(tmp_path / "h.jsonl", [])
    loaded = read_session_file(header_only)
    assert loaded.status == "ok" and loaded.records == [] and loaded.diagnostics == []
    with open_session(header_only, writable=False) as session:
        assert session.tree.leaf_id is None
        assert session.tree.build_context().messages == []


def test_blank_file_and_foreign_file_are_not_sessions(tmp_path: Path) -> None:
    blank = tmp_path / "blank.jsonl"
    blank.write_text("   \n", encoding="utf-8")
    foreign = tmp_path / "f.jsonl"
    foreign.write_text('{"type":"message","id":"a"}\n' + serialize(HEADER), encoding="utf-8")
    for path in (blank, foreign):
        before = path.read_bytes()
        with pytest.raises(NotASessionFile, match="not a valid pi session"):
            open_session(path)
        assert path.read_bytes() == before
    assert _kinds(foreign) == [("bad_header", 1)]


def test_two_entry_cycle_is_reported_and_never_looped(tmp_path: Path) -> None:
    path = write_session(
        tmp_path / "s.jsonl",
        [user("x", "y", "one", 1), assistant("y", "x", "two", 2), user("z", "y", "three", 3)],
    )
    with open_session(path, writable=False) as session:
        tree = session.tree
        kinds = [d.kind for d in tree.diagnostics]
        assert kinds.count("cycle") == 1
        assert [r.id for r in tree.path("z")] == ["x", "y", "z"]
        assert tree.build_context("z").entry_ids == ["x", "y", "z"]
        assert tree.tree() == []  # no root: every entry hangs under another


def test_a_cycle_closed_by_a_later_duplicate_id_is_reported(tmp_path: Path) -> None:
    # "c" first follows the first "b"; the second "b" (the one that wins) hangs under "c".
    entries = [user("a", None, "1", 1), assistant("b", "a", "2", 2), user("c", "b", "3", 3)]
    entries.append(assistant("b", "c", "4", 4))
    path = write_session(tmp_path / "s.jsonl", entries)
    with open_session(path, writable=False) as session:
        kinds = sorted((d.kind, d.line) for d in session.tree.diagnostics)
        assert ("duplicate_id", 5) in kinds
        assert [kind for kind, _ in kinds].count("cycle") == 1


def test_missing_ids_duplicates_and_dangling_parents(tmp_path: Path) -> None:
    no_id = {"type": "custom", "customType": "n", "parentId": None, "timestamp": "2024-12-03T14:00:00.000Z"}
    path = write_session(
        tmp_path / "s.jsonl",
        [user("a", None, "one"), user("a", None, "again"), user("b", "gone", "orphan"), no_id],
    )
    loaded = read_session_file(path)
    assert loaded.diagnostics == []
    with open_session(path, writable=False) as session:
        kinds = sorted((d.kind, d.line) for d in session.tree.diagnostics)
        assert kinds == [("dangling_parent", 4), ("duplicate_id", 3), ("missing_id", 5)]
        assert session.tree.entry("a")["message"]["content"] == "again"
        assert [r.id for r in session.tree.roots()][:3] == ["a", "a", "b"]


def test_non_object_lines_are_malformed(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text(serialize(HEADER) + "42\nnull\n" + serialize(user("u", None, "x")), encoding="utf-8")
    assert _kinds(path) == [("malformed_json", 2), ("malformed_json", 3)]


def test_v4_harness_file_is_unsupported_and_untouched(tmp_path: Path) -> None:
    path = tmp_path / "v4.jsonl"
    path.write_text('{"v":4,"kind":"header","id":"x"}\n{"v":4,"kind":"entry"}\n', encoding="utf-8")
    assert read_session_file(path).status == "unsupported"
    with pytest.raises(UnsupportedSessionFormat):
        open_session(path)
    assert path.read_text(encoding="utf-8").startswith('{"v":4')


def test_crlf_lines_and_u2028_inside_strings(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    text = serialize(HEADER).replace("\n", "\r\n") + serialize(user("u", None, "a\u2028b")).replace(
        "\n", "\r\n"
    )
    path.write_text(text, encoding="utf-8", newline="")
    with open_session(path, writable=False) as session:
        assert session.tree.entry("u")["message"]["content"] == "a\u2028b"
        assert session.tree.diagnostics == []
