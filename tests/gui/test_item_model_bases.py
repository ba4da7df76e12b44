"""The model bases themselves (flat_models, nested_models): Qt's model checks on the smallest models built
on them, the change notices they send (and do not send), and the loud failure of a model that forgets
to say how many rows it shows."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest
from PySide6.QtCore import QAbstractItemModel, Qt
from pytestqt.modeltest import ModelTester
from pytestqt.qtbot import QtBot

from piwork.gui.flat_models import AnyIndex, FlatListModel
from piwork.gui.nested_models import GroupedRows, NestedRows


class Words(FlatListModel):
    def __init__(self, words: list[str]) -> None:
        super().__init__()
        self.words = words

    def shown_rows(self) -> int:
        return len(self.words)

    def data(self, index: AnyIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if self.is_shown(index) and role == Qt.ItemDataRole.DisplayRole:
            return self.words[index.row()]
        return None


class Shelves(GroupedRows, QAbstractItemModel):
    columns = ("Title", "Author")

    def __init__(self, shelves: list[list[str]]) -> None:
        super().__init__()
        self.shelves = shelves

    def group_count(self) -> int:
        return len(self.shelves)

    def member_count(self, group: int) -> int:
        return len(self.shelves[group])

    def data(self, index: AnyIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if role != Qt.ItemDataRole.DisplayRole or not index.isValid():
            return None
        group = self.group_of(index)
        if group is None:
            return f"shelf {index.row()}" if index.column() == 0 else ""
        return f"{self.shelves[group][index.row()]} ({index.column()})"


@dataclass
class Outline:
    rows: dict[int | None, list[int]] = field(default_factory=dict)
    container: dict[int, int | None] = field(default_factory=dict)
    row: dict[int, int] = field(default_factory=dict)

    def add(self, node: int, parent: int | None) -> None:
        siblings = self.rows.setdefault(parent, [])
        self.row[node] = len(siblings)
        self.container[node] = parent
        siblings.append(node)


class OutlineModel(NestedRows, QAbstractItemModel):
    def __init__(self, outline: Outline) -> None:
        super().__init__()
        self.nodes = self.outline = outline

    def data(self, index: AnyIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        return (
            f"node {index.internalId()}" if index.isValid() and role == Qt.ItemDataRole.DisplayRole else None
        )


def _outline() -> Outline:
    """1 ─┬─ 2 ── 4
       └─ 3
    5"""
    outline = Outline()
    for node, parent in ((1, None), (2, 1), (3, 1), (4, 2), (5, None)):
        outline.add(node, parent)
    return outline


def test_flat_rows_insert_and_remove_in_the_middle(qtbot: QtBot, qtmodeltester: ModelTester) -> None:
    model = Words(["a", "d"])
    with qtbot.waitSignal(model.rowsInserted) as inserted, model.inserting_rows(1, 2):
        model.words[1:1] = ["b", "c"]
    assert inserted.args[1:] == [1, 2]
    with qtbot.waitSignal(model.rowsRemoved) as removed, model.removing_rows(0, 1):
        del model.words[0]
    assert removed.args[1:] == [0, 0]
    assert [model.index(r).data() for r in range(model.rowCount())] == ["b", "c", "d"]
    qtmodeltester.check(model)


def test_nothing_is_announced_for_no_rows_and_a_failed_change_still_ends(qtbot: QtBot) -> None:
    model = Words(["a"])
    inserted, removed = qtbot.assertNotEmitted(model.rowsInserted), qtbot.assertNotEmitted(model.rowsRemoved)
    with inserted, removed, model.appending_rows(0), model.removing_rows(0, 0):
        pass
    ended: list[int] = []
    model.rowsInserted.connect(lambda _parent, first, _last: ended.append(first))
    with pytest.raises(ValueError), model.appending_rows(1):
        model.words.append("b")
        raise ValueError("the change failed half way")
    assert ended == [1]  # views were told the insert is over: they are not left waiting for it


def test_grouped_rows(qtbot: QtBot, qtmodeltester: ModelTester) -> None:
    model = Shelves([["Dune", "Emma"], []])
    assert model.rowCount() == 2 and model.columnCount() == 2
    assert model.headerData(1, Qt.Orientation.Horizontal) == "Author"
    shelf = model.index(0, 0)
    book = model.index(1, 1, shelf)
    assert model.is_group(shelf) and not model.is_group(book)
    assert model.group_of(shelf) is None and model.group_of(book) == 0
    assert book.data() == "Emma (1)" and book.parent() == shelf
    assert model.rowCount(model.index(0, 1)) == 0  # only the first column has children
    assert not model.index(2, 0, shelf).isValid() and not model.index(0, 0, book).isValid()
    with qtbot.waitSignal(model.rowsInserted) as inserted, model.appending_groups(1):
        model.shelves.append(["Ulysses"])
    assert not inserted.args[0].isValid() and inserted.args[1:] == [2, 2]
    with qtbot.waitSignal(model.rowsInserted) as inserted, model.inserting_rows(0, 1, model.index(1, 0)):
        model.shelves[1].append("Beloved")
    assert (
        inserted.args[0] == model.index(1, 0) and model.index(0, 0, model.index(1, 0)).data() == "Beloved (0)"
    )
    assert model.flags(book) == Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
    qtmodeltester.check(model)


def test_nested_rows(qtbot: QtBot, qtmodeltester: ModelTester) -> None:
    outline = _outline()
    model = OutlineModel(outline)
    qtmodeltester.check(model)
    four = model.index_of_node(4)
    assert four.data() == "node 4" and four.parent() == model.index_of_node(2)
    assert (
        model.index_of_node(2).parent() == model.index_of_node(1)
        and not model.index_of_node(1).parent().isValid()
    )
    assert model.rowCount(model.index_of_node(1)) == 2 and model.rowCount(four) == 0
    assert not model.index_of_node(None).isValid() and not model.index_of_node(99).isValid()
    with qtbot.waitSignal(model.rowsInserted) as inserted, model.inserting_rows(1, 1, model.index_of_node(2)):
        outline.add(6, 2)
    assert inserted.args[0] == model.index_of_node(2) and inserted.args[1:] == [1, 1]
    with qtbot.waitSignal(model.dataChanged) as changed:
        assert model.node_changed(6)
    assert changed.args[0] == changed.args[1] == model.index_of_node(6)
    with qtbot.assertNotEmitted(model.dataChanged):
        assert not model.node_changed(99)
    qtmodeltester.check(model)


def test_a_model_that_forgets_its_count_names_itself() -> None:
    class Forgetful(FlatListModel):
        pass

    class NoShelves(GroupedRows, QAbstractItemModel):
        pass

    with pytest.raises(NotImplementedError, match="Forgetful"):
        Forgetful().rowCount()
    with pytest.raises(NotImplementedError, match="NoShelves"):
        NoShelves().rowCount()
