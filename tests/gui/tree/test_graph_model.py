"""BranchGraphModel and BranchGraphView: model consistency (qtmodeltester), streaming inserts without a
reset, folds, summary links, and the panel's graph tab sharing the outline's selection and actions."""

from __future__ import annotations

import asyncio
from pathlib import Path

from PySide6.QtCore import QModelIndex, Qt
from pytestqt.modeltest import ModelTester
from pytestqt.qtbot import QtBot

from piwork.core.ids import SequentialIds
from piwork.core.session.graph_rows import Fold
from piwork.core.session.store import create_session
from piwork.core.session.tree import SessionTree, tree_from_values
from piwork.gui.tree.graph_model import GRAPH_ROLE, BranchGraphModel, GraphCell
from piwork.gui.tree.tree_model import ENTRY_ID_ROLE, LABEL_ROLE, LEAF_ROLE
from piwork.gui.tree.tree_panel import SessionTreePanel
from tests.gui.tree.navigators import navigator_for

from .sessions import SessionBuilder


def _branched() -> tuple[SessionTree, dict[str, str]]:
    b = SessionBuilder()
    ids = {"u1": b.user("hello"), "a1": b.assistant("hi")}
    b.user("look around")
    for i in range(12):  # one long turn of tool steps
        b.assistant(f"looking {i}", tool_call=str(i))
        b.tool_result(str(i), f"found {i}")
    ids["tipA"] = b.assistant("nothing there")
    b.at(ids["a1"])
    ids["u2"] = b.user("other way")
    ids["t2"] = b.assistant(tool_call="x")
    ids["r2"] = b.tool_result("x", "done")
    ids["lab"] = b.label(ids["u2"], "plan-b")
    ids["s"] = b.branch_summary(ids["tipA"], "the first way went nowhere")
    ids["c"] = b.compaction("older turns", ids["u2"])
    return tree_from_values(b.entries, new_id=SequentialIds("n")), ids


def _ids(model: BranchGraphModel) -> list[object]:
    return [model.index(row, 0).data(ENTRY_ID_ROLE) for row in range(model.rowCount())]


def test_model_is_consistent_folded_and_open(qtmodeltester: ModelTester) -> None:
    tree, _ = _branched()
    model = BranchGraphModel(tree)
    qtmodeltester.check(model)
    open_model = BranchGraphModel(tree, fold_at=None)
    qtmodeltester.check(open_model)
    assert open_model.rowCount() == len(open_model.layout)
    assert model.rowCount() < open_model.rowCount()
    model.detach()
    open_model.detach()


def test_cells_mark_kinds_lanes_labels_leaf_and_summary_link(qtbot: QtBot) -> None:
    tree, ids = _branched()
    model = BranchGraphModel(tree)
    cells = {
        model.index(r, 0).data(ENTRY_ID_ROLE): model.index(r, 0).data(GRAPH_ROLE)
        for r in range(model.rowCount())
    }
    assert cells[ids["u1"]].kind == "user" and cells[ids["a1"]].kind == "assistant"
    assert cells[ids["r2"]].kind == "tool" and cells[ids["s"]].kind == "summary"
    assert cells[ids["c"]].kind == "compaction"
    assert cells[ids["u2"]].label == "plan-b"
    assert cells[ids["a1"]].forks == (cells[ids["u2"]].lane,)
    assert cells[ids["u2"]].lane != cells[ids["u1"]].lane
    assert cells[ids["c"]].leaf and cells[ids["c"]].active and not cells[ids["tipA"]].active
    # the active path leaves the first run at a1: its fork curve and the line down to u2 are the path
    side = cells[ids["u2"]].lane
    assert cells[ids["a1"]].active_forks == (side,) and not cells[ids["a1"]].down_active
    assert cells[ids["u1"]].down_active
    assert side in cells[ids["tipA"]].through and cells[ids["tipA"]].through_active == (side,)
    folds = [model.rows.rows[r] for r in range(model.rowCount()) if isinstance(model.rows.rows[r], Fold)]
    assert (
        len(folds) == 1
        and model.index(model.rows.row_of[folds[0]], 0).data() == f"… {folds[0].count} messages"
    )
    summary_seq = tree.record(ids["s"]).seq  # type: ignore[union-attr]
    linked = model.summarised_branch(summary_seq)
    assert tree.record(ids["tipA"]).seq in linked and tree.record(ids["u1"]).seq not in linked  # type: ignore[union-attr]
    with qtbot.waitSignal(model.leaf_moved):
        tree.branch(ids["tipA"])
    cells = {
        model.index(r, 0).data(ENTRY_ID_ROLE): model.index(r, 0).data(GRAPH_ROLE)
        for r in range(model.rowCount())
    }
    assert cells[ids["tipA"]].leaf and cells[ids["tipA"]].through_active == ()
    assert cells[ids["a1"]].active_forks == () and cells[ids["a1"]].down_active
    model.detach()


def _cells_by_id(model: BranchGraphModel) -> dict[object, GraphCell]:
    return {
        model.index(r, 0).data(ENTRY_ID_ROLE): model.index(r, 0).data(GRAPH_ROLE)
        for r in range(model.rowCount())
    }


def test_each_branch_summary_is_joined_to_the_tip_it_summarises(
    qtbot: QtBot, qtmodeltester: ModelTester
) -> None:
    tree, ids = _branched()
    model = BranchGraphModel(tree)
    qtmodeltester.check(model)
    (link,) = model.links.links
    assert tree.records[link.summary].id == ids["s"] and tree.records[link.source].id == ids["tipA"]
    cells = _cells_by_id(model)
    width = model.layout.width
    assert cells[ids["u1"]].width == width and cells[ids["s"]].link_base == width
    assert cells[ids["u1"]].link_width == 1
    # the tip's row starts the connector downwards, the summary's row ends it with the arrowhead
    (tip_end,) = cells[ids["tipA"]].links.ends
    (summary_end,) = cells[ids["s"]].links.ends
    assert tip_end.downward and not tip_end.at_summary
    assert not summary_end.downward and summary_end.at_summary
    # every row between them has the connector passing; rows outside have none (t2, a tool call
    # without text that is not the leaf, is hidden as in the outline)
    assert ids["t2"] not in cells
    between = [ids["u2"], ids["r2"]]
    assert all(cells[i].links.passing == (0,) and not cells[i].links.ends for i in between)
    assert not cells[ids["u1"]].links.passing and not cells[ids["c"]].links.ends
    # folded or open, the connector joins the same entries (the tip is never folded away)
    open_model = BranchGraphModel(tree, fold_at=None)
    (open_link,) = open_model.links.links
    assert (open_link.summary, open_link.source) == (link.summary, link.source)
    assert open_link.bottom - open_link.top == link.bottom - link.top
    # a second summary of the same tip streamed under the leaf gets its own column where they overlap
    tree.branch(ids["tipA"])
    with qtbot.waitSignal(model.rowsInserted):
        second = tree.branch_with_summary(ids["c"], "again, shorter", None, False)
    assert [tree.records[x.summary].id for x in model.links.links] == [ids["s"], second]
    assert sorted(x.column for x in model.links.links) == [0, 1] and model.links.width == 2
    assert _cells_by_id(model)[ids["u2"]].links.passing == (0, 1)
    assert _cells_by_id(model)[second].links.ends[0].at_summary
    assert [(x.top, x.bottom) for x in model.links.links] == [
        (x.top, x.bottom) for x in BranchGraphModel(tree).links.links
    ]
    model.detach()
    open_model.detach()


def test_streamed_entries_are_inserted_in_place(qtbot: QtBot, qtmodeltester: ModelTester) -> None:
    tree, ids = _branched()
    model = BranchGraphModel(tree)
    qtmodeltester.check(model)  # and it keeps checking every change below
    lanes_before = {model.index(r, 0).data(ENTRY_ID_ROLE): model.index(r, 0).data(GRAPH_ROLE).lane
                    for r in range(model.rowCount())}  # fmt: skip
    resets: list[int] = []
    model.modelReset.connect(lambda: resets.append(1))
    with qtbot.waitSignal(model.rowsInserted):
        new = tree.append_message({"role": "user", "content": "next", "timestamp": 9})
    with qtbot.waitSignal(model.rowsInserted):
        tree.append_message(
            {"role": "assistant", "content": [{"type": "text", "text": "ok"}], "stopReason": "stop"}
        )
    assert not resets
    lanes_after = {model.index(r, 0).data(ENTRY_ID_ROLE): model.index(r, 0).data(GRAPH_ROLE).lane
                   for r in range(model.rowCount())}  # fmt: skip
    assert {k: lanes_after[k] for k in lanes_before} == lanes_before
    fresh = BranchGraphModel(tree)
    assert _ids(model) == _ids(fresh)
    assert model.leaf_index().data(LEAF_ROLE) and model.leaf_index().row() == model.rowCount() - 1
    assert model.index_of_id(new).isValid()
    tree.branch(ids["u1"])  # a new fork: laid out again
    with qtbot.waitSignal(model.modelReset):
        tree.append_message(
            {"role": "assistant", "content": [{"type": "text", "text": "fork"}], "stopReason": "stop"}
        )
    assert _ids(model) == _ids(BranchGraphModel(tree))
    model.detach()
    fresh.detach()


def test_labelling_a_folded_entry_brings_it_out_of_its_fold(qtbot: QtBot) -> None:
    tree, _ = _branched()
    model = BranchGraphModel(tree)
    inner = tree.records[model.layout.order[6]]
    assert model.rows.fold_of(inner.seq) is not None
    with qtbot.waitSignal(model.modelReset):
        tree.set_label(str(inner.id), "keep")
    assert (
        inner.seq in model.rows.rows
        and model.index_of_id(str(inner.id), unfold=False).data(LABEL_ROLE) == "keep"
    )
    model.detach()


def test_selecting_a_folded_entry_opens_its_fold() -> None:
    tree, _ = _branched()
    model = BranchGraphModel(tree)
    inner = tree.records[model.layout.order[6]]
    assert model.rows.fold_of(inner.seq) is not None
    index = model.index_of_id(str(inner.id))
    assert index.isValid() and index.data(ENTRY_ID_ROLE) == inner.id
    assert model.rows.fold_of(inner.seq) is None
    model.detach()


def test_graph_tab_shares_selection_and_actions_with_the_outline(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, tmp_path: Path
) -> None:
    session = create_session(str(tmp_path), tmp_path / "sessions")
    tree = session.tree
    u1 = tree.append_message({"role": "user", "content": "plan the parser", "timestamp": 1})
    a1 = tree.append_message(
        {"role": "assistant", "content": [{"type": "text", "text": "plan"}], "stopReason": "stop"}
    )
    tree.append_message({"role": "user", "content": "write it", "timestamp": 2})
    panel = SessionTreePanel()
    qtbot.addWidget(panel)
    panel.resize(600, 500)
    panel.show()
    panel.set_session(session, navigator_for(session))
    panel.views.setCurrentWidget(panel.graph)
    qtbot.waitUntil(
        lambda: panel.graph.model is not None and not panel.graph.laying_out
    )  # laid out in a worker
    graph = panel.graph
    assert graph.model is not None
    graph.list.setCurrentIndex(graph.model.index_of_id(a1))
    assert panel.current_entry_id() == a1
    assert panel.view.currentIndex().data(ENTRY_ID_ROLE) == a1  # the outline follows
    assert "plan" in panel.detail.toPlainText()
    panel.select_entry(u1)  # and the graph follows the outline
    assert graph.current_entry_id() == u1
    menu = panel.build_context_menu()
    texts = [a.text() for a in menu.actions()]
    assert "Fork from here" in texts and "Clone up to here" in texts
    fork = next(a for a in menu.actions() if a.text() == "Fork from here")
    assert fork.isEnabled()  # u1 is a user message: the graph's selection drives the outline's actions
    created: list[object] = []
    panel.session_created.connect(lambda s, text: created.append(text))
    fork.trigger()
    qtbot.waitUntil(lambda: created == ["plan the parser"])  # the fork is made in a worker
    menu.deleteLater()
    tool_tip = graph.model.index_of_id(a1).data(Qt.ItemDataRole.ToolTipRole)
    assert "assistant" in tool_tip and "plan" in tool_tip
    assert isinstance(graph.model.index_of_id(a1).data(GRAPH_ROLE), GraphCell)
    assert graph.model.rowCount(graph.model.index(0, 0)) == 0 and graph.model.rowCount(QModelIndex()) == 3
    panel.shutdown()
