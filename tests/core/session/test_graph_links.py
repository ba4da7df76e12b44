"""Summary connectors: every connector overlapping others takes a column of its own (exact columns),
and a row asked for fewer columns bundles the rest into the last one with the count of connectors."""

from __future__ import annotations

from typing import Any

from piwork.core.ids import SequentialIds
from piwork.core.session.graph_layout import GraphLayout
from piwork.core.session.graph_links import NO_LINKS, LinkEnd, RowLinks, SummaryLinks
from piwork.core.session.graph_rows import GraphRows
from piwork.core.session.tree import SessionTree, tree_from_values

STAMP = "2025-01-01T00:00:00.000Z"
SIDES = 10


def _user(entry_id: str, parent: str | None) -> dict[str, Any]:
    return {"type": "message", "id": entry_id, "parentId": parent, "timestamp": STAMP,
            "message": {"role": "user", "content": entry_id, "timestamp": 1}}  # fmt: skip


def _nested_summaries() -> SessionTree:
    """A main run c0..c11 with a side branch b<i> off each c<i> (i < 10), then ten summaries s0..s9
    in a row under c11, s<i> summarising b<i>: every connector overlaps every other."""
    values = [_user(f"c{i}", f"c{i - 1}" if i else None) for i in range(12)]
    values += [_user(f"b{i}", f"c{i}") for i in range(SIDES)]
    for i in range(SIDES):
        values.append({"type": "branch_summary", "id": f"s{i}", "parentId": f"s{i - 1}" if i else "c11",
                       "timestamp": STAMP, "fromId": f"b{i}", "summary": f"side {i}"})  # fmt: skip
    return tree_from_values(values, new_id=SequentialIds("n"))


def _links() -> tuple[SessionTree, GraphRows, SummaryLinks]:
    tree = _nested_summaries()
    rows = GraphRows(GraphLayout(tree))
    return tree, rows, SummaryLinks(rows)


def test_ten_overlapping_connectors_take_ten_columns() -> None:
    tree, rows, links = _links()
    ids = [str(tree.records[seq].id) for seq in rows.rows]  # type: ignore[index]
    # the main run and the summaries first, then the side branches, the last pushed first
    assert ids == [*(f"c{i}" for i in range(12)), *(f"s{i}" for i in range(SIDES)),
                   *(f"b{i}" for i in reversed(range(SIDES)))]  # fmt: skip
    spans = [
        (str(tree.records[x.summary].id), x.top, x.bottom, x.column, x.summary_on_top) for x in links.links
    ]
    assert spans == [(f"s{i}", 12 + i, 31 - i, i, True) for i in range(SIDES)]
    assert links.width == SIDES and links.columns() == SIDES and links.columns(4) == 4
    # s9's row: the nine others pass, s9's own connector leaves downwards from its arrowhead
    assert links.at(21) == RowLinks(tuple(range(9)), (LinkEnd(9, True, True),))
    assert links.at(22) == RowLinks(tuple(range(9)), (LinkEnd(9, False, False),))  # b9, its tip
    assert links.at(11) == NO_LINKS and links.at(12) == RowLinks((), (LinkEnd(0, True, True),))


def test_a_narrow_view_bundles_the_columns_past_its_limit_and_counts_them() -> None:
    _tree, _rows, links = _links()
    # four columns: 0..2 as they are, s3..s9 in column 3 (the bundle); on s9's row seven touch it
    assert links.at(21, limit=4) == RowLinks((0, 1, 2, 3), (LinkEnd(3, True, True),), bundle=3, bundled=7)
    assert links.at(15, limit=4) == RowLinks((0, 1, 2), (LinkEnd(3, True, True),), bundle=3, bundled=1)
    assert links.at(14, limit=4) == RowLinks((0, 1), (LinkEnd(2, True, True),))  # nothing bundled here
    assert links.at(30, limit=4) == RowLinks((0,), (LinkEnd(1, False, False),))
    assert links.at(21, limit=SIDES) == links.at(21)  # enough room: nothing bundled
    assert links.at(21, limit=0) == RowLinks((0,), (LinkEnd(0, True, True),), bundle=0, bundled=10)
