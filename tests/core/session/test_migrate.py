"""Migration v1 → v2 → v3, one step at a time, with injectable ids."""

from __future__ import annotations

from piwork.core.ids import SequentialIds
from piwork.core.jscompat import js_json_stringify
from piwork.core.session.migrate import migrate_to_current, migrate_v1_to_v2, migrate_v2_to_v3, unique_id


def test_v1_becomes_a_linear_chain_with_compaction_ids() -> None:
    values = [
        {"type": "session", "id": "s"},
        {"type": "message", "message": {"role": "user", "content": "a"}},
        {"type": "compaction", "summary": "s", "firstKeptEntryIndex": 1, "tokensBefore": 5},
        {"type": "compaction", "summary": "t", "firstKeptEntryIndex": 9},
    ]
    migrate_v1_to_v2(values, SequentialIds())
    assert [v.get("id") for v in values] == ["s", "$ID:0001", "$ID:0002", "$ID:0003"]
    assert [v.get("parentId") for v in values[1:]] == [None, "$ID:0001", "$ID:0002"]
    assert values[2]["firstKeptEntryId"] == "$ID:0001" and "firstKeptEntryIndex" not in values[2]
    assert "firstKeptEntryId" not in values[3] and "firstKeptEntryIndex" not in values[3]
    # new keys go after the existing ones, as JavaScript property order does
    assert js_json_stringify(values[2]).startswith('{"type":"compaction","summary":"s","tokensBefore":5,"id"')
    assert values[0]["version"] == 2


def test_forward_index_takes_the_not_yet_replaced_id() -> None:
    values = [
        {"type": "session", "version": 1, "id": "s"},
        {"type": "compaction", "summary": "s", "firstKeptEntryIndex": 2},
        {"type": "message", "id": "orig", "message": {"role": "user", "content": "later"}},
    ]
    migrate_to_current(values, SequentialIds())
    assert values[1]["firstKeptEntryId"] == "orig"
    assert values[2]["id"] == "$ID:0002"


def test_v2_to_v3_renames_hook_messages() -> None:
    values = [
        {"type": "session", "version": 2, "id": "s"},
        {"type": "message", "id": "a", "parentId": None, "message": {"role": "hookMessage", "content": "c"}},
    ]
    migrate_v2_to_v3(values)
    assert values[0]["version"] == 3 and values[1]["message"]["role"] == "custom"


def test_current_files_are_left_alone() -> None:
    values = [
        {"type": "session", "version": 3, "id": "s"},
        {"type": "message", "message": {"role": "hookMessage"}},
    ]
    assert migrate_to_current(values) is False
    assert values[1]["message"]["role"] == "hookMessage"


def test_id_collisions_check_every_generated_id() -> None:
    repeats = iter(["aaaa", "aaaa", "bbbb"])
    taken: set[str] = {"aaaa"}
    assert unique_id(taken.__contains__, lambda: next(repeats)) == "bbbb"
    always_same = unique_id(lambda _: True, lambda: "x")
    assert len(always_same) == 36  # a full UUID after 100 collisions
