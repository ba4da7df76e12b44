"""Connectors from each branch summary to the branch it summarises, over the rows of a branch graph.

A branch summary records ``fromId``, the tip of the branch that was left. The graph draws a
connector from the row showing that tip (or its fold) to the summary's row, in *link columns* to
the right of the lanes: the connectors take columns by interval partitioning over their row spans,
so two connectors share a column only where they do not overlap, and every connector overlapping
others gets a column of its own.

A view narrower than the columns asks a row's connectors for at most ``limit`` columns: the
connectors from column ``limit - 1`` on are drawn as one *bundle* in that column, and the row says
how many connectors of the bundle touch it (a count badge for the view).

Cheap for large graphs: the layout keeps the list of drawn summaries, so building the connectors
costs one lookup per summary. A row asks which connectors touch it from the connectors of its block
of rows, a list made the first time a row of that block is painted (nothing is stored per row).
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass

from piwork.core.session.graph_rows import GraphRows


@dataclass(frozen=True)
class SummaryLink:
    summary: int  # seq of the branch summary
    source: int  # seq of the drawn entry standing for its ``fromId``
    top: int  # visible rows spanned (top < bottom)
    bottom: int
    column: int  # 0 is the first column right of the lanes
    summary_on_top: bool  # the summary's row is the top one (its branch was drawn first)


@dataclass(frozen=True)
class LinkEnd:
    column: int
    downward: bool  # the connector leaves this row downwards (it is the top end)
    at_summary: bool  # this end is the summary (drawn with an arrowhead)


@dataclass(frozen=True)
class RowLinks:
    passing: tuple[int, ...]  # columns whose connector runs straight through the row
    ends: tuple[LinkEnd, ...]  # connectors that start or end on the row
    bundle: int = -1  # the column holding the bundle (-1: every connector has its own column)
    bundled: int = 0  # connectors of the bundle that touch the row


NO_LINKS = RowLinks((), ())
BLOCK_ROWS = 256


class SummaryLinks:
    """The connectors of every drawn branch summary whose summarised tip is drawn elsewhere."""

    def __init__(self, rows: GraphRows) -> None:
        layout = rows.layout
        tree = layout.tree
        links: list[tuple[int, int, int, int, int]] = []
        for seq in layout.summaries:
            record = tree.records[seq]
            source_record = tree.record(record.meta.get("fromId"))
            if source_record is None:
                continue
            source = layout.anchor.get(source_record.seq)
            if source is None or source == seq or source == layout.parent.get(seq):
                continue  # nothing drawn apart from the summary's own line
            row, source_row = rows.row_for(seq), rows.row_for(source)
            if row is None or source_row is None or row == source_row:
                continue
            links.append((min(row, source_row), max(row, source_row), seq, source, row))
        links.sort()
        column_end: list[int] = []  # last row held by each column
        placed: list[SummaryLink] = []
        for top, bottom, seq, source, summary_row in links:
            column = next((i for i, end in enumerate(column_end) if end < top), len(column_end))
            if column == len(column_end):
                column_end.append(bottom)
            else:
                column_end[column] = bottom
            placed.append(SummaryLink(seq, source, top, bottom, column, summary_row == top))
        self.links = placed
        self.width = len(column_end)
        self._tops = [link.top for link in placed]
        self._blocks: dict[int, list[SummaryLink]] = {}

    def __len__(self) -> int:
        return len(self.links)

    def at(self, row: int, limit: int | None = None) -> RowLinks:
        """The connectors that touch visible row ``row``, in at most ``limit`` columns (at least 1;
        None: as many as they take)."""
        if not self.links:
            return NO_LINKS
        bundle = self.columns(limit) - 1 if limit is not None and self.width > max(1, limit) else -1
        passing: set[int] = set()
        ends: list[LinkEnd] = []
        bundled = 0
        for link in self._block(row // BLOCK_ROWS):
            if link.bottom < row or link.top > row:
                continue
            column = link.column
            if 0 <= bundle <= column:
                column = bundle
                bundled += 1
            if row == link.top or row == link.bottom:
                downward = row == link.top
                ends.append(LinkEnd(column, downward, downward == link.summary_on_top))
            else:
                passing.add(column)
        if not passing and not ends:
            return NO_LINKS
        return RowLinks(tuple(sorted(passing)), tuple(ends), bundle if bundled else -1, bundled)

    def columns(self, limit: int | None = None) -> int:
        """How many columns the connectors are drawn in with at most ``limit`` of them."""
        return self.width if limit is None else min(self.width, max(1, limit))

    def _block(self, block: int) -> list[SummaryLink]:
        """The connectors overlapping rows ``block * BLOCK_ROWS`` to the block's last row."""
        found = self._blocks.get(block)
        if found is None:
            first, last = block * BLOCK_ROWS, (block + 1) * BLOCK_ROWS - 1
            candidates = self.links[: bisect_right(self._tops, last)]
            found = self._blocks[block] = [link for link in candidates if link.bottom >= first]
        return found
