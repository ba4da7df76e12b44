"""Context edits (Pi 1.6 ``context_edit`` entries): projection rules and writing them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from piwork.core.session.context import build_session_context
from piwork.core.session.context_edits import ContextEditRejected
from piwork.core.session.store import open_session
from piwork.core.session.timestamps import js_date_ms
from piwork.core.session.tree import EntryNotFound, tree_from_values

from .helpers import HEADER, assistant, stamp, user, write_session


def edit(entry_id: str, parent: str, target: str, replacement: Any, second: int) -> dict[str, Any]:
    return {
        "type": "context_edit",
        "id": entry_id,
        "parentId": parent,
        "timestamp": stamp(second),
        "targetId": target,
        "replacement": replacement,
    }


def tool_turn() -> list[dict[str, Any]]:
    """u1 → a1 (calls read) → r1 (its result) → a2."""
    a1 = assistant("a1", "u1", "reading", 2)
    a1["message"]["content"].append(
        {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "x"}}
    )
    a1["message"]["stopReason"] = "toolUse"
    result = {
        "type": "message",
        "id": "r1",
        "parentId": "a1",
        "timestamp": stamp(3),
        "message": {
            "role": "toolResult",
            "toolCallId": "c1",
            "toolName": "read",
            "content": [{"type": "text", "text": "a very long file"}],
            "isError": False,
            "timestamp": 1733234403000,
        },
    }
    return [user("u1", None, "read x", 1), a1, result, assistant("a2", "r1", "done", 4)]


def texts(messages: list[dict[str, Any]]) -> list[Any]:
    return [(m["role"], m["content"]) for m in messages]


def both_ways(entries: list[dict[str, Any]]) -> list[Any]:
    """The context from the plain-entry rules and from the tree; both must agree."""
    plain = build_session_context(entries)["messages"]
    tree = tree_from_values(entries, HEADER).build_context().messages
    assert plain == tree
    return plain


def test_null_replacement_leaves_the_target_out() -> None:
    entries = [*tool_turn(), edit("e1", "a2", "r1", None, 5)]
    messages = both_ways(entries)
    assert [m["role"] for m in messages] == ["user", "assistant", "assistant"]


def test_string_replacement_becomes_one_text_block_for_tool_results_and_assistants() -> None:
    entries = [
        *tool_turn(),
        edit("e1", "a2", "r1", {"content": "(file shown earlier)"}, 5),
        edit("e2", "e1", "u1", {"content": "read the file x"}, 6),
    ]
    messages = both_ways(entries)
    assert messages[0]["content"] == "read the file x"  # user content stays a string
    assert messages[2]["content"] == [{"type": "text", "text": "(file shown earlier)"}]
    assert messages[2]["toolCallId"] == "c1"  # only the content changes


def test_latest_edit_of_a_target_wins() -> None:
    entries = [
        *tool_turn(),
        edit("e1", "a2", "a2", None, 5),
        edit("e2", "e1", "a2", {"content": [{"type": "text", "text": "shorter"}]}, 6),
    ]
    assert both_ways(entries)[-1]["content"] == [{"type": "text", "text": "shorter"}]


def test_edit_on_another_branch_does_not_apply() -> None:
    entries = [*tool_turn(), edit("e1", "a2", "a2", None, 5), user("u2", "a2", "other branch", 6)]
    assert [m["role"] for m in both_ways(entries)] == ["user", "assistant", "toolResult", "assistant", "user"]


def test_edit_before_the_kept_range_of_a_compaction_is_dropped_with_it() -> None:
    compaction = {
        "type": "compaction",
        "id": "k1",
        "parentId": "e1",
        "timestamp": stamp(6),
        "summary": "S",
        "firstKeptEntryId": "a2",
        "tokensBefore": 10,
    }
    entries = [*tool_turn(), edit("e1", "a2", "a2", None, 5), compaction]
    # the edit lies after a2 on the path, so it is kept and still hides a2
    assert [m["role"] for m in both_ways(entries)] == ["compactionSummary"]
    compaction["firstKeptEntryId"] = "e1"
    assert [m["role"] for m in both_ways(entries)] == ["compactionSummary"]


def test_a_file_without_edits_opens_with_the_same_context() -> None:
    entries = tool_turn()
    assert texts(both_ways(entries)) == [
        ("user", "read x"),
        ("assistant", entries[1]["message"]["content"]),
        ("toolResult", [{"type": "text", "text": "a very long file"}]),
        ("assistant", [{"type": "text", "text": "done"}]),
    ]


def test_writing_edits_in_pi_format_and_restoring(tmp_path: Path) -> None:
    path = write_session(tmp_path / "s.jsonl", tool_turn())
    store = open_session(path)
    tree = store.tree
    first = tree.append_context_edit("r1", "(omitted)")
    tree.append_context_edit("a1", None)
    [*_, line_a, line_b] = path.read_text().splitlines()
    assert '"targetId":"r1","replacement":{"content":[{"type":"text","text":"(omitted)"}]}' in line_a
    assert line_a.startswith(f'{{"type":"context_edit","id":"{first}","parentId":"a2","timestamp":')
    assert line_b.endswith('"targetId":"a1","replacement":null}')
    assert [(e.target_id, e.leaves_out) for e in tree.context_edits()] == [("a1", True), ("r1", False)]
    assert [m["role"] for m in tree.build_context().messages] == ["user", "toolResult", "assistant"]

    tree.restore_context_edit("a1")
    assert [e.target_id for e in tree.context_edits()] == ["r1"]
    assert [m["role"] for m in tree.build_context().messages] == [
        "user",
        "assistant",
        "toolResult",
        "assistant",
    ]
    store.close()
    reopened = open_session(path)
    assert [e.target_id for e in reopened.tree.context_edits()] == ["r1"]
    reopened.close()


def test_edit_targets_are_checked() -> None:
    tree = tree_from_values([*tool_turn(), user("u2", "a1", "sibling", 9)], HEADER)
    with pytest.raises(EntryNotFound):
        tree.append_context_edit("nope", None)
    with pytest.raises(ContextEditRejected, match="not on the active branch"):
        tree.append_context_edit("a2", None)
    with pytest.raises(ContextEditRejected, match="no context edit to restore"):
        tree.restore_context_edit("u1")
    with pytest.raises(ContextEditRejected, match="text or a list"):
        tree.append_context_edit("u1", 42)


def _fixture_contexts() -> list[Any]:
    import json

    path = Path(__file__).parents[2] / "conformance" / "pi16_entries.json"
    cases = json.loads(path.read_text(encoding="utf-8"))["cases"]
    return [pytest.param(c, id=c["id"]) for c in cases if c["op"] == "session_context"]


@pytest.mark.parametrize("case", _fixture_contexts())
def test_the_tree_builds_the_reference_context(case: dict[str, Any]) -> None:
    """The session tree (records, bodies read in batches) gives the context Pi 1.6 gives."""
    tree = tree_from_values(case["args"]["entries"], HEADER)
    context = tree.build_context(honour_retained_tail=False)
    assert context.to_json() == case["expect"]


def test_a_compaction_carries_the_recorded_system_prompt() -> None:
    system = {"role": "system", "content": "", "sections": {"rules": "Be brief."}, "timestamp": 5}
    first = {"type": "message", "id": "s1", "parentId": None, "timestamp": stamp(1), "message": system}
    tree = tree_from_values([first, {**tool_turn()[0], "parentId": "s1"}, *tool_turn()[1:]], HEADER)
    entry_id = tree.append_compaction("S", "a2", 10)
    compaction = tree.entry(entry_id)
    assert compaction["systemMessage"]["sections"] == {"rules": "Be brief."}
    assert compaction["systemMessage"]["timestamp"] == int(js_date_ms(compaction["timestamp"]))
    # the system message before the kept part lives on through the compaction
    assert [m["role"] for m in tree.build_context().messages] == ["system", "compactionSummary", "assistant"]
    plain = tree_from_values([first, {**tool_turn()[0], "parentId": "s1"}, *tool_turn()[1:]], HEADER)
    no_system = tree_from_values(tool_turn(), HEADER)
    assert "systemMessage" not in no_system.entry(no_system.append_compaction("S", None, 1))
    assert no_system.entry(no_system.leaf_id)["firstKeptEntryId"] == no_system.leaf_id  # its own id, as Pi
    assert plain.build_context().messages[0]["role"] == "system"
