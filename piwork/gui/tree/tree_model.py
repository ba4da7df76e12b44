"""SessionTreeModel: a QAbstractItemModel over the engine's `SessionTree`.

Rows come from `DisplayTree` (display_tree.py); a QModelIndex's internal id is the entry's record
number (`EntryRecord.seq`), so parent lookups are dictionary hits. Engine change events drive the
model: an entry appended at the leaf (the common case while the agent works) is inserted in place,
and a pure tool-call turn that stops being the leaf is swapped out in place; navigation, filter and
search changes rebuild the display tree (one O(n) pass) inside a reset. Rows of any depth: built on
`NestedRows` (nested_models.py), with the display tree as its hierarchy.

A list longer than `group_size` rows shows as group rows ("entries 1–1000", ...) that a view lays
out only when expanded: a QTreeView re-lays out every expanded row after each insert, so with
100k entries in one flat list each appended message cost a full pass over them. Groups do the job
`canFetchMore`/`fetchMore` would do (which cannot help here: the leaf, where a session opens, is at
the end of the longest list, so every batch would be fetched at once).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QAbstractItemModel, QModelIndex, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QFont

from piwork.gui.inert_text import plain_tip
from piwork.gui.nested_models import NestedRows
from piwork.gui.tree.display_tree import (
    GROUP_SIZE,
    DisplayTree,
    Visibility,
    build_display_tree,
    is_pure_tool_call_turn,
    normalize_mode,
)
from piwork.gui.tree.title_reader import TitleReader

if TYPE_CHECKING:
    from piwork.core.session import SessionTree, TreeEvent
    from piwork.gui.flat_models import AnyIndex
    from piwork.gui.tree.context_marks import EditMark
    from piwork.gui.tree.tree_search import SearchMatches

ENTRY_ID_ROLE = Qt.ItemDataRole.UserRole + 1
ACTIVE_ROLE = Qt.ItemDataRole.UserRole + 2
LEAF_ROLE = Qt.ItemDataRole.UserRole + 3
LABEL_ROLE = Qt.ItemDataRole.UserRole + 4
TYPE_ROLE = Qt.ItemDataRole.UserRole + 5
ROLE_ROLE = Qt.ItemDataRole.UserRole + 6
EDIT_MARK_ROLE = Qt.ItemDataRole.UserRole + 7  # the EditMark of an entry a context edit changes, or None

_ACTIVE_BACKGROUND = QBrush(QColor(80, 140, 230, 40))
_GROUP_COLOUR = QBrush(QColor(110, 110, 160))
_KIND_COLOURS = {
    "compaction": QColor(176, 120, 20),
    "branch_summary": QColor(40, 140, 120),
    "toolResult": QColor(120, 120, 120),
}
_FAILED_COLOUR = QColor(190, 40, 40)  # an assistant reply that failed (the title says why)
_LEFT_OUT_COLOUR = QColor(128, 128, 128)  # an entry the model no longer sees


class SessionTreeModel(NestedRows, QAbstractItemModel):
    rebuilt = Signal()

    def __init__(
        self,
        tree: SessionTree,
        mode: str = "default",
        parent: Any = None,
        *,
        display: DisplayTree | None = None,
        group_size: int = GROUP_SIZE,
    ) -> None:
        """`display`: a display tree already built for `mode` (e.g. in a loading thread);
        `group_size`: rows per group of a long list."""
        super().__init__(parent)
        self._tree = tree
        self._mode = normalize_mode(mode)
        self._query = ""
        self._matches: SearchMatches | None = None
        self.generation = 0  # counts the tree's changes: a layout computed meanwhile is out of date
        self._marks: dict[str, EditMark] = {}  # entries the context edits in force change
        self._bold = QFont()
        self._bold.setBold(True)
        self._group_size = group_size
        self._display = self.nodes = display if display is not None else self._build()
        self._leaf_seq = self._current_leaf_seq()
        self._titles = TitleReader(tree, self)  # previews not in the index are read off the GUI thread
        self._titles.ready.connect(self._on_titles_ready)
        self._unsubscribe: Callable[[], None] | None = tree.subscribe(self._on_tree_event)

    # -- public API ---------------------------------------------------------------------------
    @property
    def tree(self) -> SessionTree:
        return self._tree

    @property
    def display(self) -> DisplayTree:
        return self._display

    @property
    def filter_mode(self) -> str:
        return self._mode

    def set_filter_mode(self, mode: str) -> None:
        mode = normalize_mode(mode)
        if mode != self._mode:
            self._mode = mode
            self.rebuild()

    @property
    def query(self) -> str:
        return self._query

    def set_search(self, query: str) -> None:
        if query != self._query:
            self._query = query
            self._matches = None
            self.rebuild()

    @property
    def matches(self) -> SearchMatches | None:
        return self._matches

    def display_work(self, mode: str, query: str, matches: SearchMatches | None) -> Callable[[], DisplayTree]:
        """The display tree for this filter and search, to build in a worker thread (then `show_display`)."""
        tree, group_size = self._tree, self._group_size
        return lambda: build_display_tree(tree, normalize_mode(mode), query, group_size, matches)

    def show_display(
        self, mode: str, query: str, matches: SearchMatches | None, display: DisplayTree
    ) -> None:
        """Show a display tree built by `display_work` (for the tree as it still is: see `generation`)."""
        self._mode, self._query, self._matches = normalize_mode(mode), query, matches
        with self.replacing_rows():
            self._display = self.nodes = display
            self._leaf_seq = self._current_leaf_seq()
        self.rebuilt.emit()

    def rebuild(self) -> None:
        with self.replacing_rows():
            self._display = self.nodes = self._build()
            self._leaf_seq = self._current_leaf_seq()
        self.rebuilt.emit()

    def _build(self) -> DisplayTree:
        return build_display_tree(self._tree, self._mode, self._query, self._group_size, self._matches)

    def set_edit_marks(self, marks: dict[str, EditMark]) -> None:
        """Mark the entries the context edits in force leave out or replace (see context_marks)."""
        changed = set(marks) ^ set(self._marks) | {k for k in marks if self._marks.get(k) != marks[k]}
        self._marks = dict(marks)
        for entry_id in changed:
            index = self.index_of_id(entry_id)
            if index.isValid():
                self.dataChanged.emit(index, index)

    def edit_marks(self) -> dict[str, EditMark]:
        return dict(self._marks)

    def edit_mark(self, entry_id: str | None) -> EditMark | None:
        return self._marks.get(entry_id) if entry_id is not None else None

    def detach(self) -> None:
        """Stop following the engine's tree (call before dropping the model)."""
        self._titles.shutdown()
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None

    def index_of_seq(self, seq: int | None) -> QModelIndex:
        return self.index_of_node(seq)

    def index_of_id(self, entry_id: str | None) -> QModelIndex:
        record = self._tree.record(entry_id) if entry_id is not None else None
        return self.index_of_seq(record.seq if record is not None else None)

    def nearest_shown_index(self, entry_id: str | None) -> QModelIndex:
        """The row of an entry, or of its nearest ancestor shown (invalid when none is)."""
        record = self._tree.record(entry_id) if entry_id is not None else None
        if record is None:
            return QModelIndex()
        shown, seen = self._display.container, set()
        while record is not None and record.seq not in seen:  # up to the first shown (not the whole path)
            if record.seq in shown:
                return self.index_of_seq(record.seq)
            seen.add(record.seq)
            record = self._tree.record(record.parent_id) if record.parent_id is not None else None
        return QModelIndex()

    def landing_index(self) -> QModelIndex:
        """The row that stands for the leaf (its nearest shown ancestor when the leaf is hidden)."""
        return self.index_of_seq(self._display.landing)

    # -- Qt model interface ---------------------------------------------------------------------
    # index/parent/rowCount come from NestedRows over the display tree (`nodes`, set with `_display`);
    # flags() and hasChildren() are left to Qt's defaults (selectable + enabled, and rowCount() > 0).
    def data(self, index: AnyIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        seq = index.internalId()
        if self._display.is_group(seq):
            return self._group_data(seq, role)
        record = self._tree.records[seq]
        if role == Qt.ItemDataRole.DisplayRole:
            label = self._tree.label(record.id)
            marker = "● " if seq == self._display.landing else ""
            tag = f"[{label}] " if label else ""
            mark = self._marks.get(record.id)
            return f"{marker}{tag}{mark.prefix if mark else ''}{self._titles.title(record)}"
        if role == EDIT_MARK_ROLE:
            return self._marks.get(record.id)
        if role == ENTRY_ID_ROLE:
            return record.id
        if role == ACTIVE_ROLE:
            return seq in self._display.active
        if role == LEAF_ROLE:
            return seq == self._display.landing
        if role == LABEL_ROLE:
            return self._tree.label(record.id)
        if role == TYPE_ROLE:
            return record.type
        if role == ROLE_ROLE:
            return record.role
        if role == Qt.ItemDataRole.FontRole and seq == self._display.landing:
            return self._bold
        if role == Qt.ItemDataRole.BackgroundRole and seq in self._display.active:
            return _ACTIVE_BACKGROUND
        if role == Qt.ItemDataRole.ForegroundRole:
            mark = self._marks.get(record.id)
            if mark is not None and mark.left_out:
                return QBrush(_LEFT_OUT_COLOUR)
            if record.role == "assistant" and record.meta.get("stopReason") == "error":
                return QBrush(_FAILED_COLOUR)
            colour = _KIND_COLOURS.get(record.role or "") or _KIND_COLOURS.get(str(record.type))
            return QBrush(colour) if colour is not None else None
        if role == Qt.ItemDataRole.ToolTipRole:
            mark = self._marks.get(record.id)
            about = f"\n{mark.tooltip()}" if mark is not None else ""
            return plain_tip(f"{record.type} {record.id} · {record.timestamp}{about}")
        return None

    def _group_data(self, group: int, role: int) -> Any:
        members = self._display.rows.get(group, [])
        if role == Qt.ItemDataRole.DisplayRole:
            first = self._display.row[group] * self._display.group_size + 1
            landing = self._display.landing
            holds_leaf = landing is not None and self._display.container.get(landing) == group
            marker = "● " if holds_leaf else ""
            return f"{marker}entries {first:,}–{first + len(members) - 1:,}"
        if role == Qt.ItemDataRole.ForegroundRole:
            return _GROUP_COLOUR
        return None

    # -- engine events ------------------------------------------------------------------------
    def _current_leaf_seq(self) -> int | None:
        record = self._tree.record(self._tree.leaf_id) if self._tree.leaf_id is not None else None
        return record.seq if record is not None else None

    def _on_tree_event(self, event: TreeEvent) -> None:
        self.generation += 1
        if event.kind == "append" and self._append_in_place(event.entry_id):
            return
        if event.kind == "label" and self._mode != "labeled-only" and not self._query:
            self._refresh_seq(self._seq_of(event.entry_id))
            return
        self.rebuild()

    def _on_titles_ready(self, seqs: list[int]) -> None:
        for seq in seqs:
            self.node_changed(seq)

    def _seq_of(self, entry_id: str | None) -> int | None:
        record = self._tree.record(entry_id) if entry_id is not None else None
        return record.seq if record is not None else None

    def _refresh_seq(self, seq: int | None) -> None:
        """Repaint an entry's row and, when it sits in a group, the group's row (its leaf marker)."""
        if seq is not None and self.node_changed(seq):
            container = self._display.container.get(seq)
            if self._display.is_group(container):
                self.node_changed(container)

    def _append_in_place(self, entry_id: str | None) -> bool:
        """Show an entry appended under the previous leaf without a reset; False means "rebuild"."""
        display = self._display
        records = self._tree.records
        new = self._tree.record(entry_id) if entry_id is not None else None
        old = records[self._leaf_seq] if self._leaf_seq is not None else None
        if new is None or old is None or new.seq != len(records) - 1 or new.parent_id != old.id:
            return False
        old_shown = old.seq in display.container
        drop_old = old_shown and is_pure_tool_call_turn(old)  # shown only while it was the leaf
        parent: int | None
        if old_shown:
            if display.shown_children.get(old.seq, 0):
                return False  # a new branch appears
            parent = display.shown_parent[old.seq] if drop_old else old.seq
            if drop_old and (
                display.rows[display.container[old.seq]][-1] != old.seq
                or display.shown_children.get(parent) != 1
            ):
                return False
        else:
            parent = display.landing
        shows = Visibility(self._tree, self._mode, self._query, new.seq, self._matches).shows(new)
        if shows and not drop_old and display.shown_children.get(parent, 0):
            return False
        if (
            drop_old
            and display.is_group(display.container[old.seq])
            and len(display.rows[display.container[old.seq]]) < 2
        ):
            return False  # its group would be left empty
        previous_landing = display.landing
        if drop_old:
            container = display.container[old.seq]
            with self.removing_rows(display.row[old.seq], 1, self.index_of_seq(container)):
                display.remove_last(old.seq)
        if shows:
            placement = display.place(new.seq, parent, is_head=False)
            if placement is None:  # the list grows past a group's size: lay it out again
                self.rebuild()
                return True
            target = placement.container
            if placement.new_group:
                with self.inserting_rows(placement.position, 1, self.index_of_seq(target)):
                    target = display.add_group(target)
            position = len(display.rows.get(target, ()))
            with self.inserting_rows(position, 1, self.index_of_seq(target)):
                display.add(new.seq, parent, False, target)
        display.active.add(new.seq)
        display.landing = new.seq if shows else parent
        self._leaf_seq = new.seq
        self._refresh_seq(previous_landing)
        self._refresh_seq(display.landing)
        return True
