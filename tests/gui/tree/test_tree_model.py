"""SessionTreeModel over the engine's SessionTree: model consistency (qtmodeltester), and engine
events applied in place giving the same rows as a fresh build."""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import QModelIndex
from pytestqt.modeltest import ModelTester
from pytestqt.qtbot import QtBot

from piwork.core.ids import SequentialIds
from piwork.core.session.tree import SessionTree, tree_from_values
from piwork.gui.tree.display_tree import GROUP_SIZE
from piwork.gui.tree.tree_model import ACTIVE_ROLE, ENTRY_ID_ROLE, LEAF_ROLE, SessionTreeModel

from .sessions import SessionBuilder, linear_session


def _shape(model: SessionTreeModel, parent: QModelIndex | None = None) -> list[Any]:
    parent = parent or QModelIndex()
    out: list[Any] = []
    for row in range(model.rowCount(parent)):
        index = model.index(row, 0, parent)
        out.append((index.data(), index.data(LEAF_ROLE), _shape(model, index)))
    return out


def _fresh_shape(tree: SessionTree, mode: str, group_size: int = GROUP_SIZE) -> list[Any]:
    model = SessionTreeModel(tree, mode, group_size=group_size)
    try:
        return _shape(model)
    finally:
        model.detach()


def _branched_tree() -> SessionTree:
    b = SessionBuilder()
    u1 = b.user("hello")
    b.assistant("hi")
    b.user("branch A")
    b.assistant("A")
    b.at(u1)
    b.assistant("other reply")
    b.user("branch B")
    return tree_from_values(b.entries, new_id=SequentialIds("n"))


@pytest.mark.parametrize("mode", ["default", "no-tools", "user-only", "labeled-only", "all"])
def test_model_is_consistent_in_every_mode(qtmodeltester: ModelTester, mode: str) -> None:
    tree = _branched_tree()
    tree.set_label("e00001", "start")
    model = SessionTreeModel(tree, mode)
    qtmodeltester.check(model, force_py=True)
    model.detach()


def test_appends_during_a_tool_loop_are_applied_in_place(qtbot: QtBot, qtmodeltester: ModelTester) -> None:
    tree = tree_from_values(linear_session(3), new_id=SequentialIds("n"))
    model = SessionTreeModel(tree)
    qtmodeltester.check(model, force_py=True)
    resets: list[int] = []
    model.modelReset.connect(lambda: resets.append(1))
    inserted: list[int] = []
    model.rowsInserted.connect(lambda *_a: inserted.append(1))
    tree.append_message({"role": "user", "content": "more", "timestamp": 1})
    tree.append_message({"role": "assistant", "content": [{"type": "toolCall", "id": "c", "name": "ls",
                         "arguments": {}}], "stopReason": "toolUse", "timestamp": 2})  # fmt: skip
    assert model.landing_index().data(LEAF_ROLE)
    tree.append_message({"role": "toolResult", "toolCallId": "c", "toolName": "ls", "content": [],
                         "isError": False, "timestamp": 3})  # fmt: skip
    tree.append_message({"role": "assistant", "content": [{"type": "text", "text": "done"}],
                         "stopReason": "stop", "timestamp": 4})  # fmt: skip
    tree.set_label(str(tree.leaf_id), "finished")  # label entry hidden, target row refreshed
    tree.append_model_change("p", "m3")
    assert resets == []
    assert len(inserted) == 4
    for mode in ("default", "all"):
        model.set_filter_mode(mode)
        shape = _shape(model)
        tree.append_message({"role": "user", "content": f"in {mode}", "timestamp": 5})
        assert _shape(model) == _fresh_shape(tree, mode)
        assert shape != _shape(model)
    assert model.landing_index().data().startswith("● user: in all")
    assert model.landing_index().data(ACTIVE_ROLE)
    model.detach()


def test_navigation_and_new_branch_rebuild_to_the_same_rows(qtbot: QtBot) -> None:
    tree = _branched_tree()
    model = SessionTreeModel(tree)
    tree.branch("e00002")
    assert _shape(model) == _fresh_shape(tree, "default")
    tree.append_message({"role": "user", "content": "branch C", "timestamp": 9})  # third child of e00002
    assert _shape(model) == _fresh_shape(tree, "default")
    assert model.landing_index().data() == "● user: branch C"
    # branch points "hello" and "hi": the active child goes on in the same list, the others nest
    assert [model.index(r, 0).data() for r in range(model.rowCount())] == [
        "user: hello", "assistant: hi", "● user: branch C",
    ]  # fmt: skip
    hello, hi = model.index(0, 0), model.index(1, 0)
    assert [model.index(r, 0, hello).data() for r in range(model.rowCount(hello))] == [
        "assistant: other reply"
    ]
    assert [model.index(r, 0, hi).data() for r in range(model.rowCount(hi))] == ["user: branch A"]
    tree.reset_leaf()
    assert not model.landing_index().isValid()
    tree.append_message({"role": "user", "content": "new root", "timestamp": 10})
    assert _shape(model) == _fresh_shape(tree, "default")
    model.detach()


def test_search_and_labels(qtbot: QtBot) -> None:
    tree = _branched_tree()
    model = SessionTreeModel(tree, "labeled-only")
    assert model.rowCount() == 0
    tree.set_label("e00004", "keep")
    assert model.rowCount() == 1 and model.index(0, 0).data() == "[keep] assistant: A"
    tree.set_label("e00004", None)
    assert model.rowCount() == 0
    model.set_filter_mode("default")
    model.set_search("branch")
    assert [model.index(r, 0).data() for r in range(model.rowCount())] == [
        "● user: branch B",
        "user: branch A",
    ]
    model.detach()


@pytest.mark.parametrize("group_size", [GROUP_SIZE, 3])
@pytest.mark.parametrize("seed", range(5))
def test_random_edits_keep_the_model_equal_to_a_fresh_build(
    qtmodeltester: ModelTester, seed: int, group_size: int
) -> None:
    """Appends (messages of every kind, labels, bookkeeping), moves and resets in random order: after
    each one the model's rows equal a model built from scratch, and the model stays consistent."""
    import random

    rng = random.Random(seed)
    tree = tree_from_values(linear_session(2), new_id=SequentialIds("n"))
    model = SessionTreeModel(
        tree, rng.choice(["default", "no-tools", "all", "user-only"]), group_size=group_size
    )
    qtmodeltester.check(model, force_py=True)
    for step in range(60):
        action = rng.random()
        ids = [r.id for r in tree.records]
        if action < 0.15 and ids:
            tree.branch(rng.choice(ids))
        elif action < 0.2:
            tree.reset_leaf()
        elif action < 0.3 and ids:
            tree.set_label(rng.choice(ids), rng.choice(["x", None]))
        elif action < 0.35:
            tree.append_model_change("p", f"m{step}")
        else:
            kind = rng.choice(["user", "call", "result", "answer"])
            if kind == "user":
                message: dict[str, Any] = {"role": "user", "content": f"u{step}", "timestamp": step}
            elif kind == "call":
                message = {"role": "assistant", "content": [{"type": "toolCall", "id": f"c{step}", "name": "ls",
                           "arguments": {}}], "stopReason": "toolUse", "timestamp": step}  # fmt: skip
            elif kind == "result":
                message = {"role": "toolResult", "toolCallId": "c", "toolName": "ls", "content": [],
                           "isError": False, "timestamp": step}  # fmt: skip
            else:
                message = {"role": "assistant", "content": [{"type": "text", "text": f"a{step}"}],
                           "stopReason": "stop", "timestamp": step}  # fmt: skip
            tree.append_message(message)
        assert _shape(model) == _fresh_shape(tree, model.filter_mode, group_size), f"step {step}"
    model.detach()


def test_long_lists_are_grouped_and_grow_in_place(qtmodeltester: ModelTester) -> None:
    tree = tree_from_values(linear_session(3), new_id=SequentialIds("n"))  # 9 shown rows in one list
    model = SessionTreeModel(tree, "all", group_size=3)
    qtmodeltester.check(model, force_py=True)
    groups = [model.index(r, 0).data() for r in range(model.rowCount())]
    assert groups == ["entries 1–3", "entries 4–6", "● entries 7–9"]
    last = model.index(2, 0)
    assert model.rowCount(last) == 3 and model.index(2, 0, last).data(LEAF_ROLE)
    assert model.index(0, 0, last).data(ENTRY_ID_ROLE) is not None and last.data(ENTRY_ID_ROLE) is None
    resets: list[int] = []
    model.modelReset.connect(lambda: resets.append(1))
    tree.append_message({"role": "user", "content": "starts a new group", "timestamp": 9})
    tree.append_message({"role": "assistant", "content": [{"type": "text", "text": "joins it"}],
                         "stopReason": "stop", "timestamp": 10})  # fmt: skip
    assert resets == [] and model.rowCount() == 4
    assert model.index(3, 0).data() == "● entries 10–11"
    assert _shape(model) == _fresh_shape(tree, "all", 3)
    model.detach()
