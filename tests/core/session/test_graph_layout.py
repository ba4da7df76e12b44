"""GraphLayout and GraphRows: one lane per branch, straight linear runs, lanes that stay put while entries
stream in, and long quiet runs folded."""

from __future__ import annotations

import random
from typing import Any

from piwork.core.ids import SequentialIds
from piwork.core.session.graph_layout import NOTHING_SHOWN, GraphLayout
from piwork.core.session.graph_links import SummaryLinks
from piwork.core.session.graph_rows import Fold, GraphRows
from piwork.core.session.tree import SessionTree, tree_from_values


def _user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text, "timestamp": 1}


def _assistant(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": [{"type": "text", "text": text}], "stopReason": "stop"}


def _result(text: str) -> dict[str, Any]:
    return {"role": "toolResult", "toolCallId": "c", "toolName": "bash",
            "content": [{"type": "text", "text": text}], "isError": False}  # fmt: skip


def _tree() -> SessionTree:
    tree = tree_from_values([], new_id=SequentialIds("e"))
    return tree


def _lanes_by_id(layout: GraphLayout) -> dict[str, int]:
    records = layout.tree.records
    return {str(records[seq].id): layout.lane[seq] for seq in layout.order}


def _ids(layout: GraphLayout) -> list[str]:
    return [str(layout.tree.records[seq].id) for seq in layout.order]


def _assert_same_as_fresh(layout: GraphLayout) -> None:
    fresh = GraphLayout(layout.tree)
    assert _ids(layout) == _ids(fresh)
    assert _lanes_by_id(layout) == _lanes_by_id(fresh)
    assert layout.through == fresh.through
    assert layout.row_of == fresh.row_of


def test_runs_are_straight_columns_and_forks_take_new_lanes() -> None:
    tree = _tree()
    u1 = tree.append_message(_user("start"))
    a1 = tree.append_message(_assistant("one"))
    for i in range(5):
        tree.append_message(_user(f"q{i}"))
        tree.append_message(_assistant(f"a{i}"))
    tree.branch(a1)
    b1 = tree.append_message(_user("other way"))
    tree.append_message(_assistant("other answer"))
    tree.branch(u1)
    c1 = tree.append_message(_assistant("second reply"))
    layout = GraphLayout(tree)
    ids = _ids(layout)
    lanes = _lanes_by_id(layout)
    # the first run is one column, listed before its later siblings' branches
    assert ids[:12] == [str(tree.records[s].id) for s in layout.order[:12]]
    assert {lanes[i] for i in ids[:12]} == {0}
    assert ids.index(b1) > ids.index(c1) or ids.index(c1) > ids.index(b1)
    assert lanes[b1] != 0 and lanes[c1] != 0
    # the branch off a1 starts after the main run; the later fork (off u1) after that
    assert ids.index(b1) == 12 and ids.index(c1) == 14
    # a1's fork line passes no row (its head comes right after the tip); u1's passes b1's rows
    u1_seq, b1_seq = tree.record(u1).seq, tree.record(b1).seq  # type: ignore[union-attr]
    assert layout.fork_lanes(u1_seq) == (lanes[c1],)
    assert lanes[c1] in layout.through[layout.row_of[b1_seq]]
    assert layout.width == len(set(lanes.values()))


def test_lanes_are_reused_once_a_branch_has_ended() -> None:
    tree = _tree()
    root = tree.append_message(_user("root"))
    for i in range(4):  # four short forks off the root, each ends before the next starts
        tree.branch(root)
        tree.append_message(_assistant(f"reply {i}"))
    layout = GraphLayout(tree)
    # all forks leave the same row, so they need their own lanes while in transit
    assert layout.width == 4
    tree2 = _tree()
    u = tree2.append_message(_user("root"))
    a = tree2.append_message(_assistant("a"))
    tree2.append_message(_user("deep"))
    tree2.branch(u)
    tree2.append_message(_assistant("b"))
    tree2.branch(a)
    tree2.append_message(_user("c"))
    layout2 = GraphLayout(tree2)
    assert layout2.width == 3  # u's fork line passes c's rows: a third lane


def test_lanes_stay_put_while_entries_stream_in() -> None:
    rng = random.Random(7)
    tree = _tree()
    tree.append_message(_user("root"))
    for _ in range(60):  # a random tree with forks everywhere
        target = rng.choice(tree.records)
        tree.branch(str(target.id))
        for k in range(rng.randint(1, 4)):
            tree.append_message(_user("q") if k % 2 == 0 else _assistant("a"))
    for tip_round in range(12):
        # the user moves to some tip, then the agent streams a turn there
        tips = [r for r in tree.records if not tree.children(r.id)]
        tree.branch(str(rng.choice(tips).id))
        layout = GraphLayout(tree)
        before = _lanes_by_id(layout)
        width = layout.width
        for k in range(5):
            if k == 2 and tip_round % 3 == 0:
                entry_id = tree.set_label(str(tree.leaf_id), "tag")  # bookkeeping: not drawn
                assert layout.extend(tree.record(entry_id)) == NOTHING_SHOWN  # type: ignore[arg-type]
                continue
            entry_id = tree.append_message(_assistant("streamed") if k % 2 else _user("more"))
            splice = layout.extend(tree.record(entry_id))  # type: ignore[arg-type]
            assert splice is not None and (splice.removed, splice.added) == (0, 1)
            assert layout.order[splice.row] == tree.record(entry_id).seq  # type: ignore[union-attr]
        after = _lanes_by_id(layout)
        assert {k: after[k] for k in before} == before  # nothing already drawn moved
        assert layout.width == width
        _assert_same_as_fresh(layout)  # and a full rebuild agrees


def test_new_fork_or_root_asks_for_a_rebuild_that_keeps_other_lanes() -> None:
    tree = _tree()
    u = tree.append_message(_user("root"))
    tree.append_message(_assistant("a"))
    layout = GraphLayout(tree)
    tree.branch(u)
    fork = tree.append_message(_assistant("b"))
    assert layout.extend(tree.record(fork)) is None  # type: ignore[arg-type]
    tree.reset_leaf()
    root = tree.append_message(_user("new root"))
    fresh = GraphLayout(tree)
    assert fresh.extend(tree.record(root)) is None  # type: ignore[arg-type]  # already laid out
    assert _lanes_by_id(fresh)[root] == 0  # lane 0 is free again once the first tree ends


def test_bookkeeping_entries_are_skipped_and_their_children_hang_on_the_shown_ancestor() -> None:
    tree = _tree()
    u = tree.append_message(_user("root"))
    tree.append_model_change("p", "m")
    a = tree.append_message(_assistant("after model change"))
    layout = GraphLayout(tree)
    assert _ids(layout) == [u, a]
    assert layout.parent[tree.record(a).seq] == tree.record(u).seq  # type: ignore[union-attr]


def test_orphans_and_cycles_end_up_as_roots() -> None:
    values = [
        {"type": "message", "id": "x", "parentId": "y", "timestamp": "2025-01-01T00:00:01Z",
         "message": _user("x")},
        {"type": "message", "id": "y", "parentId": "x", "timestamp": "2025-01-01T00:00:02Z",
         "message": _user("y")},
        {"type": "message", "id": "z", "parentId": "missing", "timestamp": "2025-01-01T00:00:03Z",
         "message": _user("z")},
    ]  # fmt: skip
    layout = GraphLayout(tree_from_values(values))
    assert sorted(_ids(layout)) == ["x", "y", "z"]


def test_long_quiet_runs_fold_and_marked_entries_stay_visible() -> None:
    tree = _tree()
    first = tree.append_message(_user("start"))
    ids = [first]
    for i in range(40):
        ids.append(tree.append_message(_assistant(f"a{i}") if i % 2 else _result(f"r{i}")))
    layout = GraphLayout(tree)
    rows = GraphRows(layout)
    assert len(rows) == 4  # the prompt, the run's first, "… 38 messages", the leaf (no child: not quiet)
    fold = rows.rows[2]
    assert isinstance(fold, Fold) and fold.count == 38
    assert rows.row_for(tree.record(ids[20]).seq) == 2  # type: ignore[union-attr]
    marked = tree.record(ids[20]).seq  # type: ignore[union-attr]
    rows = GraphRows(layout, lambda seq: seq == marked)
    assert marked in rows.rows and sum(isinstance(r, Fold) for r in rows.rows) == 2
    opened = GraphRows(layout, expanded=[fold.first])
    assert len(opened) == len(layout)
    assert len(GraphRows(layout, fold_at=None)) == len(layout)


def test_prompts_are_never_folded_only_the_agents_steps_between_them() -> None:
    """A long conversation keeps every prompt of the user's as a row: only a long run of steps between
    two prompts folds (there the answers and tool results of one turn)."""
    tree = _tree()
    prompts = [tree.append_message(_user("start"))]
    for i in range(12):
        tree.append_message(_assistant(f"a{i}"))
        prompts.append(tree.append_message(_user(f"q{i}")))
    for i in range(10):  # one long turn of tool steps
        tree.append_message(_assistant(f"step {i}") if i % 2 else _result(f"r{i}"))
    prompts.append(tree.append_message(_user("last")))
    tree.append_message(_assistant("done"))
    layout = GraphLayout(tree)
    rows = GraphRows(layout)
    folds = [row for row in rows.rows if isinstance(row, Fold)]
    assert len(folds) == 1 and folds[0].count == 9  # the long turn's steps after its first
    shown = {row for row in rows.rows if not isinstance(row, Fold)}
    assert all(tree.record(p).seq in shown for p in prompts)  # type: ignore[union-attr]


def test_summary_connectors_match_their_spans_and_share_columns_only_apart() -> None:
    """Random trees with many branch summaries: each connector joins its summary's row and the row of
    the tip it summarises; a row's connectors are exactly those spanning it; two connectors never
    share a column where they overlap."""
    rng = random.Random(7)
    for _round in range(20):
        values: list[dict[str, Any]] = []
        ids: list[str] = []
        for n in range(300):
            parent = ids[-1] if ids and rng.random() < 0.85 else (rng.choice(ids) if ids else None)
            entry_id = f"e{n}"
            if ids and rng.random() < 0.08:
                values.append({"type": "branch_summary", "id": entry_id, "parentId": parent,
                               "timestamp": "2025-01-01T00:00:00.000Z", "fromId": rng.choice(ids), "summary": "s"})  # fmt: skip
            else:
                values.append({"type": "message", "id": entry_id, "parentId": parent,
                               "timestamp": "2025-01-01T00:00:00.000Z",
                               "message": {"role": "user", "content": "x", "timestamp": 1}})  # fmt: skip
            ids.append(entry_id)
        tree = tree_from_values(values, new_id=SequentialIds("n"))
        layout = GraphLayout(tree)
        rows = GraphRows(layout, fold_at=rng.choice([None, 3]))
        links = SummaryLinks(rows)
        for link in links.links:
            record = tree.records[link.summary]
            assert record.type == "branch_summary"
            assert rows.row_for(layout.shown_seq(record.meta["fromId"])) in (link.top, link.bottom)  # type: ignore[arg-type]
            assert rows.row_for(link.summary) in (link.top, link.bottom) and link.top < link.bottom
        for row in range(len(rows)):
            at = links.at(row)
            spanning = [x for x in links.links if x.top < row < x.bottom]
            assert at.passing == tuple(sorted({x.column for x in spanning}))
            assert len(at.ends) == sum(1 for x in links.links if row in (x.top, x.bottom))
            touching = [x.column for x in links.links if x.top <= row <= x.bottom]
            assert len(touching) == len(set(touching))  # a column of its own where they overlap
            assert at.bundle == -1 and at.bundled == 0
