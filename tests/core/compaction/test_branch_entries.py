from __future__ import annotations

from piwork.core.compaction.branch_entries import collect_branch_entries, prepare_branch_entries
from piwork.core.compaction.tokens import estimate_tokens

from .builders import Chain, assistant, call, result, user


def _tree() -> list[dict]:
    # e1 user, e2 assistant, e3 user (branch A), e4 assistant; e5 user (branch B under e2)
    chain = Chain()
    chain.msg(user("root"))
    chain.msg(assistant("first"))
    chain.msg(user("branch a"))
    chain.msg(assistant("a answer"))
    e5 = chain.msg(user("branch b"))
    e5["parentId"] = "e2"
    return chain.entries


def test_collect_stops_at_the_common_ancestor() -> None:
    entries = _tree()
    got = collect_branch_entries(entries, "e4", "e5")
    assert [e["id"] for e in got.entries] == ["e3", "e4"] and got.common_ancestor_id == "e2"
    # target on the current path: only what follows it
    got = collect_branch_entries(entries, "e4", "e3")
    assert [e["id"] for e in got.entries] == ["e4"] and got.common_ancestor_id == "e3"
    # navigating to a descendant: nothing to summarize
    assert collect_branch_entries(entries, "e2", "e4").entries == []
    # no old leaf, unknown target
    assert collect_branch_entries(entries, None, "e4").entries == []
    got = collect_branch_entries(entries, "e4", "nope")
    assert [e["id"] for e in got.entries] == ["e1", "e2", "e3", "e4"] and got.common_ancestor_id is None


def test_prepare_skips_tool_results_and_keeps_newest_within_budget() -> None:
    chain = Chain()
    chain.msg(user("x" * 4000))  # 1000 tokens: does not fit
    chain.msg(assistant("", call("write", path="w.txt")))
    chain.msg(result("r" * 4000))
    chain.add(
        "branch_summary", fromId="zz", summary="", details={"readFiles": ["old.md"], "modifiedFiles": []}
    )
    chain.msg(user("y" * 40))
    prepared = prepare_branch_entries(chain.entries, token_budget=500)
    roles = [m["role"] for m in prepared.messages]
    assert roles == ["assistant", "branchSummary", "user"]  # the empty branch summary still counts
    assert prepared.total_tokens == estimate_tokens(chain.entries[1]["message"]) + 0 + 10
    lists = prepared.file_ops.to_json()
    assert lists["read"] == ["old.md"] and lists["written"] == ["w.txt"]


def test_summary_entries_get_extra_room_below_ninety_percent() -> None:
    chain = Chain()
    chain.add("compaction", summary="s" * 800, tokensBefore=1)  # 200 tokens
    chain.msg(user("y" * 400))  # 100 tokens
    prepared = prepare_branch_entries(chain.entries, token_budget=250)
    assert [m["role"] for m in prepared.messages] == ["compactionSummary", "user"]
    assert prepared.total_tokens == 300
    prepared = prepare_branch_entries(chain.entries, token_budget=105)  # 100 >= 0.9 * 105
    assert [m["role"] for m in prepared.messages] == ["user"]


def test_only_branch_summary_details_are_carried_not_compaction_details() -> None:
    chain = Chain()
    chain.add("compaction", summary="c", tokensBefore=1, details={"readFiles": ["from-compaction.md"]})
    chain.add(
        "branch_summary",
        fromId="x",
        summary="b",
        details={"readFiles": ["nested.md"], "modifiedFiles": ["m.py"]},
    )
    chain.add("branch_summary", fromId="y", summary="h", fromHook=True, details={"readFiles": ["hook.md"]})
    chain.msg(assistant("", call("read", path="late.md")))
    ops = prepare_branch_entries(chain.entries).file_ops.to_json()
    assert ops == {"read": ["nested.md", "late.md"], "written": [], "edited": ["m.py"]}


def test_context_edits_among_the_abandoned_entries_apply() -> None:
    from piwork.core.compaction.branch_entries import prepare_branch_entries

    u = {
        "type": "message",
        "id": "u",
        "parentId": None,
        "timestamp": "2024-12-03T14:00:01.000Z",
        "message": {"role": "user", "content": "long question", "timestamp": 1},
    }
    a = {
        "type": "message",
        "id": "a",
        "parentId": "u",
        "timestamp": "2024-12-03T14:00:02.000Z",
        "message": {"role": "assistant", "content": [{"type": "text", "text": "failed try"}], "timestamp": 2},
    }
    e1 = {
        "type": "context_edit",
        "id": "e1",
        "parentId": "a",
        "timestamp": "2024-12-03T14:00:03.000Z",
        "targetId": "a",
        "replacement": None,
    }
    e2 = {
        "type": "context_edit",
        "id": "e2",
        "parentId": "e1",
        "timestamp": "2024-12-03T14:00:04.000Z",
        "targetId": "u",
        "replacement": {"content": "short"},
    }
    prepared = prepare_branch_entries([u, a, e1, e2])
    assert prepared.messages == [{"role": "user", "content": "short", "timestamp": 1}]
    assert prepared.total_tokens == 2
