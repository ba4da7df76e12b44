"""GraphRows while entries stream in: a fold grows, appears and shrinks in place (exact rows and the
view changes each step announces), an opened fold stays open, and after any mix of appends, moves,
labels and opened folds the rows are those a fresh layout gives."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from piwork.core.ids import SequentialIds
from piwork.core.session.graph_layout import NOTHING_SHOWN, GraphLayout, graph_shows
from piwork.core.session.graph_rows import Fold, GraphRows, Refold
from piwork.core.session.records import EntryRecord
from piwork.core.session.tree import SessionTree, tree_from_values

USER = {"role": "user", "content": "q", "timestamp": 1}
ANSWER = {"role": "assistant", "content": [{"type": "text", "text": "a"}], "stopReason": "stop"}
CALL = {"role": "assistant", "stopReason": "toolUse",
        "content": [{"type": "toolCall", "id": "c", "name": "bash", "arguments": {}}]}  # fmt: skip
RESULT = {"role": "toolResult", "toolCallId": "c", "toolName": "bash",
          "content": [{"type": "text", "text": "r"}], "isError": False}  # fmt: skip


class Graph:
    """A layout and its rows kept up to date the way the graph model does it."""

    def __init__(self, tree: SessionTree, fold_at: int | None, hide_tools: bool = False) -> None:
        self.tree = tree
        self.fold_at = fold_at
        self.hide_tools = hide_tools
        self.expanded: set[int] = set()
        self.layout, self.rows = self.fresh()

    def leaf_seq(self) -> int | None:
        record = self.tree.record(self.tree.leaf_id) if self.tree.leaf_id is not None else None
        return record.seq if record is not None else None

    def shows(self, record: EntryRecord) -> bool:
        if not graph_shows(record) or (self.hide_tools and record.role == "toolResult"):
            return False
        pure_call = record.role == "assistant" and not self.tree.details(record).meta.get("hasText")
        return not pure_call or record.seq == self.leaf_seq()

    def marked(self, layout: GraphLayout) -> Callable[[int], bool]:
        leaf = self.leaf_seq()
        shown_leaf = layout.anchor.get(leaf) if leaf is not None else None
        return lambda seq: seq == shown_leaf or self.tree.label(self.tree.records[seq].id) is not None

    def fresh(self) -> tuple[GraphLayout, GraphRows]:
        layout = GraphLayout(self.tree, self.shows)
        return layout, GraphRows(layout, self.marked(layout), fold_at=self.fold_at, expanded=self.expanded)

    def stream(self, message: dict[str, Any] | None = None) -> Refold | None:
        """Append under the leaf (a model change without `message`); the rows' plan, None when nothing
        drawn changed; a new fork lays everything out again (also None)."""
        leaf = self.leaf_seq()
        old_tip = self.layout.anchor.get(leaf) if leaf is not None else None
        old_row = self.rows.row_of.get(old_tip) if old_tip is not None else None
        if message is None:
            entry_id = self.tree.append_model_change("p", "m")
        else:
            entry_id = self.tree.append_message(message)
        record = self.tree.record(entry_id)
        assert record is not None
        splice = self.layout.extend(record)
        if splice is None or old_row is None:
            self.layout, self.rows = self.fresh()
            return None
        self.rows._is_marked = self.marked(self.layout)
        if splice == NOTHING_SHOWN:
            return None
        plan = self.rows.refold_tail(
            self.layout.order[splice.row - 1], splice.row + splice.added, old_row + 1
        )
        self.rows.apply(plan)
        return plan

    def open(self, fold: Fold) -> None:
        self.expanded.update(self.rows.stretch_of(fold))
        self.layout, self.rows = self.fresh()

    def assert_fresh(self) -> None:
        layout, rows = self.fresh()
        assert self.layout.order == layout.order and self.layout.anchor == layout.anchor
        assert self.layout.through == layout.through and self.layout.lane == layout.lane
        assert self.rows.rows == rows.rows and self.rows.row_of == rows.row_of
        for seq in layout.order:
            assert self.rows.fold_of(seq) == rows.fold_of(seq)
        assert self.rows.folded() == rows.folded()


def _linear(count: int) -> SessionTree:
    tree = tree_from_values([], new_id=SequentialIds("e"))
    for _n in range(count):
        tree.append_message(ANSWER)  # a run of replies, shown with or without tool results
    return tree


def test_a_fold_appears_and_grows_in_place_as_a_run_streams() -> None:
    graph = Graph(_linear(1), fold_at=4)
    plans = [graph.stream(ANSWER if n % 2 == 0 else RESULT) for n in range(5)]
    # seqs 0..5; the leaf stays out of the fold, the run's first entry stays above it
    assert graph.rows.rows == [0, Fold(1, 4, 4), 5]
    assert plans[0] == Refold(0, 1, (0, 1), first=1, changed=0, inserted=1, removed=0)
    assert plans[2] == Refold(0, 3, (0, 1, 2, 3), first=3, changed=0, inserted=1, removed=0)
    # four quiet entries (0..3) fold: rows 1..3 become the fold and the new leaf, one row goes
    assert plans[3] == Refold(0, 4, (0, Fold(1, 3, 3), 4), first=1, changed=2, inserted=0, removed=1)
    # from then on the fold takes the previous leaf and the leaf's row shows the new one: no row comes
    assert plans[4] == Refold(0, 3, (0, Fold(1, 4, 4), 5), first=1, changed=2, inserted=0, removed=0)
    for _ in range(50):
        plan = graph.stream(RESULT)
        assert plan is not None and (plan.first, plan.changed, plan.inserted, plan.removed) == (1, 2, 0, 0)
    assert graph.rows.rows == [0, Fold(1, 54, 54), 55]
    graph.assert_fresh()


def test_an_opened_fold_stays_open_while_it_grows_and_when_a_fork_splits_it() -> None:
    graph = Graph(_linear(10), fold_at=4)
    (fold,) = [row for row in graph.rows.rows if isinstance(row, Fold)]
    assert graph.rows.rows == [0, Fold(1, 8, 8), 9]
    graph.open(fold)
    assert graph.rows.rows == list(range(10))
    plan = graph.stream(RESULT)
    assert plan == Refold(4, 10, tuple(range(4, 11)), first=10, changed=0, inserted=1, removed=0)
    assert graph.rows.rows == list(range(11))
    graph.assert_fresh()
    # a fork at entry 4 splits the stretch; both parts stay open (a new layout)
    graph.tree.branch(str(graph.tree.records[4].id))
    assert graph.stream(ANSWER) is None
    assert graph.rows.rows == [*range(11), 11]
    # a stretch that was never opened still folds
    graph.tree.branch(str(graph.tree.records[11].id))
    for _ in range(6):
        graph.stream(RESULT)
    assert graph.rows.rows == [*range(12), Fold(12, 16, 5), 17]
    graph.assert_fresh()


def test_a_tool_call_turn_leaving_the_leaf_moves_the_run_back_out_of_the_fold() -> None:
    """Without tool results: the call shows only while it is the leaf, so the entry before it joins
    the fold and leaves it again when the (hidden) result arrives."""
    graph = Graph(_linear(6), fold_at=4, hide_tools=True)
    assert graph.rows.rows == [0, Fold(1, 4, 4), 5]
    plan = graph.stream(CALL)  # 6: the answer 5 joins the fold, the call shows as the leaf
    assert graph.rows.rows == [0, Fold(1, 5, 5), 6]
    assert plan is not None and (plan.first, plan.changed, plan.inserted, plan.removed) == (1, 2, 0, 0)
    plan = graph.stream(RESULT)  # 7 hidden, and 6 with it: 5 is the leaf again
    assert graph.rows.rows == [0, Fold(1, 4, 4), 5]
    assert plan is not None and (plan.first, plan.changed, plan.inserted, plan.removed) == (1, 2, 0, 0)
    graph.assert_fresh()
    # below the folding length the run opens up
    short = Graph(_linear(4), fold_at=4, hide_tools=True)
    assert short.rows.rows == [0, 1, 2, 3]
    short.stream(CALL)
    assert short.rows.rows == [0, Fold(1, 3, 3), 4]
    plan = short.stream(RESULT)
    assert short.rows.rows == [0, 1, 2, 3]
    assert plan is not None and (plan.first, plan.changed, plan.inserted, plan.removed) == (1, 2, 1, 0)
    short.assert_fresh()


def test_streaming_into_a_huge_fold_touches_only_its_row() -> None:
    graph = Graph(_linear(20_000), fold_at=8)
    assert graph.rows.rows == [0, Fold(1, 19_998, 19_998), 19_999]
    for _ in range(20):
        plan = graph.stream(RESULT)
        assert plan is not None and len(plan.new) == 3 and plan.start == 0
    assert graph.rows.rows == [0, Fold(1, 20_018, 20_018), 20_019]
    assert graph.rows.folded() == 20_018


def test_rows_match_a_fresh_layout_after_any_stream_of_changes() -> None:
    rng = random.Random(11)
    for fold_at in (3, 8, None):
        for hide_tools in (False, True):
            tree = _linear(3)
            graph = Graph(tree, fold_at, hide_tools)
            for _ in range(250):
                roll = rng.random()
                if roll < 0.04:
                    graph.tree.branch(str(rng.choice(tree.records).id))
                    graph.layout, graph.rows = graph.fresh()
                elif roll < 0.06:
                    folds = [row for row in graph.rows.rows if isinstance(row, Fold)]
                    if folds:
                        graph.open(rng.choice(folds))
                elif roll < 0.08:
                    target = rng.choice(tree.records)
                    tree.set_label(str(target.id), rng.choice(["tag", None]))
                    graph.layout, graph.rows = graph.fresh()
                else:
                    graph.stream(rng.choice([USER, ANSWER, ANSWER, CALL, CALL, RESULT, RESULT, None]))
                graph.assert_fresh()
