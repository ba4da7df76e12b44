"""The rows a branch graph shows: its layout with long quiet runs folded into one "… N messages" row.

A *quiet* entry has exactly one shown child and nothing to point out (no label, not the leaf, not a
summary or compaction, no fork, not a prompt of the user's). A *stretch* is a longest run of consecutive
quiet entries of one branch: the agent's steps (replies, tool calls and results) between two prompts,
so every prompt stays a row of its own and a conversation never folds away whole. A stretch of at least `fold_at` entries keeps its first entry and folds the rest into a
`Fold` row, unless it is *open*: its second entry (the fold's first) is in `expanded`. Opening a fold
puts all its stretch's entries there, so the stretch stays open when it grows at either end or a
fork splits it. No line starts or ends inside a fold, so it is drawn like one entry.

Streaming changes only the tail of one branch (an entry under its tip, or a tip the new entry hides).
`refold_tail` lays out again only the rows from the stretch just above the change to the branch's new
tip, without scanning a fold it already knows: a fold grows, appears or shrinks in place, and the plan
says which visible rows show something else, come or go (`Refold`), for a model's change notices.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the window's graph view reads ``FOLD_AT`` and ``Fold`` before the tree's modules load
    from piwork.core.session.graph_layout import GraphLayout

FOLD_AT = 8
NOTABLE_TYPES = frozenset({"branch_summary", "compaction"})


@dataclass(frozen=True)
class Fold:
    first: int  # seq of the first folded entry
    last: int  # seq of the last folded entry
    count: int


Row = int | Fold  # an entry's seq, or a fold


@dataclass(frozen=True)
class Refold:
    """Visible rows ``start``..``stop`` - 1 become ``new``. Seen by a view: ``inserted`` rows come (or
    ``removed`` rows go) at ``first``, then the ``changed`` rows from ``changed_from`` show something
    else. Rows keep their place counted from the end of the window, so the old leaf's row is the new
    leaf's (a view's selection on it follows). `GraphRows.apply` carries it out."""

    start: int
    stop: int
    new: tuple[Row, ...]
    first: int
    changed: int
    inserted: int
    removed: int

    @property
    def changed_from(self) -> int:
        return self.first + self.inserted


class GraphRows:
    def __init__(
        self,
        layout: GraphLayout,
        is_marked: Callable[[int], bool] = lambda _seq: False,
        *,
        fold_at: int | None = FOLD_AT,
        expanded: Iterable[int] = (),
    ) -> None:
        """`is_marked(seq)`: entries that must stay visible (labelled, the leaf...); `fold_at`: None
        folds nothing (at least 2); `expanded`: entries of open stretches (see the module docstring)."""
        self.layout = layout
        self.expanded = set(expanded)
        self.fold_at = fold_at
        self._is_marked = is_marked
        self._fold_first: dict[int, int] = {}  # folded entry -> the first entry of its fold
        self._folds: dict[int, Fold] = {}  # first entry -> its fold
        self.rows: list[Row] = self._emit(0, len(layout.order))
        for item in self.rows:
            if isinstance(item, Fold):
                self._register(item, layout.row_of[item.first])
        self.row_of: dict[Row, int] = {item: i for i, item in enumerate(self.rows)}

    def _quiet(self, seq: int) -> bool:
        layout = self.layout
        kids = layout.children.get(seq)
        if kids is None or len(kids) != 1 or self._is_marked(seq):
            return False
        record = layout.tree.records[seq]
        return record.type not in NOTABLE_TYPES and record.role != "user"

    # -- laying out ---------------------------------------------------------------------------------
    def _emit(
        self, start: int, stop: int, stretch_from: int | None = None, stretch_open: bool | None = None
    ) -> list[Row]:
        """The rows of layout rows `start`..`stop` - 1 (`stop` ends a branch). `stretch_from`: the layout
        row where a stretch began whose entries before `start` are known to be quiet (its rows are given
        from there, its open state is `stretch_open`, or decided by `expanded` when None)."""
        order, quiet = self.layout.order, self._quiet
        folding = self.fold_at is not None
        rows: list[Row] = []
        row = start
        if stretch_from is not None:
            row = self._stretch(rows, stretch_from, start, stop, stretch_open)
        while row < stop:
            seq = order[row]
            if not folding or not quiet(seq):
                rows.append(seq)
                row += 1
                continue
            row = self._stretch(rows, row, row + 1, stop, None)
        return rows

    def _stretch(self, rows: list[Row], begin: int, end: int, stop: int, is_open: bool | None) -> int:
        """Add the rows of the stretch beginning at layout row `begin`, known quiet before `end`, looking
        no further than `stop`; returns the layout row after it."""
        layout = self.layout
        order, branch_of, quiet = layout.order, layout.branch_of, self._quiet
        branch = branch_of[order[begin]]
        while end < stop and branch_of[order[end]] == branch and quiet(order[end]):
            end += 1
        rows.append(order[begin])
        if is_open is None:
            is_open = end - begin < 2 or order[begin + 1] in self.expanded
        if self.fold_at is not None and end - begin >= self.fold_at and not is_open:
            rows.append(Fold(order[begin + 1], order[end - 1], end - begin - 1))
        else:
            rows.extend(order[begin + 1 : end])
        return end

    def _register(self, fold: Fold, begin: int) -> None:
        """Note the entries of `fold` from layout row `begin` on as folded."""
        order, row_of = self.layout.order, self.layout.row_of
        self._fold_first.update(dict.fromkeys(order[begin : row_of[fold.last] + 1], fold.first))
        self._folds[fold.first] = fold

    # -- reading ------------------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.rows)

    def fold_of(self, seq: int) -> Fold | None:
        """The fold hiding entry `seq`, if any."""
        first = self._fold_first.get(seq)
        return None if first is None else self._folds[first]

    def folded(self) -> int:
        """How many entries are folded away."""
        return len(self._fold_first)

    def stretch_of(self, fold: Fold) -> list[int]:
        """The entries of a fold's stretch: the one shown above the fold, then the folded ones."""
        order, row_of = self.layout.order, self.layout.row_of
        return order[row_of[fold.first] - 1 : row_of[fold.last] + 1]

    def row_for(self, seq: int) -> int | None:
        """The visible row showing entry `seq` (its fold's row when it is folded)."""
        found = self.row_of.get(seq)
        if found is None:
            first = self._fold_first.get(seq)
            if first is not None:
                found = self.row_of.get(self._folds[first])
        return found

    def lane_and_through(self, item: Row) -> tuple[int, tuple[int, ...]]:
        seq = item.first if isinstance(item, Fold) else item
        return self.layout.lane[seq], self.layout.through[self.layout.row_of[seq]]

    # -- streaming ----------------------------------------------------------------------------------
    def refold_tail(self, top: int, stop: int, old_stop: int) -> Refold:
        """Plan the rows of one branch's tail after the layout changed below its entry `top` (still
        shown, unchanged itself but for its children): layout rows up to `stop` (exclusive; the
        branch's new tip is at `stop` - 1) replace the visible rows up to `old_stop` (exclusive; the
        old tip's row + 1). Looks above `top` at most `fold_at` + 1 entry rows, or one fold."""
        layout, rows = self.layout, self.rows
        resume = layout.row_of[top]
        first = self._fold_first.get(top)
        if first is not None:  # `top` was folded: its whole stretch is laid out again
            start = self.row_of[self._folds[first]] - 1
            return self._plan(
                start, old_stop, self._emit(resume, stop, layout.row_of[self._entry_at(start)], False)
            )
        start = self.row_of[top]
        if self.fold_at is None:
            return self._plan(start, old_stop, self._emit(resume, stop))
        branch = layout.branch_of[top]
        walked = 0
        stretch_open: bool | None = None
        while start > 0:
            item = rows[start - 1]
            if isinstance(item, Fold):
                if layout.branch_of[item.first] == branch:  # the fold and the entry shown above it
                    start -= 2
                    stretch_open = False
                break
            if layout.branch_of[item] != branch or not self._quiet(item):
                break
            start -= 1
            walked += 1
            if walked > self.fold_at:  # a stretch this long shown entry by entry is open
                stretch_open = True
                break
        if start == self.row_of[top]:
            return self._plan(start, old_stop, self._emit(resume, stop))
        begin = layout.row_of[self._entry_at(start)]
        return self._plan(start, old_stop, self._emit(resume, stop, begin, stretch_open))

    def _entry_at(self, row: int) -> int:
        item = self.rows[row]
        assert not isinstance(item, Fold)  # only ever asked for an entry row (a stretch's first)
        return item

    def _plan(self, start: int, stop: int, new: list[Row]) -> Refold:
        old = self.rows[start:stop]
        same_start = 0
        limit = min(len(old), len(new))
        while same_start < limit and old[same_start] == new[same_start]:
            same_start += 1
        same_end = 0
        while same_end < limit - same_start and old[-1 - same_end] == new[-1 - same_end]:
            same_end += 1
        old_middle, new_middle = len(old) - same_start - same_end, len(new) - same_start - same_end
        return Refold(
            start, stop, tuple(new), start + same_start, min(old_middle, new_middle),
            max(0, new_middle - old_middle), max(0, old_middle - new_middle),
        )  # fmt: skip

    def apply(self, refold: Refold) -> None:
        """Carry out a plan from `refold_tail` (the layout is the one it was made for)."""
        order, layout_row = self.layout.order, self.layout.row_of
        rows, row_of = self.rows, self.row_of
        old = rows[refold.start : refold.stop]
        old_folds = {item.first: item for item in old if isinstance(item, Fold)}
        new_folds = {item.first: item for item in refold.new if isinstance(item, Fold)}
        for first, fold in old_folds.items():  # entries no longer folded (a fold that grew keeps them)
            kept = new_folds.get(first)
            begin = layout_row[kept.last] + 1 if kept is not None else layout_row[first]
            for seq in order[begin : layout_row[fold.last] + 1]:
                del self._fold_first[seq]
            if kept is None:
                del self._folds[first]
        for first, fold in new_folds.items():
            before = old_folds.get(first)
            self._register(fold, layout_row[before.last] + 1 if before is not None else layout_row[first])
        for item in old:
            row_of.pop(item, None)
        rows[refold.start : refold.stop] = refold.new
        end = refold.start + len(refold.new)
        row_of.update(zip(rows[refold.start : end], range(refold.start, end), strict=True))
        if len(refold.new) != len(old):  # later rows move
            row_of.update(zip(rows[end:], range(end, len(rows)), strict=True))
