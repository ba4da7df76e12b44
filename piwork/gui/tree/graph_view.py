"""BranchGraphView: the session tree drawn as a branch graph (a one-column table over `BranchGraphModel`).

It owns no session behaviour: it reports the selected entry (`current_changed`), activation
(Enter/double-click, `activated`) and context-menu requests (`menu_requested` with a global
position); the tree panel answers them with the same actions as its outline. Double-clicking a fold
("… 40 messages") opens it; selecting a branch summary tints the branch it summarises.

It shows what the outline shows (`set_filter`: the outline's mode and search words). While the graph
is hidden a new filter waits, and is applied (one layout) when it is shown again.

A session's graph is laid out in a worker thread when it is first shown ("Laying out the graph…" over
the empty view meanwhile; most of a second to several for a long session with many side branches), then
shown in one step: laid out for the tree as it was when the worker started, and the entries appended
since are taken in as they would have been by a graph already shown (`BranchGraphModel.catch_up`). A
filter or folding changed meanwhile, or any other change of the tree (a move, a label, a reload, an
appended entry that forks), lays it out again. The summary
connectors get as many columns as a share of the view's width allows, and many lanes are drawn closer
together in a narrow view (`graph_delegate.fit`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from PySide6.QtCore import QEvent, QItemSelectionModel, QModelIndex, QObject, QPoint, Qt, Signal
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QHeaderView,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from piwork.core.errors import PiworkError
from piwork.core.session import FOLD_AT, Fold
from piwork.gui.background import BackgroundTasks, LatestWins
from piwork.gui.flow_layout import FlowLayout
from piwork.gui.inert_text import plain_label
from piwork.gui.tree.graph_delegate import GraphDelegate, fit
from piwork.gui.tree.title_reader import loop_running
from piwork.gui.tree.tree_model import ENTRY_ID_ROLE

if TYPE_CHECKING:
    from piwork.core.session import SessionTree, TreeEvent
    from piwork.gui.tree.context_marks import EditMark
    from piwork.gui.tree.graph_model import BranchGraphModel, GraphPlan, Snapshot
    from piwork.gui.tree.tree_search import SearchMatches

BUILDING_TEXT = "Laying out the graph…"
LAYOUT_ATTEMPTS = 3  # layouts computed in a worker while entries stream in, before one on the GUI thread

T = TypeVar("T")


class BranchGraphView(QWidget):
    current_changed = Signal(object)  # entry id (str) or None
    activated = Signal(str)
    menu_requested = Signal(QPoint)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model: BranchGraphModel | None = None
        # The tree shown while the graph is out of view (another tab, the panel closed): laid out once shown.
        self._pending: SessionTree | None = None
        self._edit_marks: dict[str, EditMark] = {}
        self._filter = ("default", "")
        self._matches: SearchMatches | None = None
        self._tasks = BackgroundTasks()
        self._laying_out: asyncio.Task[None] | None = None
        self._layout_kind = ""  # "filter" or "rows" while a layout is computed
        self._builds = LatestWins()  # the whole graph of a tree first shown, laid out in a worker
        self._building: SessionTree | None = None  # the tree whose graph that is
        self._stop_listening: Callable[[], None] | None = None  # the tree's changes noted meanwhile
        self.fold_box = QCheckBox("Fold long runs")
        self.fold_box.setChecked(True)
        self.fold_box.setToolTip(
            f"Show a run of {FOLD_AT} or more of the agent's steps between two prompts (replies, tool"
            " calls and results) as one row; prompts, labels, forks and summaries always keep theirs"
        )
        # A one-column table, not a list view: its header keeps 100k fixed-height rows as one size,
        # while a list view lays out every row again whenever a streamed entry is inserted.
        self.list = QTableView()
        self.list.setAccessibleName("Branch graph")
        self.list.setAccessibleDescription(
            "Branches of the session as a graph; Enter goes to the selected entry."
        )
        self.list.setSelectionMode(
            QAbstractItemView.SelectionMode.ExtendedSelection
        )  # Ctrl+click a second entry to compare
        self.list.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.list.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.list.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.list.setShowGrid(False)
        self.list.setWordWrap(False)
        self.list.setTabKeyNavigation(False)
        self.list.setMouseTracking(True)
        self.list.horizontalHeader().hide()
        self.list.horizontalHeader().setStretchLastSection(True)
        delegate = self.delegate = GraphDelegate(self.list)
        self.list.setItemDelegate(delegate)
        rows = self.list.verticalHeader()
        rows.hide()
        rows.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        rows.setMinimumSectionSize(1)
        rows.setDefaultSectionSize(delegate.row_height(self.list.font()))
        # Over the empty view while the graph is laid out in a worker (the view keeps the focus).
        self.notice = plain_label(BUILDING_TEXT, self.list.viewport())
        self.notice.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.notice.setWordWrap(True)
        self.notice.setEnabled(False)  # the palette's quieter text
        self.notice.setMargin(12)
        self.notice.hide()
        # The fold box, then the buttons the tree panel adds to ``toolbar``: one row, or in a narrower
        # dock the buttons (kept together) below the box, or in a narrow one each button on a row.
        buttons = QWidget()
        self.toolbar = FlowLayout(buttons, spacing=4)
        self.toolbar.setContentsMargins(0, 0, 0, 0)
        top = FlowLayout(spacing=4)
        top.setContentsMargins(4, 2, 4, 2)
        top.addWidget(self.fold_box)
        top.addStretch()
        top.addWidget(buttons)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addLayout(top)
        layout.addWidget(self.list, 1)
        self.fold_box.toggled.connect(self._on_fold_toggled)
        self.list.activated.connect(self._on_activated)
        self.list.customContextMenuRequested.connect(self._on_menu)
        self.list.viewport().installEventFilter(self)  # its width decides the connector columns

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Resize and watched is self.list.viewport():
            self.notice.setGeometry(self.list.viewport().rect())
            self._fit_view()
        return super().eventFilter(watched, event)

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if self._pending is not None:
            tree, self._pending = self._pending, None
            self._build(tree)
        self._apply_filter()

    def set_filter(self, mode: str, query: str = "", matches: SearchMatches | None = None) -> None:
        """Show the entries the outline shows with this filter mode and these search words (`matches`:
        the outline's search result); laid out in a worker when the graph is visible, else once shown."""
        self._filter = (mode, query)
        self._matches = matches
        if self.isVisible():
            self._apply_filter()

    def _apply_filter(self) -> None:
        model = self.model
        if model is None or (model.filter_mode, model.query) == self._filter:
            if self._layout_kind == "filter":
                self._stop_layout()  # a filter set back before the one laid out was shown
            return
        mode, query = self._filter
        matches = self._matches
        if not loop_running():  # a script driving Qt by hand: lay it out now
            keep = self.current_entry_id()
            model.set_filter(mode, query, matches)
            self._keep(keep)
            return
        fold_at = FOLD_AT if self.fold_box.isChecked() else None  # (a folding change may be in flight)
        self._lay_out(
            lambda: model.filter_work(mode, query, matches, fold_at), model.show_plan, self._keep, "filter"
        )

    def _keep(self, entry_id: str | None) -> None:
        """After a new layout: the entry selected before, or its nearest shown ancestor when it is now
        hidden or folded away (never a fold's row, which names no entry)."""
        if entry_id is None or self.model is None:
            return
        index = self.model.shown_index_of_id(entry_id)
        if index.isValid():
            if index != self.list.currentIndex():
                self.list.setCurrentIndex(index)
            self.list.scrollTo(index, QAbstractItemView.ScrollHint.EnsureVisible)

    def _stop_layout(self) -> None:
        self._layout_kind = ""
        if self._laying_out is not None:
            self._laying_out.cancel()
            self._laying_out = None

    @property
    def laying_out(self) -> bool:
        """Whether the graph, or a new layout of it, is being computed in a worker thread."""
        return self._building is not None or (self._laying_out is not None and not self._laying_out.done())

    def _lay_out(
        self,
        make_work: Callable[[], Callable[[], T]],
        show: Callable[[T], None],
        then: Callable[[str | None], object],
        kind: str = "rows",
    ) -> None:
        """Compute a layout in a worker thread (`make_work()` gives the work), then `show` it and `then`
        select the entry that was selected; a newer layout cancels this one."""
        self._stop_layout()
        self._layout_kind = kind
        self._laying_out = self._tasks.spawn(self._run_layout(make_work, show, then))

    async def _run_layout(
        self,
        make_work: Callable[[], Callable[[], T]],
        show: Callable[[T], None],
        then: Callable[[str | None], object],
    ) -> None:
        model = self.model
        assert model is not None
        for _attempt in range(LAYOUT_ATTEMPTS):
            generation = model.generation
            work = make_work()
            try:
                result = await asyncio.to_thread(work)
            except RuntimeError:  # the tree changed under the worker (a dict resized): again
                continue
            except (OSError, PiworkError):  # the session file could not be read back: keep what is shown
                return
            if model is not self.model:
                return
            if model.generation == generation:  # else streamed entries came meanwhile: again
                break
        else:  # the tree keeps changing: lay it out here
            result = make_work()()
        keep = self.current_entry_id()
        show(result)
        then(keep)

    def _fit_view(self) -> None:
        if self.model is not None:
            fitted = fit(self.list.viewport().width(), self.model.layout.width)
            if fitted.lane_width != self.delegate.lane_width:
                self.delegate.lane_width = fitted.lane_width
                self.list.viewport().update()
            self.model.set_link_limit(fitted.link_columns)

    def set_tree(self, tree: SessionTree | None) -> None:
        """Show ``tree``: at once when the graph is on screen, else when it is first shown (a long session's
        graph is hundreds of thousands of objects and most of a second to lay out)."""
        self.clear()
        if tree is None:
            return
        if not self.isVisible():
            self._pending = tree
            return
        self._build(tree)

    def _build(self, tree: SessionTree) -> None:
        """Lay out the graph of `tree`: in a worker while the window's loop runs, else at once."""
        if not loop_running():  # a script driving Qt by hand
            # loaded with the session's parts, after the window's first frame (the engine's layout comes with it)
            from piwork.gui.tree.graph_model import BranchGraphModel

            mode, query = self._filter
            fold_at = FOLD_AT if self.fold_box.isChecked() else None
            self._show_model(BranchGraphModel(tree, self, fold_at=fold_at, mode=mode, query=query))
            return
        self._start_build(tree)

    def _start_build(self, tree: SessionTree) -> None:
        """Lay out the graph of `tree` as it is now in a worker, noting its changes meanwhile (a newer
        build supersedes this one)."""
        from piwork.gui.tree.display_tree import Visibility
        from piwork.gui.tree.graph_model import plan_graph, snapshot

        self._stop_build()
        mode, query = self._filter
        fold_at = FOLD_AT if self.fold_box.isChecked() else None
        visibility = Visibility(tree, mode, query, matches=self._matches)
        wanted = (visibility.mode, query, fold_at)
        moment = snapshot(tree)
        changes: list[TreeEvent] = []
        self._building = tree
        self._stop_listening = tree.subscribe(changes.append)
        self.notice.setText(BUILDING_TEXT)
        self.notice.setGeometry(self.list.viewport().rect())
        self.notice.show()
        self._builds.start(
            lambda _request: plan_graph(tree, visibility, fold_at, None, moment),
            lambda plan: self._on_built(tree, wanted, moment, changes, plan),
            lambda error: self._on_build_failed(tree, error),
            failures=(RuntimeError, OSError, PiworkError),
        )

    def _on_built(
        self,
        tree: SessionTree,
        wanted: tuple[str, str, int | None],
        moment: Snapshot,
        changes: list[TreeEvent],
        plan: GraphPlan,
    ) -> None:
        """On the GUI thread: show the graph laid out in the worker, with the entries appended since it
        started; laid out again when the filter, the folding or the tree changed otherwise."""
        from piwork.gui.tree.display_tree import normalize_mode
        from piwork.gui.tree.graph_model import BranchGraphModel

        if tree is not self._building:
            return
        self._unlisten()
        mode, query = self._filter
        fold_at = FOLD_AT if self.fold_box.isChecked() else None
        appended = tree.records[moment.upto :]
        if (
            wanted != (normalize_mode(mode), query, fold_at)
            or len(changes) != len(appended)
            or any(change.kind != "append" for change in changes)
            or any(record.type == "label" for record in appended)  # a label decides what folds
        ):
            self._start_build(tree)
            return
        model = BranchGraphModel(tree, self, plan=plan)
        if not model.catch_up(appended):  # an entry appended since needs a new layout (a fork)
            model.detach()
            model.deleteLater()
            self._start_build(tree)
            return
        self._building = None
        self.notice.hide()
        self._show_model(model)

    def _on_build_failed(self, tree: SessionTree, error: Exception) -> None:
        if tree is not self._building:
            return
        if isinstance(error, RuntimeError):  # the tree changed under the worker (a dict resized): again
            self._start_build(tree)
            return
        self._stop_build()
        self.notice.setText(f"The graph could not be laid out: {error}")
        self.notice.show()

    def _unlisten(self) -> None:
        if self._stop_listening is not None:
            self._stop_listening()
            self._stop_listening = None

    def _stop_build(self) -> None:
        self._builds.cancel()
        self._unlisten()
        self._building = None
        self.notice.hide()

    def _show_model(self, model: BranchGraphModel) -> None:
        self.model = model
        self.model.set_edit_marks(self._edit_marks)
        self.list.setModel(self.model)
        self.list.selectionModel().currentChanged.connect(self._on_current_changed)
        self.model.rebuilt.connect(self.reveal_leaf)
        self.model.rebuilt.connect(self._fit_view)  # the lanes may have changed
        self.model.leaf_moved.connect(self.reveal_leaf)  # after a move elsewhere in the tree
        self.model.rowsInserted.connect(self._after_insert)
        self._fit_view()
        self.reveal_leaf()

    def set_edit_marks(self, marks: dict[str, EditMark]) -> None:
        """Mark the entries the context edits in force change (kept for the models laid out later)."""
        self._edit_marks = dict(marks)
        if self.model is not None:
            self.model.set_edit_marks(self._edit_marks)

    def clear(self) -> None:
        self._stop_layout()
        self._stop_build()
        self._pending = None
        if self.model is not None:
            self.model.detach()
            self.list.setModel(None)
            self.model.deleteLater()
            self.model = None

    def current_entry_id(self) -> str | None:
        value = self.list.currentIndex().data(ENTRY_ID_ROLE)
        return str(value) if value is not None else None

    def selected_entry_ids(self) -> list[str]:
        """The selected entries, top to bottom (folds left out)."""
        if self.model is None:
            return []
        rows = sorted(index.row() for index in self.list.selectionModel().selectedRows())
        ids = (self.model.index(row, 0).data(ENTRY_ID_ROLE) for row in rows)
        return [str(entry_id) for entry_id in ids if entry_id is not None]

    def select(self, entry_id: str | None, unfold: bool = True) -> bool:
        """Select an entry's row (its fold's row when `unfold` is False); no signal loop: the
        selection only changes when it differs."""
        if self.model is None or entry_id is None:
            return False
        index = self.model.index_of_id(entry_id, unfold)
        if not index.isValid():
            return False
        if index != self.list.currentIndex():
            self.list.setCurrentIndex(index)
        self.list.scrollTo(index, QAbstractItemView.ScrollHint.EnsureVisible)
        return True

    def reveal_leaf(self) -> None:
        if self.model is None:
            return
        index = self.model.leaf_index()
        if index.isValid():
            self.list.setCurrentIndex(index)
            self.list.scrollTo(index, QAbstractItemView.ScrollHint.PositionAtCenter)

    def _after_insert(self, _parent: QModelIndex, first: int, _last: int) -> None:
        """While streaming, keep the selection on the leaf if it was on the entry just before it."""
        if self.model is None:
            return
        current = self.list.currentIndex()
        if not current.isValid() or current.row() == first - 1:
            self.reveal_leaf()

    def _on_fold_toggled(self, checked: bool) -> None:
        model = self.model
        if model is None:
            return
        fold_at = FOLD_AT if checked else None
        if not loop_running():
            keep = self.current_entry_id()
            model.set_fold_at(fold_at)
            self._keep(keep)
            return
        self._lay_out(lambda: model.rows_work(fold_at, set()), model.show_rows, self._keep)

    def _on_current_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        from piwork.gui.tree.graph_model import SEQ_ROLE

        if self.model is None:
            return
        seq = current.data(SEQ_ROLE)
        self.model.set_linked(self.model.summarised_branch(seq) if isinstance(seq, int) else set())
        self.current_changed.emit(self.current_entry_id())

    def _on_activated(self, index: QModelIndex) -> None:
        if self.model is None:
            return
        item = self.model.item_at(index)
        if isinstance(item, Fold):
            self.open_fold(item)
            return
        entry_id = index.data(ENTRY_ID_ROLE)
        if entry_id is not None:
            self.activated.emit(str(entry_id))

    def open_fold(self, fold: Fold) -> None:
        """Show a fold's entries (laid out again in a worker thread) and select its first one."""
        model = self.model
        if model is None:
            return
        first = str(model.tree.records[fold.first].id)
        if not loop_running():
            model.expand(fold)
            self.select(first)
            return
        expanded = model.opened(fold)
        self._lay_out(
            lambda: model.rows_work(model.fold_at, expanded),
            model.show_rows,
            lambda _keep: self.select(first),
        )

    def _on_menu(self, position: QPoint) -> None:
        index = self.list.indexAt(position)
        if not index.isValid() or self.model is None or isinstance(self.model.item_at(index), Fold):
            return
        if not self.list.selectionModel().isRowSelected(index.row()):
            self.list.setCurrentIndex(index)
        else:  # keep a two-entry selection for "compare", make the clicked one current
            self.list.selectionModel().setCurrentIndex(index, QItemSelectionModel.SelectionFlag.NoUpdate)
        self.menu_requested.emit(self.list.viewport().mapToGlobal(position))
