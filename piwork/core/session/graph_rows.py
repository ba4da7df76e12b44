"""The rows a branch graph shows: its layout with long quiet runs folded into one "… N messages" row.

A *quiet* entry has exactly one shown child and nothing to point out (no label, not the leaf, not a
summary or compaction, no fork). A stretch of at least `fold_at` consecutive quiet entries of one
branch keeps its first entry and folds the rest into a `Fold` row, unless the stretch was expanded
(by its first folded entry). No line starts or ends inside a fold, so it is drawn like one entry.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from piwork.core.session.graph_layout import GraphLayout

FOLD_AT = 8
NOTABLE_TYPES = frozenset({"branch_summary", "compaction"})


@dataclass(frozen=True)
class Fold:
    first: int  # seq of the first folded entry
    last: int  # seq of the last folded entry
    count: int


Row = int | Fold  # an entry's seq, or a fold


class GraphRows:
    def __init__(
        self,
        layout: GraphLayout,
        is_marked: Callable[[int], bool] = lambda _seq: False,
        *,
        fold_at: int | None = FOLD_AT,
        expanded: Iterable[int] = (),
    ) -> None:
        """`is_marked(seq)`: entries that must stay visible (labelled, the leaf...);
        `fold_at`: None folds nothing; `expanded`: first seqs of folds shown open."""
        self.layout = layout
        self.expanded = set(expanded)
        self.fold_at = fold_at
        self._is_marked = is_marked
        self.rows: list[Row] = []
        self.fold_of: dict[int, Fold] = {}
        self._build()

    def _quiet(self, seq: int) -> bool:
        layout = self.layout
        kids = layout.children.get(seq)
        if kids is None or len(kids) != 1 or self._is_marked(seq):
            return False
        return layout.tree.records[seq].type not in NOTABLE_TYPES

    def _build(self) -> None:
        layout, rows, fold_at = self.layout, self.rows, self.fold_at
        order = layout.order
        branch_of = layout.branch_of
        count = len(order)
        row = 0
        while row < count:
            seq = order[row]
            if fold_at is None or not self._quiet(seq):
                rows.append(seq)
                row += 1
                continue
            end = row + 1  # the stretch: consecutive quiet entries of the same branch
            while end < count and branch_of[order[end]] == branch_of[seq] and self._quiet(order[end]):
                end += 1
            rows.append(seq)
            if end - row >= fold_at and order[row + 1] not in self.expanded:
                fold = Fold(order[row + 1], order[end - 1], end - row - 1)
                rows.append(fold)
                for inner in range(row + 1, end):
                    self.fold_of[order[inner]] = fold
            else:
                rows.extend(order[row + 1 : end])
            row = end
        self._index()

    def _index(self) -> None:
        self.row_of: dict[int | Fold, int] = {item: i for i, item in enumerate(self.rows)}

    def __len__(self) -> int:
        return len(self.rows)

    def row_for(self, seq: int) -> int | None:
        """The visible row showing entry `seq` (its fold's row when it is folded)."""
        found = self.row_of.get(seq)
        if found is None and seq in self.fold_of:
            found = self.row_of.get(self.fold_of[seq])
        return found

    def lane_and_through(self, item: Row) -> tuple[int, tuple[int, ...]]:
        seq = item.first if isinstance(item, Fold) else item
        return self.layout.lane[seq], self.layout.through[self.layout.row_of[seq]]

    def insert_after(self, parent_seq: int, seq: int) -> int | None:
        """Show `seq`, just added to the layout under `parent_seq` (a tip): its row, or None if the
        parent is not a visible row (the caller rebuilds)."""
        parent_row = self.row_of.get(parent_seq)
        if parent_row is None:
            return None
        row = parent_row + 1
        self.rows.insert(row, seq)
        rows = self.rows
        self.row_of.update(zip(rows[row:], range(row, len(rows)), strict=True))
        return row
