"""BranchGraphModel: the rows of the branch graph as a flat, lazy list model.

The layout (lanes, lines, folds) is computed by the engine's `GraphLayout`/`GraphRows`; this model
only hands one row's facts to the delegate (`GRAPH_ROLE` → `GraphCell`) when a row is painted.
It shows the entries the tree outline shows: the same filter mode and search words (`set_filter`),
decided by the outline's own `Visibility`; a hidden entry's children hang in its nearest shown
ancestor's lane.

Engine events: an entry streamed under a tip changes only that branch's tail rows in place (lanes do
not move; the fold above the leaf grows, appears or shrinks, an opened one stays open); a leaf move
repaints, lays the rows out again when the leaf leaves or enters a run that folds, and lays the graph
out again when the filter shows or hides the old or new leaf; a new fork, a reload, a new filter or
unfolding lays the graph out again. Built on `FlatListModel` (flat_models.py): the rows shown are
the graph's rows, folds included.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QModelIndex, Qt, Signal

from piwork.core.errors import PiworkError
from piwork.core.session import (
    FOLD_AT,
    NO_LINKS,
    NOTHING_SHOWN,
    EntryRecord,
    Fold,
    GraphLayout,
    GraphRows,
    RowLinks,
    SessionTree,
    SummaryLinks,
    TreeEvent,
)
from piwork.gui.background import BackgroundTasks
from piwork.gui.flat_models import AnyIndex, FlatListModel
from piwork.gui.inert_text import plain_tip
from piwork.gui.tree.display_tree import Visibility, normalize_mode
from piwork.gui.tree.entry_details import entry_detail_text
from piwork.gui.tree.title_reader import TitleReader, loop_running
from piwork.gui.tree.tree_model import ACTIVE_ROLE, ENTRY_ID_ROLE, LABEL_ROLE, LEAF_ROLE

if TYPE_CHECKING:
    from piwork.gui.tree.context_marks import EditMark
    from piwork.gui.tree.tree_search import SearchMatches

GRAPH_ROLE = Qt.ItemDataRole.UserRole + 20
SEQ_ROLE = Qt.ItemDataRole.UserRole + 21
TOOLTIP_CHARS = 1200
TOOLTIPS_KEPT = 500  # tooltips read back from the file and kept (cleared when full)
TOOLTIP_READING = "Reading the entry…"


@dataclass(frozen=True)
class GraphCell:
    """What the delegate draws for one row."""

    lane: int
    through: tuple[int, ...]
    up: bool  # a line comes from the row above into this entry's lane
    down: bool  # the branch continues below
    forks: tuple[int, ...]  # lanes of branches leaving this entry
    kind: str  # user, assistant, tool, summary, compaction, custom, fold
    active: bool
    leaf: bool
    linked: bool  # part of the branch the selected summary summarises
    label: str | None
    text: str
    width: int = 1  # lanes of the whole graph (the text column starts after them, up to a limit)
    through_active: tuple[int, ...] = ()  # passing lanes that lead to the active path
    active_forks: tuple[int, ...] = ()  # lanes of the branches leaving here that the active path takes
    down_active: bool = False  # the active path goes on straight below
    links: RowLinks = NO_LINKS  # connectors from branch summaries to the branches they summarise
    link_base: int = 1  # lane index of the first link column (the graph's lane count)
    link_width: int = 0  # link columns of the whole graph as drawn (bundled past the view's limit)


def node_kind(record: EntryRecord) -> str:
    if record.type == "message":
        role = record.role
        if role == "user":
            return "user"
        if role == "assistant":
            return "assistant"
        return "tool"  # tool results, shell commands
    if record.type == "branch_summary":
        return "summary"
    if record.type == "compaction":
        return "compaction"
    return "custom"


class BranchGraphModel(FlatListModel):
    rebuilt = Signal()
    leaf_moved = Signal()

    def __init__(
        self,
        tree: SessionTree,
        parent: Any = None,
        *,
        fold_at: int | None = FOLD_AT,
        mode: str = "default",
        query: str = "",
        plan: GraphPlan | None = None,
    ) -> None:
        """`mode`/`query`: the outline's filter mode and search words; `plan`: the graph already laid out
        (`plan_graph`, in a worker thread), for the tree as it still is (else see `catch_up`)."""
        super().__init__(parent)
        self._tree = tree
        if plan is None:
            plan = plan_graph(tree, Visibility(tree, mode, query), fold_at)
        self._visibility, self._layout, self._rows, self._links = (
            plan.visibility, plan.layout, plan.rows, plan.links,
        )  # fmt: skip
        self._active, self._marks, self._transits = plan.active, plan.marks, plan.transits
        self._fold_at, self._expanded = plan.rows.fold_at, set(plan.rows.expanded)  # runs opened (GraphRows)
        self._linked: set[int] = set()
        self._edit_marks: dict[str, EditMark] = {}  # entries the context edits in force change
        self._link_limit: int | None = None
        self._titles = TitleReader(tree, self)  # previews not in the index are read off the GUI thread
        self._titles.ready.connect(self._on_titles_ready)
        self.generation = 0  # counts the tree's changes: a layout computed meanwhile is out of date
        self._tips: dict[int, str] = {}  # tooltips of entries whose bodies were read in a worker
        self._tip_reads = BackgroundTasks()
        self._unsubscribe: Callable[[], None] | None = tree.subscribe(self._on_tree_event)

    # -- public API -------------------------------------------------------------------------------
    @property
    def tree(self) -> SessionTree:
        return self._tree

    @property
    def layout(self) -> GraphLayout:
        return self._layout

    @property
    def rows(self) -> GraphRows:
        return self._rows

    @property
    def links(self) -> SummaryLinks:
        return self._links

    def detach(self) -> None:
        self._titles.shutdown()
        self._tip_reads.cancel_all()
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None

    @property
    def filter_mode(self) -> str:
        return self._visibility.mode

    @property
    def query(self) -> str:
        return self._visibility.query

    def set_filter(self, mode: str, query: str = "", matches: SearchMatches | None = None) -> None:
        """Show what the outline shows with this filter mode and these search words (`matches`: the
        search's result, else the words are looked for here)."""
        mode = normalize_mode(mode)
        if (mode, query) != (self._visibility.mode, self._visibility.query):
            self._visibility = Visibility(self._tree, mode, query, self._tree_leaf_seq(), matches)
            self.rebuild()

    @property
    def link_limit(self) -> int | None:
        return self._link_limit

    def set_link_limit(self, limit: int | None) -> None:
        """Draw the summary connectors in at most `limit` columns (the rest bundled in the last)."""
        if limit != self._link_limit:
            before = self._links.columns(self._link_limit)
            self._link_limit = limit
            if self._links.columns(limit) != before:
                self._repaint_all()

    @property
    def fold_at(self) -> int | None:
        return self._fold_at

    def set_fold_at(self, fold_at: int | None) -> None:
        if fold_at != self._fold_at:
            self._fold_at = fold_at
            self._expanded.clear()
            self._reset_rows()

    def expand(self, fold: Fold) -> None:
        self._expanded.update(self._rows.stretch_of(fold))
        self._reset_rows()

    def item_at(self, index: AnyIndex) -> int | Fold | None:
        return self._rows.rows[index.row()] if self.is_shown(index) else None

    def index_of_id(self, entry_id: str | None, unfold: bool = True) -> QModelIndex:
        """The row of an entry (of its nearest drawn ancestor); a folded entry's fold opens first."""
        seq = self._layout.shown_seq(entry_id) if entry_id is not None else None
        if seq is None:
            return QModelIndex()
        fold = self._rows.fold_of(seq)
        if fold is not None and unfold:
            self.expand(fold)
        row = self._rows.row_for(seq)
        return QModelIndex() if row is None else self.index(row, 0)

    def shown_index_of_id(self, entry_id: str | None) -> QModelIndex:
        """The row of an entry, or of its nearest shown ancestor when it is hidden or folded away (the
        entry shown just above its fold), never a fold's row; no fold opens."""
        index = self.index_of_id(entry_id, unfold=False)
        if isinstance(self.item_at(index), Fold):
            return self.index(index.row() - 1, 0)  # a fold always follows its stretch's first entry
        return index

    def leaf_index(self) -> QModelIndex:
        record = self._tree.record(self._tree.leaf_id) if self._tree.leaf_id is not None else None
        return self.index_of_id(str(record.id)) if record is not None else QModelIndex()

    def summarised_branch(self, seq: int) -> set[int]:
        """For a branch summary: the drawn entries of the branch it summarises (from the fork to its `fromId`)."""
        record = self._tree.records[seq]
        if record.type != "branch_summary":
            return set()
        from_id = record.meta.get("fromId")
        if not isinstance(from_id, str) or not self._tree.has(from_id):
            return set()
        kept = {r.seq for r in self._tree.path(record.id)}
        return {r.seq for r in self._tree.path(from_id) if r.seq not in kept and r.seq in self._layout.lane}

    def set_linked(self, seqs: set[int]) -> None:
        if seqs != self._linked:
            self._linked = seqs
            self._repaint_all()

    # -- Qt model interface -----------------------------------------------------------------------
    def shown_rows(self) -> int:
        return len(self._rows.rows)

    def data(self, index: AnyIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        item = self.item_at(index)
        if item is None:
            return None
        if isinstance(item, Fold):
            return self._fold_data(item, role)
        record = self._tree.records[item]
        if role == Qt.ItemDataRole.DisplayRole:
            mark = self._edit_marks.get(record.id)
            return f"{mark.prefix if mark else ''}{self._titles.title(record)}"
        if role == GRAPH_ROLE:
            return self._cell(item, record)
        if role == ENTRY_ID_ROLE:
            return record.id
        if role == SEQ_ROLE:
            return item
        if role == ACTIVE_ROLE:
            return item in self._active
        if role == LEAF_ROLE:
            return item == self._leaf
        if role == LABEL_ROLE:
            return self._tree.label(record.id)
        if role == Qt.ItemDataRole.ToolTipRole:
            mark = self._edit_marks.get(record.id)
            return plain_tip(self._tooltip(record) + (f"\n\n{mark.tooltip()}" if mark is not None else ""))
        return None

    def _fold_data(self, fold: Fold, role: int) -> Any:
        if role == Qt.ItemDataRole.DisplayRole:
            return fold_text(fold.count)
        if role == GRAPH_ROLE:
            lane, through = self._rows.lane_and_through(fold)
            return GraphCell(
                lane, through, True, True, (), "fold", fold.first in self._active, False,
                fold.first in self._linked, None, fold_text(fold.count), self._layout.width,
                self._through_active(fold.first, through), (), fold.first in self._active,
                self._links.at(self._rows.row_of[fold], self._link_limit), self._layout.width,
                self._links.columns(self._link_limit),
            )  # fmt: skip
        if role == Qt.ItemDataRole.ToolTipRole:
            return "Double-click to show these entries"
        if role == ACTIVE_ROLE:
            return fold.first in self._active
        return None

    def _through_active(self, seq: int, through: tuple[int, ...]) -> tuple[int, ...]:
        """Which of the lines passing an entry's row are the active path on its way from a fork down
        to the head of its next branch (a few per path: one per side branch taken)."""
        if not through or not self._transits:
            return ()
        row_of = self._layout.row_of
        row = row_of[seq]
        return tuple(
            lane
            for lane, fork, head in self._transits
            if lane in through and row_of[fork] < row < row_of[head]
        )

    def _active_forks(self, seq: int) -> tuple[int, ...]:
        kids = self._layout.children.get(seq)
        if not kids or len(kids) < 2 or seq not in self._active:
            return ()
        return tuple(self._layout.lane[kid] for kid in kids[1:] if kid in self._active)

    def _cell(self, seq: int, record: EntryRecord) -> GraphCell:
        layout = self._layout
        lane, through = self._rows.lane_and_through(seq)
        return GraphCell(
            lane=lane,
            through=through,
            up=layout.parent.get(seq) is not None,
            down=layout.continues(seq),
            forks=layout.fork_lanes(seq),
            kind=node_kind(record),
            active=seq in self._active,
            leaf=seq == self._leaf,
            linked=seq in self._linked,
            label=self._tree.label(record.id),
            text=self._titles.title(record),
            width=self._layout.width,
            through_active=self._through_active(seq, through),
            active_forks=self._active_forks(seq),
            down_active=bool(layout.children.get(seq)) and layout.children[seq][0] in self._active,
            links=self._links.at(self._rows.row_of[seq], self._link_limit),
            link_base=layout.width,
            link_width=self._links.columns(self._link_limit),
        )

    def _tooltip(self, record: EntryRecord) -> str:
        """The entry's text (shortened); a body not in memory is read in a worker thread, and the
        row's tooltip holds it from the next hover on."""
        known = self._tips.get(record.seq)
        if known is not None:
            return known
        if record.body is not None or self._tree.body_loader is None or not loop_running():
            return _tooltip_text(self._tree.body(record))
        if len(self._tips) >= TOOLTIPS_KEPT:
            self._tips.clear()
        self._tip_reads.spawn(self._read_tooltip(record))
        return TOOLTIP_READING

    async def _read_tooltip(self, record: EntryRecord) -> None:
        try:
            text = await asyncio.to_thread(lambda: _tooltip_text(self._tree.body(record)))
        except (OSError, PiworkError, ValueError) as exc:
            text = f"This entry could not be read from the session file: {exc}"
        self._tips[record.seq] = text
        self._repaint_seq(record.seq)

    def _on_titles_ready(self, seqs: list[int]) -> None:
        for seq in seqs:
            self._repaint_seq(seq)

    # -- engine events ------------------------------------------------------------------------------
    def _tree_leaf_seq(self) -> int | None:
        record = self._tree.record(self._tree.leaf_id) if self._tree.leaf_id is not None else None
        return record.seq if record is not None else None

    def _make_rows(self) -> GraphRows:
        return GraphRows(self._layout, self._marks, fold_at=self._fold_at, expanded=self._expanded)

    @property
    def _leaf(self) -> int | None:
        return self._marks.leaf

    @_leaf.setter
    def _leaf(self, seq: int | None) -> None:
        self._marks.leaf = seq

    # -- laying out in a worker thread --------------------------------------------------------------
    # Each `*_work` returns a function of the tree alone, for ``asyncio.to_thread``; its result is shown
    # with `show_plan`/`show_rows` on the GUI thread if `generation` did not change meanwhile (the
    # tree's events keep the rows shown up to date until then).
    def filter_work(
        self, mode: str, query: str, matches: SearchMatches | None, fold_at: int | None
    ) -> Callable[[], GraphPlan]:
        """The graph for this filter and search, with long runs folded at `fold_at` (the open folds
        stay open when it is the same)."""
        tree = self._tree
        expanded = set(self._expanded) if fold_at == self._fold_at else set()
        visibility = Visibility(tree, normalize_mode(mode), query, self._tree_leaf_seq(), matches)
        return lambda: plan_graph(tree, visibility, fold_at, expanded)

    def show_plan(self, plan: GraphPlan) -> None:
        with self.replacing_rows():
            self._visibility, self._layout, self._rows, self._links = (
                plan.visibility, plan.layout, plan.rows, plan.links,
            )  # fmt: skip
            self._active, self._marks, self._transits = plan.active, plan.marks, plan.transits
            self._fold_at, self._expanded = plan.rows.fold_at, set(plan.rows.expanded)
            self._linked = set()
        self.rebuilt.emit()

    def catch_up(self, records: list[EntryRecord]) -> bool:
        """Take the entries appended since the moment this model's plan was laid out (`plan_graph`'s
        `upto`), in order, as the model would have taken them had it been there; False when one needs a
        new layout (a new fork or root: see `_append`), and the model is then to be dropped."""
        for record in records:
            self.generation += 1
            if not self._append(record):
                return False
        return True

    def rows_work(self, fold_at: int | None, expanded: set[int]) -> Callable[[], GraphRows]:
        """Rows of the graph laid out now with other folds open or closed."""
        layout, marks = self._layout, self._marks
        return lambda: GraphRows(layout, marks, fold_at=fold_at, expanded=expanded)

    def opened(self, fold: Fold) -> set[int]:
        """The open entries with `fold` opened too (for `rows_work`)."""
        return self._expanded | set(self._rows.stretch_of(fold))

    def show_rows(self, rows: GraphRows) -> None:
        with self.replacing_rows():
            self._fold_at, self._expanded, self._rows = rows.fold_at, set(rows.expanded), rows
            self._links = SummaryLinks(rows)
        self.rebuilt.emit()

    def _update_path(self) -> None:
        self._active, self._leaf, self._transits = _path_facts(self._tree, self._layout, self._tree.leaf_id)

    def _reset_rows(self) -> None:
        with self.replacing_rows():
            self._rows = self._make_rows()
            self._links = SummaryLinks(self._rows)
        self.rebuilt.emit()

    def rebuild(self) -> None:
        with self.replacing_rows():
            self._visibility.leaf_seq = self._tree_leaf_seq()
            self._layout = GraphLayout(self._tree, self._visibility.shows)
            self._update_path()
            self._linked = set()
            self._rows = self._make_rows()
            self._links = SummaryLinks(self._rows)
        self.rebuilt.emit()

    def set_edit_marks(self, marks: dict[str, EditMark]) -> None:
        """Mark the entries the context edits in force leave out or replace (as the outline does)."""
        if marks != self._edit_marks:
            self._edit_marks = dict(marks)
            self._repaint_all()

    def _repaint_all(self) -> None:
        if self._rows.rows:
            self.rows_changed(0, len(self._rows.rows) - 1)

    def _repaint_seq(self, seq: int | None) -> None:
        row = self._rows.row_for(seq) if seq is not None else None
        if row is not None:
            self.rows_changed(row)

    def _on_tree_event(self, event: TreeEvent) -> None:
        self.generation += 1
        if event.kind == "append":
            record = self._tree.record(event.entry_id) if event.entry_id is not None else None
            if record is not None and self._append(record):
                return
            self.rebuild()
        elif event.kind == "leaf":
            self._on_leaf_moved()
            self.leaf_moved.emit()
        elif event.kind == "label":
            self._on_label(event.entry_id)
        else:
            self.rebuild()

    def _on_leaf_moved(self) -> None:
        visibility = self._visibility
        old, new = visibility.leaf_seq, self._tree_leaf_seq()
        moved = [self._tree.records[seq] for seq in (old, new) if seq is not None]
        shown_before = [visibility.shows(record) for record in moved]
        visibility.leaf_seq = new
        if [visibility.shows(record) for record in moved] != shown_before:
            self.rebuild()  # the filter shows an entry only while it is the leaf
            return
        old_leaf = self._leaf
        self._update_path()
        if self._leaf != old_leaf and (self._may_fold(old_leaf) or self._folded(self._leaf)):
            self._reset_rows()  # the old leaf may join a folded run, the new one must leave its fold
        else:
            self._repaint_all()

    def _folded(self, seq: int | None) -> bool:
        return seq is not None and self._rows.fold_of(seq) is not None

    def _may_fold(self, seq: int | None) -> bool:
        """Whether an entry that was kept out of folds (leaf, label) could now be folded away."""
        kids = self._layout.children.get(seq) if seq is not None and self._fold_at is not None else None
        return kids is not None and len(kids) == 1

    def _on_label(self, entry_id: str | None) -> None:
        if self._visibility.mode == "labeled-only" or self._visibility.query.strip():
            self.rebuild()  # labels decide what shows
            return
        seq = self._layout.shown_seq(entry_id)
        if self._folded(seq) or self._may_fold(seq):
            self._reset_rows()  # a labelled entry is never folded away, an unlabelled one may be
        else:
            self._repaint_seq(seq)

    def _append(self, record: EntryRecord) -> bool:
        """Show an entry appended under the leaf in place; False: lay the graph out again."""
        visibility = self._visibility
        previous_leaf = visibility.leaf_seq
        parent = self._tree.record(record.parent_id) if record.parent_id is not None else None
        if parent is None:
            return False  # a new root
        moved = parent.seq != previous_leaf  # the leaf moved there first (a summary placed on a move)
        if moved:
            left = self._tree.records[previous_leaf] if previous_leaf is not None else None
            shown_before = left is not None and visibility.shows(left)
            visibility.leaf_seq = record.seq
            if (left is not None and visibility.shows(left) != shown_before) or self._may_fold(self._leaf):
                return False
        visibility.leaf_seq = record.seq
        old_tip = self._layout.anchor.get(parent.seq)
        old_row = self._rows.row_of.get(old_tip) if old_tip is not None else None
        if old_row is None:
            return False
        splice = self._layout.extend(record)
        if splice is None:
            return False
        if splice == NOTHING_SHOWN:
            if moved:
                self._update_path()
                self._repaint_all()
            return True
        layout = self._layout
        top = layout.order[splice.row - 1]
        if moved:
            self._update_path()
        else:  # the drawn path only grows (or loses the tip the new entry hid)
            if splice.removed:
                self._active.discard(old_tip)
            if splice.added:
                self._active.add(record.seq)
                self._leaf = record.seq
            else:
                self._leaf = top
        plan = self._rows.refold_tail(top, splice.row + splice.added, old_row + 1)
        links_before = self._links
        if plan.inserted:
            notice = self.inserting_rows(plan.first, plan.inserted)
        else:
            notice = self.removing_rows(plan.first, plan.removed)
        with notice:
            self._rows.apply(plan)
            self._links = SummaryLinks(self._rows)
        if moved or self._links.links != links_before.links:
            self._repaint_all()  # the active path changed, or a connector came, went or moved
        elif plan.changed:
            self.rows_changed(plan.changed_from, plan.changed_from + plan.changed - 1)
        self._repaint_seq(old_tip if not splice.removed else None)
        self._repaint_seq(top)
        return True


def _tooltip_text(body: Any) -> str:
    text = entry_detail_text(body)
    return text[:TOOLTIP_CHARS] + "…" if len(text) > TOOLTIP_CHARS else text


@dataclass(frozen=True)
class GraphPlan:
    """A graph laid out in a worker thread for a filter and search (see `BranchGraphModel.filter_work`)."""

    visibility: Visibility
    layout: GraphLayout
    active: set[int]
    marks: _Marks  # knows the drawn leaf
    transits: list[tuple[int, int, int]]
    rows: GraphRows
    links: SummaryLinks


def snapshot(tree: SessionTree) -> Snapshot:
    """The tree as it is now, for `plan_graph` in a worker thread (take it on the thread that changes
    the tree): how many records it holds and its leaf."""
    leaf = tree.record(tree.leaf_id) if tree.leaf_id is not None else None
    return Snapshot(len(tree.records), tree.leaf_id, leaf.seq if leaf is not None else None)


@dataclass(frozen=True)
class Snapshot:
    upto: int  # the records then held
    leaf_id: Any
    leaf_seq: int | None


def plan_graph(
    tree: SessionTree,
    visibility: Visibility,
    fold_at: int | None,
    expanded: set[int] | None = None,
    moment: Snapshot | None = None,
) -> GraphPlan:
    """The whole graph laid out for `visibility` (its filter and search), long runs folded at `fold_at`
    and the runs of `expanded` open: the lanes, the drawn path, the rows and the summary connectors.
    `moment`: lay out the tree as it was then (see `snapshot`), however many entries are appended while
    this runs (in a worker thread); without it, the tree as it is (on the thread that changes it, or in a
    worker whose result is dropped if the tree changed meanwhile)."""
    from piwork.core.collector import paused_gc

    # The graph lives as long as it is shown: hundreds of thousands of objects for a long session, which
    # later collections leave out (and none runs while they are made).
    with paused_gc(keep=True):
        if moment is not None:
            visibility.leaf_seq = moment.leaf_seq
            layout = GraphLayout(tree, visibility.shows, upto=moment.upto)
            active, leaf, transits = _path_facts(tree, layout, moment.leaf_id)
        else:
            visibility.leaf_seq = _leaf_seq(tree)
            layout = GraphLayout(tree, visibility.shows)
            active, leaf, transits = _path_facts(tree, layout, tree.leaf_id)
        marks = _Marks(tree, leaf)
        rows = GraphRows(layout, marks, fold_at=fold_at, expanded=expanded or set())
        return GraphPlan(visibility, layout, active, marks, transits, rows, SummaryLinks(rows))


def _leaf_seq(tree: SessionTree) -> int | None:
    record = tree.record(tree.leaf_id) if tree.leaf_id is not None else None
    return record.seq if record is not None else None


def _path_facts(
    tree: SessionTree, layout: GraphLayout, leaf_id: Any
) -> tuple[set[int], int | None, list[tuple[int, int, int]]]:
    """The drawn entries of the path to `leaf_id` (the active path), the drawn leaf, and (lane, fork,
    head) of each side branch the path takes."""
    path = tree.path(leaf_id)
    anchor = layout.anchor
    active = {seq for seq in (anchor.get(r.seq) for r in path) if seq is not None}
    leaf = anchor.get(path[-1].seq) if path else None
    on_path = {layout.branch_of[seq] for seq in active}
    transits = [
        (branch.lane, branch.fork, branch.head)
        for branch in (layout.branches[index] for index in sorted(on_path))
        if branch.head in active and branch.fork is not None
    ]
    return active, leaf, transits


class _Marks:
    """Entries kept out of folds: the drawn leaf and labelled ones (GraphRows keeps asking as rows change)."""

    def __init__(self, tree: SessionTree, leaf: int | None = None) -> None:
        self.tree = tree
        self.leaf = leaf

    def __call__(self, seq: int) -> bool:
        return seq == self.leaf or self.tree.label(self.tree.records[seq].id) is not None


def fold_text(count: int) -> str:
    return f"… {count:,} message{'s' if count != 1 else ''}"
