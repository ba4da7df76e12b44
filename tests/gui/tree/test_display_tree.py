"""The displayed shape of a session tree: filters, nesting of side branches only, active path order."""

from __future__ import annotations

from piwork.core.session.tree import SessionTree, tree_from_values
from piwork.gui.tree.display_tree import DisplayTree, build_display_tree

from .sessions import SessionBuilder


def _ids(tree: SessionTree, display: DisplayTree, container: int | None = None) -> list[object]:
    return [tree.records[seq].id for seq in display.rows.get(container, [])]


def _seq(tree: SessionTree, entry_id: str) -> int:
    record = tree.record(entry_id)
    assert record is not None
    return record.seq


def _branched() -> tuple[SessionBuilder, dict[str, str]]:
    b = SessionBuilder()
    ids: dict[str, str] = {}
    ids["u1"] = b.user("first question")
    ids["a1"] = b.assistant("first answer")
    ids["u2"] = b.user("try A")
    ids["call"] = b.assistant(tool_call="x")
    ids["res"] = b.tool_result("x")
    ids["a2"] = b.assistant("A done")
    b.at(ids["a1"])
    ids["u3"] = b.user("try B")
    ids["a3"] = b.assistant("B done")
    ids["mc"] = b.model_change()
    ids["lab"] = b.label(ids["u3"], "bee")
    return b, ids


def test_linear_runs_are_one_list_and_branch_points_nest() -> None:
    b, ids = _branched()
    tree = tree_from_values(b.entries)  # leaf = last entry (the label)
    display = build_display_tree(tree)
    # pure tool-call turn and bookkeeping entries are hidden in the default mode
    # the active branch (B) goes on in the same list; the other branch nests under the branch point
    assert _ids(tree, display) == [ids["u1"], ids["a1"], ids["u3"], ids["a3"]]
    assert _ids(tree, display, _seq(tree, ids["a1"])) == [ids["u2"]]
    assert _ids(tree, display, _seq(tree, ids["u3"])) == []
    assert _ids(tree, display, _seq(tree, ids["u2"])) == [ids["res"], ids["a2"]]
    assert display.landing == _seq(tree, ids["a3"])  # leaf (label entry) hidden → nearest shown ancestor


def test_filter_modes() -> None:
    b, ids = _branched()
    tree = tree_from_values(b.entries)
    everything = build_display_tree(tree, "all")
    assert len(everything) == len(b.entries) - 1  # only the pure tool-call turn stays hidden
    user_only = build_display_tree(tree, "user-only")
    assert _ids(tree, user_only) == [ids["u1"], ids["u3"]]
    assert _ids(tree, user_only, _seq(tree, ids["u1"])) == [ids["u2"]]
    no_tools = build_display_tree(tree, "no-tools")
    assert ids["res"] not in [tree.records[s].id for s in no_tools.container]
    labeled = build_display_tree(tree, "labeled-only")
    assert _ids(tree, labeled) == [ids["u3"]]
    assert build_display_tree(tree, "bogus").container == build_display_tree(tree, "default").container


def test_pure_tool_call_turn_shows_when_it_is_the_leaf() -> None:
    b = SessionBuilder()
    b.user("go")
    call = b.assistant(tool_call="1")
    tree = tree_from_values(b.entries)
    display = build_display_tree(tree)
    assert display.landing == _seq(tree, call)


def test_search_tokens_must_all_match() -> None:
    b, ids = _branched()
    tree = tree_from_values(b.entries)
    display = build_display_tree(tree, "default", "  TRY   b ")
    assert _ids(tree, display) == [ids["u3"]]
    assert _ids(tree, build_display_tree(tree, "default", "bee")) == [ids["u3"]]  # labels are searched


def test_orphans_and_cycles_are_roots_and_terminate() -> None:
    b = SessionBuilder()
    first = b.user("root one")
    b.assistant("reply")
    b.user("orphan", parent="missing")
    entries = [
        *b.entries,
        {"type": "message", "id": "c1", "parentId": "c2", "timestamp": "2025-01-02T00:00:00.000Z",
         "message": {"role": "user", "content": "cycle 1"}},
        {"type": "message", "id": "c2", "parentId": "c1", "timestamp": "2025-01-02T00:00:01.000Z",
         "message": {"role": "user", "content": "cycle 2"}},
    ]  # fmt: skip
    tree = tree_from_values(entries)
    display = build_display_tree(tree, "all")
    top = _ids(tree, display)
    assert top[:2] == [first, "e00003"]
    # the cycle is reachable from no root: listed as an extra root, walked once
    assert top[2] == "c1" and _ids(tree, display, _seq(tree, "c1")) == ["c2"]
    assert len(display) == 5


def _depth(display: DisplayTree, seq: int) -> int:
    """Indent levels of a row in the outline (group rows count: they are rows too)."""
    depth, container = 0, display.container[seq]
    while container is not None:
        depth += 1
        container = display.container[container]
    return depth


def test_a_thousand_deep_chain_with_fifty_forks_stays_flat() -> None:
    """Forks off a long chain indent only their own side branch, and only once or twice."""
    b = SessionBuilder()
    chain: list[str] = []
    for i in range(500):
        chain.append(b.user(f"question {i}"))
        chain.append(b.assistant(f"answer {i}"))
    leaf = chain[-1]
    for fork in range(50):
        b.at(chain[fork * 20 + 1])
        b.user(f"side question {fork}")
        b.assistant(f"side answer {fork}")
        if fork % 10 == 0:  # some side branches fork again
            b.at(b.entries[-2]["id"])
            b.assistant(f"second side answer {fork}")
    tree = tree_from_values(b.entries)
    tree.branch(leaf)  # the long chain is the active path
    for group_size in (1000, 100):  # without and with group rows
        display = build_display_tree(tree, "default", group_size=group_size)
        depths = [_depth(display, seq) for seq in display.container if not display.is_group(seq)]
        assert len(depths) == 1000 + 100 + 5
        main = [_depth(display, _seq(tree, entry_id)) for entry_id in chain]
        grouped = group_size < 1000
        assert set(main) == {int(grouped)}  # the chain is one flat list (of group rows of 100)
        assert max(depths) <= 3 + grouped
    tree.branch(b.entries[-1]["id"])  # on a side branch instead: the chain after its fork nests once
    display = build_display_tree(tree)
    assert max(_depth(display, seq) for seq in display.container if not display.is_group(seq)) <= 3
