"""Tree navigation, labels, names, change events and context building on the tree."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from piwork.core.ids import SequentialIds
from piwork.core.jscompat import UNDEFINED
from piwork.core.messages import (
    BRANCH_SUMMARY_PREFIX,
    COMPACTION_SUMMARY_PREFIX,
    bash_execution_to_text,
    convert_to_llm,
)
from piwork.core.session.context import build_session_context
from piwork.core.session.store import in_memory_session, open_session
from piwork.core.session.tree import EntryNotFound, SessionTree, TreeEvent, tree_from_values

from .helpers import assistant, conversation, user, write_session

FIXTURES = Path(__file__).resolve().parents[2] / "conformance" / "session.json"


def _tree() -> SessionTree:
    return in_memory_session("/p", new_id=SequentialIds()).tree


def test_branch_reset_and_children() -> None:
    tree = tree_from_values(conversation(2))
    tree.branch("a0")
    assert tree.leaf_id == "a0"
    tree.append_message({"role": "user", "content": "other way", "timestamp": 1})
    new = tree.leaf_id
    assert [r.id for r in tree.children("a0")] == ["u1", new]
    assert [r.id for r in tree.path(new)] == ["u0", "a0", new]
    assert tree.path("nope") == []
    tree.reset_leaf()
    tree.append_message({"role": "user", "content": "fresh root", "timestamp": 2})
    assert [r.id for r in tree.roots()] == ["u0", tree.leaf_id]
    with pytest.raises(EntryNotFound, match="Entry nope not found"):
        tree.branch("nope")


def test_labels_are_entries_that_become_the_leaf() -> None:
    tree = tree_from_values(conversation(1))
    label_id = tree.set_label("u0", "checkpoint")
    assert tree.leaf_id == label_id and tree.label("u0") == "checkpoint"
    assert tree.label_timestamp("u0") == tree.entry(label_id)["timestamp"]
    tree.set_label("u0", "")
    assert tree.label("u0") is None and tree.labels() == {}
    with pytest.raises(EntryNotFound):
        tree.set_label("missing", "x")


def test_session_name_is_sanitized_and_latest_wins() -> None:
    tree = _tree()
    assert tree.name is None
    tree.set_name("  first\r\n\nline  ")
    assert tree.records[-1].body["name"] == "first line"
    tree.reset_leaf()
    tree.set_name("second")
    assert tree.name == "second"
    tree.set_name("   ")
    assert tree.name is None


def test_tree_children_sorted_by_time_and_orphans_are_roots() -> None:
    entries = [
        user("r", None, "root", 0),
        user("late", "r", "late", 9),
        user("early", "r", "early", 1),
        user("same", "r", "same time as early", 1),
        user("orphan", "ghost", "lost", 2),
    ]
    tree = tree_from_values(entries)
    nodes = tree.tree()
    assert [n.record.id for n in nodes] == ["r", "orphan"]
    assert [c.record.id for c in nodes[0].children] == ["early", "same", "late"]
    assert [r.id for r in tree.children("r")] == ["late", "early", "same"]  # file order


def test_subscribe_reports_changes_until_unsubscribed() -> None:
    tree = _tree()
    events: list[TreeEvent] = []
    unsubscribe = tree.subscribe(events.append)
    first = tree.append_message({"role": "user", "content": "hi", "timestamp": 1})
    tree.set_label(first, "x")
    tree.branch(first)
    unsubscribe()
    tree.reset_leaf()
    assert [(e.kind, e.entry_id) for e in events] == [
        ("append", first),
        ("append", "$ID:0002"),
        ("label", first),
        ("leaf", first),
    ]


def test_summary_is_cheap_and_lazy(tmp_path: Path) -> None:
    path = write_session(tmp_path / "s.jsonl", conversation(1))
    with open_session(path, writable=False) as session:
        record = session.tree.record("a0")
        assert record is not None and record.body is None  # indexed from its bytes, body not kept
        assert record.meta == {"stopReason": "stop", "hasText": True}
        summary = session.tree.summary(record)
        assert (summary.type, summary.role, summary.preview, summary.is_leaf) == (
            "message",
            "assistant",
            "answer 0",
            True,
        )


def test_build_context_matches_the_pure_projection_on_every_fixture() -> None:
    cases = json.loads(FIXTURES.read_text(encoding="utf-8"))["cases"]
    checked = 0
    for case in cases:
        if case["op"] != "session_context" or "error" in case["expect"]:
            continue
        entries = case["args"]["entries"]
        leaf = case["args"].get("leafId", UNDEFINED)
        if any("retainedTail" in e for e in entries if isinstance(e, dict)):
            continue
        tree = tree_from_values(entries)
        if leaf is UNDEFINED or leaf == "" or not tree.has(leaf):
            leaf = entries[-1]["id"] if entries else None
        expected = build_session_context(entries, case["args"].get("leafId", UNDEFINED))
        assert tree.build_context(leaf).to_json() == expected, case["id"]
        checked += 1
    assert checked >= 10


def test_retained_tail_replaces_the_kept_entries() -> None:
    entries = conversation(2)
    compaction = {
        "type": "compaction",
        "id": "c1",
        "parentId": "a1",
        "timestamp": "2024-12-03T14:01:00.000Z",
        "summary": "S",
        "firstKeptEntryId": "u1",
        "tokensBefore": 10,
        "retainedTail": [{"role": "user", "content": "kept by the compactor", "timestamp": 5}],
    }
    entries += [compaction, user("u9", "c1", "after", 70)]
    tree = tree_from_values(entries)
    messages = tree.build_context().messages
    assert [m.get("content", m.get("summary")) for m in messages] == ["S", "kept by the compactor", "after"]
    pi_view = tree.build_context(honour_retained_tail=False).messages
    assert [m.get("content", m.get("summary")) for m in pi_view] == [
        "S",
        "question 1",
        [{"type": "text", "text": "answer 1"}],
        "after",
    ]


def test_model_and_thinking_level_come_from_the_whole_path() -> None:
    tree = _tree()
    tree.append_thinking_level_change("high")
    tree.append_model_change("openai", "gpt-4o")
    tree.append_message(assistant("x", None, "hi", provider="anthropic", model="claude")["message"])
    context = tree.build_context()
    assert context.thinking_level == "high"
    assert context.model == {"provider": "anthropic", "modelId": "claude"}
    assert tree.build_context(None).messages == []


def test_convert_to_llm_wraps_agent_roles() -> None:
    bash = {
        "role": "bashExecution",
        "command": "make",
        "output": "err",
        "exitCode": 2,
        "cancelled": False,
        "truncated": True,
        "fullOutputPath": "/tmp/o.log",
        "timestamp": 1,
    }
    messages = [
        {"role": "user", "content": "u", "timestamp": 1},
        bash,
        {**bash, "excludeFromContext": True},
        {"role": "custom", "customType": "c", "content": "text", "display": True, "timestamp": 2},
        {"role": "branchSummary", "summary": "B", "fromId": "f", "timestamp": 3},
        {"role": "compactionSummary", "summary": "C", "tokensBefore": 9, "timestamp": 4},
        {"role": "mystery", "timestamp": 5},
    ]
    out = convert_to_llm(messages)
    assert [m["role"] for m in out] == ["user"] * 5
    assert out[1]["content"][0]["text"] == bash_execution_to_text(bash)
    assert bash_execution_to_text(bash) == (
        "Ran `make`\n```\nerr\n```\n\nCommand exited with code 2\n\n[Output truncated. Full output: /tmp/o.log]"
    )
    assert out[2]["content"] == [{"type": "text", "text": "text"}]
    assert out[3]["content"][0]["text"] == BRANCH_SUMMARY_PREFIX + "B</summary>"
    assert out[4]["content"][0]["text"] == COMPACTION_SUMMARY_PREFIX + "C\n</summary>"


def test_unknown_entry_types_are_kept_verbatim_and_add_nothing(tmp_path: Path) -> None:
    from piwork.core.session.branching import clone_session

    unknown = {
        "type": "active_tools_change",
        "id": "t1",
        "parentId": "a0",
        "timestamp": "2024-12-03T14:00:03.000Z",
        "tools": ["read"],
        "extra": {"1": True},
    }
    entries = [*conversation(1), unknown, user("u1", "t1", "next", 4)]
    path = write_session(tmp_path / "s.jsonl", entries)
    with open_session(path) as session:
        assert session.tree.entry("t1") == unknown
        assert [m["role"] for m in session.tree.build_context().messages] == ["user", "assistant", "user"]
        clone = clone_session(session)
        assert clone.path is not None
        assert '"type":"active_tools_change","id":"t1","parentId":"a0"' in clone.path.read_text(
            encoding="utf-8"
        )
