"""The branch graph beside the outline: it shows what the outline's filter and search show and keeps
the same entry selected; streamed entries grow, make and shrink folds in place (no reset), an opened
fold stays open; overlapping summary connectors each get a column, bundled with a count when a view
is too narrow for them all."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtGui import QColor
from pytestqt.modeltest import ModelTester
from pytestqt.qtbot import QtBot

from piwork.core.ids import SequentialIds
from piwork.core.session import Fold
from piwork.core.session.store import Session, new_header, open_session
from piwork.core.session.tree import SessionTree, tree_from_values
from piwork.gui.tree.display_tree import FILTER_MODES
from piwork.gui.tree.graph_delegate import LINK_PITCH, Fit, fit, link_x
from piwork.gui.tree.graph_model import GRAPH_ROLE, BranchGraphModel, GraphCell
from piwork.gui.tree.graph_view import BranchGraphView
from piwork.gui.tree.tree_model import ENTRY_ID_ROLE, SessionTreeModel
from piwork.gui.tree.tree_panel import SessionTreePanel

from .sessions import SessionBuilder

ANSWER = {"role": "assistant", "content": [{"type": "text", "text": "ok"}], "stopReason": "stop"}
CALL = {"role": "assistant", "stopReason": "toolUse",
        "content": [{"type": "toolCall", "id": "c", "name": "bash", "arguments": {}}]}  # fmt: skip
RESULT = {"role": "toolResult", "toolCallId": "c", "toolName": "bash",
          "content": [{"type": "text", "text": "done"}], "isError": False}  # fmt: skip
SUMMARY_COLOUR = QColor(40, 140, 120)


def _explorations() -> tuple[list[dict[str, Any]], dict[str, str]]:
    """A plan, then three attempts off one answer (tool calls, a model change, labels), each left with
    a summary; the leaf on the last summary's follow-up."""
    b = SessionBuilder()
    ids = {"root": b.user("plan the parser"), "base": b.assistant("which grammar?")}
    tips = []
    for k in range(3):
        b.at(ids["base"])
        ids[f"try{k}"] = b.user(f"attempt {k}: grammar {k}")
        b.assistant(tool_call=f"t{k}")
        b.tool_result(f"t{k}", f"grammar {k} output")
        b.model_change()
        b.assistant(f"grammar {k} works partly")
        tips.append(b.entries[-1]["id"])
    ids["labelled"] = tips[1]
    b.label(tips[1], "keep")
    b.at(ids["base"])
    previous = ids["base"]
    for k, tip in enumerate(tips):
        b.at(previous)
        previous = ids[f"summary{k}"] = b.branch_summary(tip, f"grammar {k} set aside")
    ids["follow"] = b.user("use grammar 1 after all")
    ids["leaf"] = b.assistant("done with grammar 1")
    return b.entries, ids


def _session_file(tmp_path: Path, entries: list[dict[str, Any]]) -> Session:
    path = tmp_path / "explorations.jsonl"
    lines = [new_header(str(tmp_path)), *entries]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return open_session(path, writable=False)


def _graph_ids(graph: BranchGraphView) -> list[str]:
    assert graph.model is not None
    model = graph.model
    return [str(model.index(r, 0).data(ENTRY_ID_ROLE)) for r in range(model.rowCount())]


def _outline_ids(model: SessionTreeModel) -> set[str]:
    display = model.display
    return {str(model.tree.records[seq].id) for seq in display.container if not display.is_group(seq)}


@pytest.fixture
def panel(qtbot: QtBot, qloop: asyncio.AbstractEventLoop, tmp_path: Path) -> Any:
    """A panel on a session file (entry details are read in worker threads on the loop)."""
    entries, ids = _explorations()
    session = _session_file(tmp_path, entries)
    panel = SessionTreePanel()
    qtbot.addWidget(panel)
    panel.resize(420, 700)
    panel.show()
    panel.set_session(session)
    panel.graph.fold_box.setChecked(False)  # every entry its own row, to compare with the outline
    panel.show_graph()
    qtbot.waitUntil(lambda: not panel.graph.laying_out)  # the rows laid out again in a worker
    yield panel, ids
    panel.shutdown()
    session.close()


def _settle(qtbot: QtBot, panel: Any) -> None:
    """Wait until the filter or search is laid out (in worker threads) in the outline and the graph."""
    qtbot.waitUntil(lambda: not panel.laying_out and not panel.graph.laying_out)


def test_the_graph_shows_what_each_filter_and_search_of_the_outline_shows(panel: Any, qtbot: QtBot) -> None:
    panel, ids = panel
    assert panel.model is not None
    for mode in FILTER_MODES:
        panel.set_filter_mode(mode)
        _settle(qtbot, panel)
        assert panel.graph.model.filter_mode == mode
        shown = _graph_ids(panel.graph)
        assert len(shown) == len(set(shown)) and set(shown) == _outline_ids(panel.model), mode
    panel.set_filter_mode("default")
    _settle(qtbot, panel)
    conversation = _graph_ids(panel.graph)
    # the tool-call turns without text are hidden (none is the leaf); model changes and labels too
    assert len(conversation) == 2 + 3 * 3 + 3 + 2
    panel.search_field.setText("grammar 1")
    panel._apply_search()  # what the field's timer does
    _settle(qtbot, panel)
    assert panel.graph.model.query == "grammar 1"
    assert set(_graph_ids(panel.graph)) == _outline_ids(panel.model)
    assert ids["try1"] in _graph_ids(panel.graph) and ids["try0"] not in _graph_ids(panel.graph)


def test_the_selection_stays_on_the_same_entry_in_both_views(panel: Any, qtbot: QtBot) -> None:
    panel, ids = panel
    graph = panel.graph
    graph.select(ids["labelled"])
    assert panel.view.currentIndex().data(ENTRY_ID_ROLE) == ids["labelled"]  # the outline follows
    panel.set_filter_mode("labeled-only")  # the selected entry is still shown: it stays selected
    _settle(qtbot, panel)
    assert graph.current_entry_id() == ids["labelled"] == panel.view.currentIndex().data(ENTRY_ID_ROLE)
    assert _graph_ids(graph) == [ids["labelled"]]
    panel.set_filter_mode("user-only")  # hidden now: its nearest shown ancestor, in both
    _settle(qtbot, panel)
    assert graph.current_entry_id() == ids["try1"] == panel.view.currentIndex().data(ENTRY_ID_ROLE)
    panel.select_entry(ids["try2"])  # the graph follows the outline
    assert graph.current_entry_id() == ids["try2"]
    # the user messages hang on the root in lanes of their own: the attempts fork off it
    cells = {
        graph.model.index(r, 0).data(ENTRY_ID_ROLE): graph.model.index(r, 0).data(GRAPH_ROLE)
        for r in range(graph.model.rowCount())
    }
    side_lanes = tuple(cells[ids[name]].lane for name in ("try1", "try2", "follow"))
    assert cells[ids["root"]].forks == side_lanes
    assert cells[ids["follow"]].leaf  # the leaf's nearest shown ancestor


def test_a_filter_set_while_the_graph_is_hidden_waits_until_it_is_shown(panel: Any, qtbot: QtBot) -> None:
    panel, ids = panel
    panel.views.setCurrentWidget(panel.view)
    graph_model = panel.graph.model
    panel.set_filter_mode("user-only")
    assert graph_model.filter_mode == "default"  # nothing laid out for a hidden graph
    panel.select_entry(ids["try0"])
    with qtbot.waitSignal(graph_model.rebuilt):
        panel.show_graph()
    assert graph_model.filter_mode == "user-only"
    assert set(_graph_ids(panel.graph)) == _outline_ids(panel.model)
    assert panel.graph.current_entry_id() == ids["try0"]


def _long_run(turns: int) -> SessionTree:
    tree = tree_from_values([], new_id=SequentialIds("e"))
    for _n in range(turns):
        tree.append_message(ANSWER)  # a run of replies
    return tree


def _rows(model: BranchGraphModel) -> list[int | Fold]:
    return list(model.rows.rows)


def test_streamed_entries_grow_the_fold_above_the_leaf_in_place(
    qtbot: QtBot, qtmodeltester: ModelTester
) -> None:
    tree = _long_run(20)
    model = BranchGraphModel(tree)
    qtmodeltester.check(model)  # it keeps checking every change below
    assert _rows(model) == [0, Fold(1, 18, 18), 19]
    resets: list[int] = []
    model.modelReset.connect(lambda: resets.append(1))
    for _n in range(6):
        with qtbot.waitSignal(model.dataChanged):
            tree.append_message(ANSWER)
        assert model.rowCount() == 3  # the fold took the old leaf, the leaf's row shows the new one
    assert _rows(model) == [0, Fold(1, 24, 24), 25] and not resets
    assert model.index(1, 0).data() == "… 24 messages"
    assert model.leaf_index().row() == 2
    fresh = BranchGraphModel(tree)
    assert _rows(fresh) == _rows(model)
    model.detach()
    fresh.detach()


def test_an_opened_fold_stays_open_while_entries_stream_in(qtbot: QtBot) -> None:
    tree = _long_run(20)
    view = BranchGraphView()
    qtbot.addWidget(view)
    view.resize(400, 500)
    view.show()
    view.set_tree(tree)
    model = view.model
    assert model is not None
    view._on_activated(model.index(1, 0))  # double-click on the fold
    assert model.rowCount() == 20 and not any(isinstance(r, Fold) for r in _rows(model))
    assert view.current_entry_id() == "e0002"  # the fold's first entry
    view.reveal_leaf()
    resets: list[int] = []
    model.modelReset.connect(lambda: resets.append(1))
    for _n in range(5):
        with qtbot.waitSignal(model.rowsInserted):
            tree.append_message(ANSWER)
    assert model.rowCount() == 25 and not resets
    assert view.current_entry_id() == tree.leaf_id  # the selection followed the leaf
    view.clear()


def test_moving_the_leaf_into_a_fold_splits_it_and_moving_away_folds_the_run_again(qtbot: QtBot) -> None:
    tree = _long_run(20)
    model = BranchGraphModel(tree)
    assert _rows(model) == [0, Fold(1, 18, 18), 19]
    with qtbot.waitSignal(model.leaf_moved):
        tree.branch(str(tree.records[10].id))
    assert _rows(model) == [0, Fold(1, 9, 9), 10, 11, Fold(12, 18, 7), 19]
    assert model.leaf_index().row() == 2
    with qtbot.waitSignal(model.leaf_moved):
        tree.branch(str(tree.records[19].id))
    assert _rows(model) == [0, Fold(1, 18, 18), 19]
    model.detach()


def test_the_selection_on_the_leaf_follows_it_while_folds_grow_appear_and_shrink(qtbot: QtBot) -> None:
    view = BranchGraphView()
    qtbot.addWidget(view)
    view.resize(400, 500)
    view.show()
    view.set_filter("no-tools")
    tree = _long_run(5)
    view.set_tree(tree)
    model = view.model
    assert model is not None

    def on_leaf() -> bool:
        return view.list.currentIndex() == model.leaf_index() and model.leaf_index().isValid()

    assert on_leaf()
    steps = [ANSWER, ANSWER, ANSWER, CALL, RESULT, CALL, RESULT, ANSWER, ANSWER, CALL, RESULT]
    shapes = []
    for message in steps:  # the run reaches eight entries and folds; tool steps move the leaf in and out
        tree.append_message(message)
        assert on_leaf(), message
        shapes.append(sum(isinstance(row, Fold) for row in _rows(model)))
    assert shapes == [0, 0, 0, 1, 0, 1, 0, 1, 1, 1, 1]
    view.clear()


def test_without_tool_results_each_tool_step_moves_the_fold_in_place(
    qtbot: QtBot, qtmodeltester: ModelTester
) -> None:
    tree = _long_run(12)
    model = BranchGraphModel(tree, mode="no-tools")
    qtmodeltester.check(model)
    resets: list[int] = []
    model.modelReset.connect(lambda: resets.append(1))
    for _ in range(4):
        tree.append_message(CALL)  # shown while it is the leaf: the answer before it joins the fold
        assert isinstance(_rows(model)[1], Fold) and _rows(model)[-1] == tree.record(tree.leaf_id).seq  # type: ignore[union-attr]
        tree.append_message(RESULT)  # hidden, and the call with it: the answer is the leaf again
        fresh = BranchGraphModel(tree, mode="no-tools")
        assert _rows(model) == _rows(fresh) and model.leaf_index().row() == fresh.leaf_index().row()
        fresh.detach()
    tree.append_message(ANSWER)
    assert not resets
    assert _rows(model) == _rows(BranchGraphModel(tree, mode="no-tools"))
    model.detach()


def _nested_summaries(count: int) -> SessionTree:
    """A main run with a side branch off each of its first `count` entries, then `count` summaries in a
    row, each summarising one side branch: all their connectors overlap."""
    b = SessionBuilder()
    main = [b.user(f"main {i}") for i in range(count + 2)]
    sides = [b.at(main[i]).user(f"side {i}") for i in range(count)]
    b.at(main[-1])
    for i in range(count):
        b.branch_summary(sides[i], f"side {i} summarised")
    return tree_from_values(b.entries, new_id=SequentialIds("n"))


def _cells(model: BranchGraphModel) -> list[GraphCell]:
    return [model.index(r, 0).data(GRAPH_ROLE) for r in range(model.rowCount())]


def test_twelve_overlapping_connectors_take_twelve_columns() -> None:
    model = BranchGraphModel(_nested_summaries(12), fold_at=None)
    assert model.links.width == 12
    first_summary = next(r for r, c in enumerate(_cells(model)) if c.kind == "summary")
    # on the last summary's row all twelve touch it: eleven pass in their columns, one ends in its own
    row = _cells(model)[first_summary + 11]
    assert row.links.passing == tuple(range(11)) and [e.column for e in row.links.ends] == [11]
    assert row.links.bundle == -1 and row.link_width == 12
    model.detach()


def test_a_narrow_view_draws_many_lanes_closer_and_leaves_the_titles_room() -> None:
    assert fit(400, 3) == Fit(16.0, 13)  # room for all: lanes as wide as ever, 13 connector columns
    assert fit(300, 13) == Fit(10.0, 7)  # 13 lanes in 300 pixels: 10 pixels apart, 7 columns
    assert fit(100, 2) == Fit(16.0, 3)  # never fewer than three columns


def _summary_pixels(image: Any, x: float, top: int, height: int) -> int:
    """Pixels near the summary colour in the one-pixel column `x` of a row."""
    found = 0
    for y in range(top, top + height):
        colour = image.pixelColor(round(x), y)
        if abs(colour.red() - 40) + abs(colour.green() - 140) + abs(colour.blue() - 120) < 90:
            found += 1
    return found


def test_a_narrow_view_bundles_the_connectors_past_its_width_with_a_count(qtbot: QtBot) -> None:
    view = BranchGraphView()
    qtbot.addWidget(view)
    view.resize(300, 900)
    view.show()
    view.fold_box.setChecked(False)
    view.set_tree(_nested_summaries(12))
    model = view.model
    assert model is not None
    limit = model.links.columns(model.link_limit)
    assert 3 <= limit < 12  # 300 pixels: fewer columns than connectors
    cells = _cells(model)
    last_summary = max(r for r, c in enumerate(cells) if c.kind == "summary")
    cell = cells[last_summary]
    assert cell.link_width == limit and cell.links.bundle == limit - 1
    assert cell.links.passing == tuple(range(limit)) and cell.links.bundled == 12 - limit + 1
    # drawn: a dashed line in each column, nothing between two columns, the count's badge right of the bundle
    view.list.scrollTo(model.index(last_summary, 0))
    image = view.list.viewport().grab().toImage()
    rect = view.list.visualRect(model.index(last_summary - 1, 0))
    pitch = view.delegate.lane_width
    assert pitch < 16 or model.layout.width * 16 <= 300 * 0.4
    for column in range(limit):
        x = rect.left() + link_x(cell.link_base, column, pitch)
        assert _summary_pixels(image, x, rect.top(), rect.height()) >= 3, column
        if column < limit - 1:
            assert _summary_pixels(image, x + LINK_PITCH / 2, rect.top(), rect.height()) == 0, column
    end_row = view.list.visualRect(model.index(last_summary, 0))
    badge_x = end_row.left() + link_x(cell.link_base, limit - 1, pitch) + LINK_PITCH / 2 + 5
    assert _summary_pixels(image, badge_x, end_row.top(), end_row.height()) >= 6  # a filled badge
    # wider, the view gives every connector a column
    view.resize(900, 900)
    qtbot.waitUntil(lambda: _cells(model)[last_summary].links.bundle == -1)
    assert _cells(model)[last_summary].link_width == 12
    view.clear()
