"""The session tree laid out as a branch graph: one row per entry, each branch in a lane.

Pure Python over ``SessionTree`` (no Qt). Which entries the graph shows is a predicate given by the
caller (the tree view's filter: mode and search words); by default the conversation entries
(messages, summaries, compactions, custom messages), skipping bookkeeping entries (labels, names,
model and thinking changes, extension data). A skipped entry's children hang on its nearest shown
ancestor, in that ancestor's lane.

Order: depth first, children by file order. A *branch* is a run that follows first children from
its *head* (a root, or a later child of a fork) to its *tip*; its entries are consecutive rows in
one lane, so a 1,000-message run is one straight column. A later child's branch is listed after the
whole subtree of the earlier one, joined to its fork by a line in its own lane.

Lanes: each branch holds a lane from its fork's row to its tip's row; branches are taken in the
order of those start rows and each gets the lowest lane free there (interval partitioning). An
entry appended under a tip (what streaming does) only lengthens that branch's interval by one row
and shifts later rows by one, which keeps every overlap, so every lane stays where it was; the
``extend`` fast path applies exactly that, and a full rebuild gives the same lanes. A predicate may
show an entry only while it is the leaf (a tool-call turn without text): when an entry appended
under it hides it, ``extend`` takes its row out again (a tip that is not a branch head: its
branch's interval loses its last row, which also keeps every overlap).

``upto`` lays out only the entries before that record number: the tree as it was when it held that
many records. A layout built in a worker thread while the tree keeps taking appends is the layout of
that moment, whatever the worker saw appended meanwhile; the appends since are then taken one by one
with ``extend``, as they would have been had the layout been there when they came.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from itertools import islice
from typing import Any

from piwork.core.collector import paused_gc
from piwork.core.session.jsvalues import js_same
from piwork.core.session.records import EntryRecord
from piwork.core.session.tree import SessionTree

GRAPH_SKIPPED_TYPES = frozenset(
    {"session", "label", "session_info", "model_change", "thinking_level_change", "custom"}
)


def graph_shows(record: EntryRecord) -> bool:
    return isinstance(record.id, str) and record.type not in GRAPH_SKIPPED_TYPES


Shows = Callable[[EntryRecord], bool]


@dataclass(frozen=True)
class Splice:
    """What ``GraphLayout.extend`` changed: from layout row ``row``, ``removed`` entries (0 or 1: a tip
    the new entry hides) were taken out and ``added`` (0 or 1: the new entry) put in."""

    row: int
    removed: int
    added: int


NOTHING_SHOWN = Splice(0, 0, 0)  # `extend` result: nothing drawn changed (the entry is not shown)


@dataclass
class Branch:
    head: int  # seq of its first entry
    tip: int  # seq of its last entry
    fork: int | None  # seq of the entry it branches off (None for a root run)
    lane: int = 0


class GraphLayout:
    """Rows, lanes and edges of the branch graph of one tree (see the module docstring).

    Per shown entry (by ``seq``): ``lane``, ``parent`` (nearest shown ancestor or None),
    ``children`` (shown, file order), ``branch_of`` (index into ``branches``). Per row: ``order``
    (the entry's seq) and ``through`` (lanes whose line passes the row on its way from a fork down
    to a head). ``fork_lanes(seq)`` are the lanes of the branches leaving an entry.
    """

    def __init__(self, tree: SessionTree, shows: Shows = graph_shows, upto: int | None = None) -> None:
        """`shows(record)`: whether an entry gets a row (records without a string id never do); `upto`:
        only the records before this record number (see the module docstring)."""
        self.tree = tree
        self._shows = shows
        self._upto = upto
        with paused_gc():
            self._build()

    # -- building ---------------------------------------------------------------------------------
    def _build(self) -> None:
        self.order: list[int] = []
        self.row_of: dict[int, int] = {}
        self.parent: dict[int, int | None] = {}
        self.children: dict[int, list[int]] = {}
        self.anchor: dict[int, int | None] = {}  # any seq -> itself if shown, else nearest shown ancestor
        self.lane: dict[int, int] = {}
        self.branch_of: dict[int, int] = {}
        self.branches: list[Branch] = []
        self.summaries: list[int] = []  # seqs of the drawn branch summaries, in file order
        self._shown_tree()
        self._emit_rows()
        self._assign_lanes()
        self._sweep_through()

    def _shown_tree(self) -> None:
        """Nearest shown ancestor of every entry, walking from the roots (cycles end as extra roots)."""
        tree = self.tree
        records = tree.records
        children_of = tree.children
        shows = self._shows
        parent, children, anchor, summaries = self.parent, self.children, self.anchor, self.summaries
        upto = len(records) if self._upto is None else self._upto
        roots: list[int] = []
        stack: list[tuple[EntryRecord, int | None]] = [
            (r, None) for r in reversed(tree.roots()) if isinstance(r.id, str) and r.seq < upto
        ]
        unreached = (r for r in islice(records, upto) if isinstance(r.id, str) and r.type != "session")
        while True:
            if not stack:
                extra = next((r for r in unreached if r.seq not in anchor), None)
                if extra is None:
                    break
                stack.append((extra, None))
            record, above = stack.pop()
            while True:  # a linear run without going through the stack
                seq = record.seq
                if seq in anchor:
                    break
                if isinstance(record.id, str) and shows(record):
                    if record.type == "branch_summary":
                        summaries.append(seq)
                    parent[seq] = above
                    if above is None:
                        roots.append(seq)
                    else:
                        children.setdefault(above, []).append(seq)
                    above = seq
                anchor[seq] = above
                kids = children_of(record.id)
                if kids and kids[-1].seq >= upto:  # appended after the moment laid out (file order)
                    kids = [kid for kid in kids if kid.seq < upto]
                if len(kids) == 1:
                    record = kids[0]
                    continue
                for kid in reversed(kids):
                    stack.append((kid, above))
                break
        for listed in children.values():
            if len(listed) > 1:
                listed.sort()
        summaries.sort()
        self.roots = sorted(roots)

    def _emit_rows(self) -> None:
        """Depth-first rows (first child's subtree before its siblings) and the branch of each entry."""
        order, branch_of, branches, children = self.order, self.branch_of, self.branches, self.children
        stack = list(reversed(self.roots))
        while stack:
            seq = stack.pop()
            fork = self.parent[seq]
            branch = Branch(seq, seq, fork)
            index = len(branches)
            branches.append(branch)
            while True:  # one branch: follow first children
                order.append(seq)
                branch_of[seq] = index
                branch.tip = seq
                kids = children.get(seq)
                if not kids:
                    break
                for kid in reversed(kids[1:]):
                    stack.append(kid)
                seq = kids[0]
        self.row_of = {seq: row for row, seq in enumerate(order)}

    def _start_row(self, branch: Branch) -> int:
        return self.row_of[branch.fork if branch.fork is not None else branch.head]

    def _assign_lanes(self) -> None:
        row_of = self.row_of
        ranked = sorted(self.branches, key=lambda b: (self._start_row(b), row_of[b.head]))
        lane_end: list[int] = []  # last row held by each lane
        for branch in ranked:
            start, end = self._start_row(branch), row_of[branch.tip]
            lane = next((i for i, held in enumerate(lane_end) if held < start), len(lane_end))
            if lane == len(lane_end):
                lane_end.append(end)
            else:
                lane_end[lane] = end
            branch.lane = lane
        self.width = len(lane_end)
        lane_by_seq = self.lane
        branches = self.branches
        for seq, index in self.branch_of.items():
            lane_by_seq[seq] = branches[index].lane

    def _sweep_through(self) -> None:
        """Lanes passing each row between a fork and the head of a later branch (one shared tuple per run of
        rows with the same set)."""
        opens: dict[int, list[int]] = {}
        closes: dict[int, list[int]] = {}
        for branch in self.branches:
            if branch.fork is None:
                continue
            start, head = self.row_of[branch.fork], self.row_of[branch.head]
            if head - start > 1:
                opens.setdefault(start + 1, []).append(branch.lane)
                closes.setdefault(head, []).append(branch.lane)
        current: set[int] = set()
        shared: tuple[int, ...] = ()
        through: list[tuple[int, ...]] = []
        for row in range(len(self.order)):
            changed = False
            for lane in closes.get(row, ()):
                current.discard(lane)
                changed = True
            for lane in opens.get(row, ()):
                current.add(lane)
                changed = True
            if changed:
                shared = tuple(sorted(current))
            through.append(shared)
        self.through = through

    # -- reading ----------------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.order)

    def fork_lanes(self, seq: int) -> tuple[int, ...]:
        kids = self.children.get(seq)
        if not kids or len(kids) < 2:
            return ()
        return tuple(self.lane[kid] for kid in kids[1:])

    def continues(self, seq: int) -> bool:
        """Whether the entry's branch goes on below it (it has a first child)."""
        return bool(self.children.get(seq))

    def is_head(self, seq: int) -> bool:
        return self.branches[self.branch_of[seq]].head == seq

    def shown_seq(self, entry_id: Any) -> int | None:
        """The row entry that stands for `entry_id` (itself, or its nearest shown ancestor)."""
        record = self.tree.record(entry_id)
        return None if record is None else self.anchor.get(record.seq)

    # -- streaming --------------------------------------------------------------------------------
    def extend(self, record: EntryRecord) -> Splice | None:
        """Take an entry just appended to the tree (under the leaf). Returns what changed in the rows
        (``NOTHING_SHOWN`` when nothing drawn did), or None when the entry opens a new branch or root
        or hides a branch head (the caller builds a new layout: same lanes for every other entry,
        see the module docstring)."""
        seq = record.seq
        if seq in self.anchor:
            return None
        parent_id = record.parent_id
        parent_record = None
        if parent_id is not None and not js_same(parent_id, record.id):
            parent_record = self.tree.record(parent_id)
        above: int | None = None
        hidden_tip = False  # the parent was shown only while it was the leaf, and its row goes
        if parent_record is not None:
            above = self.anchor.get(parent_record.seq, -1)
            if above == -1:
                return None
            if above == parent_record.seq and not self._shows(parent_record):
                if not self._can_take(parent_record):
                    return None
                hidden_tip = True
                above = self.parent[parent_record.seq]
        shown = isinstance(record.id, str) and self._shows(record)
        if shown and (above is None or (self.children.get(above) and not hidden_tip)):
            return None  # a new root or a new fork
        if hidden_tip:
            assert parent_record is not None
            row = self._take(parent_record.seq, shift=not shown)
        else:
            row = -1
        if not shown:
            self.anchor[seq] = above
            return NOTHING_SHOWN if row < 0 else Splice(row, 1, 0)
        assert above is not None
        if row < 0:
            row = self.row_of[above] + 1
        index = self.branch_of[above]
        if record.type == "branch_summary":
            self.summaries.append(seq)
        self.anchor[seq] = seq
        self.parent[seq] = above
        self.children[above] = [seq]
        self.branch_of[seq] = index
        self.lane[seq] = self.lane[above]
        self.branches[index].tip = seq
        self.order.insert(row, seq)
        self.through.insert(row, self.through[row - 1])
        self.row_of[seq] = row
        if not hidden_tip:  # later rows move down one (a hidden tip's place is taken over: they stay)
            order = self.order
            self.row_of.update(zip(order[row + 1 :], range(row + 1, len(order)), strict=True))
        return Splice(row, 1 if hidden_tip else 0, 1)

    def _can_take(self, record: EntryRecord) -> bool:
        """Whether a shown entry can lose its row without a new layout: a tip that is its parent's only
        shown child (not a branch head, so the lanes keep their order), with no entry in the tree
        below it but the one just appended (nothing else hangs on it)."""
        seq = record.seq
        above = self.parent[seq]
        return (
            not self.children.get(seq)
            and above is not None
            and self.children.get(above) == [seq]
            and len(self.tree.children(record.id)) == 1
        )

    def _take(self, seq: int, shift: bool) -> int:
        """Take a tip's row out (see `_can_take`); `shift`: move later rows up one. Returns its row."""
        above = self.parent.pop(seq)
        assert above is not None
        row = self.row_of.pop(seq)
        del self.order[row]
        del self.through[row]
        del self.children[above]
        del self.lane[seq]
        self.branches[self.branch_of.pop(seq)].tip = above
        self.anchor[seq] = above
        if self.tree.records[seq].type == "branch_summary":
            self.summaries.remove(seq)
        if shift:
            order = self.order
            self.row_of.update(zip(order[row:], range(row, len(order)), strict=True))
        return row
