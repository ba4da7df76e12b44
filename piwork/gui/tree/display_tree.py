"""The shape of the session tree as displayed: which entries show, and under which row.

Pure Python over the engine's `SessionTree` (no Qt), built in one pass so 100k entries take a
fraction of a second. Rules (sessions spec §12):

- filter modes `default`, `no-tools`, `user-only`, `labeled-only`, `all`; an assistant message with
  no text that stopped normally (a pure tool-call turn) is hidden unless it is the leaf; search
  tokens must all occur in an entry's text; a hidden entry's children attach to the nearest shown
  ancestor;
- children are ordered by time with the child on the active path first.

Long linear runs are not nested one level per entry: a run of entries that each have one shown
child is listed as consecutive rows of one list. At a *branch point* (two or more shown children)
the first child (the one on the active path, else the oldest) goes on in the same list, like the
main line of a history graph; only the other children nest under the branch point as *heads*, and
each head's own run continues as its children. So nesting depth grows with the number of side
branches taken on the way to an entry, not with the session length or the number of forks passed:
a 1,000-entry active path with 50 forks off it is one flat list. A list longer than `group_size` is
split into group rows of that many entries.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from piwork.core.settings_schema import TREE_FILTER_MODE
from piwork.gui.logs.sgr import strip_ansi
from piwork.gui.tree.context_marks import LEFT_OUT, REPLACED
from piwork.gui.tree.tree_search import SearchMatches, search_text

if TYPE_CHECKING:
    from piwork.core.session import EntryRecord, SessionTree

FILTER_MODES = TREE_FILTER_MODE.choices  # the treeFilterMode setting's choices, in the box's order
_DEFAULT_HIDDEN_TYPES = {"label", "custom", "model_change", "thinking_level_change", "session_info"}
_QUIET_STOP_REASONS = ("stop", "toolUse", None)

Container = int | None  # seq of the entry whose rows these are; None for the top level


def normalize_mode(mode: str) -> str:
    return mode if mode in FILTER_MODES else "default"


def is_pure_tool_call_turn(record: EntryRecord) -> bool:
    return (
        record.type == "message"
        and record.role == "assistant"
        and not record.meta.get("hasText")
        and record.meta.get("stopReason") in _QUIET_STOP_REASONS
    )


@dataclass
class Visibility:
    """Decides whether one record is shown."""

    tree: SessionTree
    mode: str = "default"
    query: str = ""
    leaf_seq: int | None = None
    matches: SearchMatches | None = None  # the search's result, computed in a worker (tree_search.py)
    _tokens: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.mode = normalize_mode(self.mode)
        self._tokens = self.query.lower().split()
        if self.matches is not None and self.matches.query != self.query:
            self.matches = None

    def shows(self, record: EntryRecord) -> bool:
        if not isinstance(record.id, str) or record.type == "session":
            return False
        mode = self.mode
        if mode == "user-only":
            if not (record.type == "message" and record.role == "user"):
                return False
        elif mode == "labeled-only":
            if self.tree.label(record.id) is None:
                return False
        elif mode != "all":
            if record.type in _DEFAULT_HIDDEN_TYPES:
                return False
            if mode == "no-tools" and record.type == "message" and record.role == "toolResult":
                return False
        if record.role == "assistant" and "hasText" not in record.meta:
            self.tree.details(record)  # the index lacks the text/stop-reason facts: read the body
        if is_pure_tool_call_turn(record) and record.seq != self.leaf_seq:
            return False
        if self._tokens:
            label = self.tree.label(record.id)
            matches = self.matches
            if matches is not None and record.seq < matches.upto and label is None:
                return record.seq in matches.seqs
            text = search_text(self.tree.details(record), label)
            return all(token in text for token in self._tokens)
        return True


GROUP_SIZE = 1000  # rows per group when one list grows longer than this
GROUP_BASE = 1 << 48  # group rows get ids from here on (entries use their record number)


@dataclass(frozen=True)
class Placement:
    """Where a new row goes: `container` and `position`; `new_group`: a group row must be added
    first at `position` of `container`, and the entry becomes its first row."""

    container: Container
    position: int
    new_group: bool = False


@dataclass
class DisplayTree:
    """Rows per container. A list longer than `group_size` is split into group rows (ids from
    GROUP_BASE) holding `group_size` entries each, so a view lays out only the groups it expands."""

    rows: dict[Container, list[int]] = field(default_factory=dict)
    container: dict[int, Container] = field(default_factory=dict)
    row: dict[int, int] = field(default_factory=dict)
    head: set[int] = field(default_factory=set)  # rows listed under a branch point (or one of several roots)
    shown_children: dict[Container, int] = field(default_factory=dict)  # count of shown children
    shown_parent: dict[int, Container] = field(default_factory=dict)
    active: set[int] = field(default_factory=set)  # seqs on the root→leaf path (shown or not)
    landing: int | None = None  # the shown entry that stands for the leaf
    group_size: int = GROUP_SIZE
    groups: dict[int, Container] = field(default_factory=dict)  # group id -> the list it belongs to
    next_group: int = GROUP_BASE

    def __len__(self) -> int:
        return len(self.container) - len(self.groups)

    @staticmethod
    def is_group(node: Container) -> bool:
        return node is not None and node >= GROUP_BASE

    def list_of(self, container: Container) -> Container:
        """The list a container belongs to (a group's list, or the container itself)."""
        if container is not None and container >= GROUP_BASE:
            return self.groups[container]
        return container

    def place(self, seq: int, parent: Container, is_head: bool) -> Placement | None:
        """Where a new shown entry under shown parent `parent` goes; None when the list would have
        to be regrouped (the caller rebuilds)."""
        if parent is None or is_head or parent in self.head:
            target: Container = parent
        else:
            target = self.list_of(self.container[parent])
        listed = self.rows.get(target, [])
        if listed and self.is_group(listed[0]):
            last = listed[-1]
            if len(self.rows[last]) < self.group_size:
                return Placement(last, len(self.rows[last]))
            return Placement(target, len(listed), new_group=True)
        if len(listed) >= self.group_size:
            return None
        return Placement(target, len(listed))

    def add_group(self, container: Container) -> int:
        """Append an (empty) group row to `container`'s list; returns its id."""
        group = self.next_group
        self.next_group += 1
        listed = self.rows.setdefault(container, [])
        self.row[group] = len(listed)
        listed.append(group)
        self.container[group] = container
        self.groups[group] = container
        return group

    def add(self, seq: int, parent: Container, is_head: bool, container: Container) -> None:
        listed = self.rows.setdefault(container, [])
        self.row[seq] = len(listed)
        listed.append(seq)
        self.container[seq] = container
        self.shown_parent[seq] = parent
        self.shown_children[parent] = self.shown_children.get(parent, 0) + 1
        if is_head:
            self.head.add(seq)

    def remove_last(self, seq: int) -> None:
        """Take a childless entry that is the last row of its list (or group) out again; a group
        it leaves must keep other rows (checked by the caller)."""
        container = self.container.pop(seq)
        self.rows[container].pop()
        if not self.rows[container]:
            del self.rows[container]
        del self.row[seq]
        parent = self.shown_parent.pop(seq)
        self.shown_children[parent] -= 1
        self.head.discard(seq)

    def split_long_lists(self) -> None:
        """Group every list longer than `group_size` (done once after a full build)."""
        for container, listed in list(self.rows.items()):
            if len(listed) <= self.group_size or self.is_group(container):
                continue
            self.rows[container] = []
            for start in range(0, len(listed), self.group_size):
                group = self.add_group(container)
                chunk = listed[start : start + self.group_size]
                self.rows[group] = chunk
                for position, seq in enumerate(chunk):
                    self.container[seq] = group
                    self.row[seq] = position


def _ordered_children(tree: SessionTree, record: EntryRecord, active: set[int]) -> list[EntryRecord]:
    children = tree.children(record.id)
    if len(children) < 2:
        return children
    children = tree.sorted_children(record.id)
    for i, child in enumerate(children):
        if child.seq in active:
            if i:
                children.insert(0, children.pop(i))
            break
    return children


def _ordered_roots(tree: SessionTree, active: set[int]) -> list[EntryRecord]:
    roots = [r for r in tree.roots() if isinstance(r.id, str)]
    for i, root in enumerate(roots):
        if root.seq in active and i:
            roots.insert(0, roots.pop(i))
            break
    return roots


def build_display_tree(
    tree: SessionTree,
    mode: str = "default",
    query: str = "",
    group_size: int = GROUP_SIZE,
    matches: SearchMatches | None = None,
) -> DisplayTree:
    """`matches`: the search's result for `query` (else the search reads entry texts here)."""
    from piwork.core.collector import paused_gc

    with paused_gc(keep=True):  # the outline lives as long as it is shown: later collections leave it out
        return _build(tree, mode, query, group_size, matches)


def _build(
    tree: SessionTree, mode: str, query: str, group_size: int, matches: SearchMatches | None
) -> DisplayTree:
    path = tree.path()
    active = {r.seq for r in path}
    leaf_seq = path[-1].seq if path else None
    shows = Visibility(tree, mode, query, leaf_seq, matches).shows
    # Pass 1: shown entries in display order, each with its nearest shown ancestor.
    order: list[tuple[int, Container]] = []
    seen: set[int] = set()
    stack: list[tuple[EntryRecord, Container]] = [(r, None) for r in reversed(_ordered_roots(tree, active))]
    # Entries caught in a parent cycle are reachable from no root: they follow as extra roots.
    unreached = (r for r in tree.records if isinstance(r.id, str) and r.type != "session")
    pop, push, note, mark = stack.pop, stack.append, order.append, seen.add
    children_of = tree.children
    while True:
        if not stack:
            extra = next((r for r in unreached if r.seq not in seen), None)
            if extra is None:
                break
            push((extra, None))
        record, shown_ancestor = pop()
        while True:  # walk a linear run without going through the stack
            seq = record.seq
            if seq in seen:
                break
            mark(seq)
            if shows(record):
                note((seq, shown_ancestor))
                shown_ancestor = seq
            children = children_of(record.id)
            if len(children) == 1:
                record = children[0]
                continue
            if children:
                for child in reversed(_ordered_children(tree, record, active)):
                    push((child, shown_ancestor))
            break
    counts: dict[Container, int] = {}
    for _seq, parent in order:
        counts[parent] = counts.get(parent, 0) + 1
    # Pass 2: rows. A parent with two or more shown children is a branch point: its first child
    # continues the parent's list, the others are heads listed under it; a head's run continues as
    # its children (see DisplayTree.place).
    display = DisplayTree(active=active, shown_children=counts, group_size=group_size)
    continued: set[Container] = set()  # branch points whose first child has been placed
    rows, container_of, row_of, heads, shown_parent = (
        display.rows,
        display.container,
        display.row,
        display.head,
        display.shown_parent,
    )
    for seq, parent in order:
        branch_point = counts[parent] >= 2
        # a head's run is its children, so a head that forks lists all its children as heads
        if parent is None or (branch_point and (parent in heads or parent in continued)):
            container = parent
            if branch_point:
                heads.add(seq)
        else:
            container = parent if parent in heads else container_of[parent]
        if branch_point:
            continued.add(parent)
        listed = rows.get(container)
        if listed is None:
            listed = rows[container] = []
        row_of[seq] = len(listed)
        listed.append(seq)
        container_of[seq] = container
        shown_parent[seq] = parent
    display.split_long_lists()
    display.landing = _landing(display, path)
    return display


def _landing(display: DisplayTree, path: Iterable[EntryRecord]) -> int | None:
    landing = None
    for record in path:
        if record.seq in display.container:
            landing = record.seq
    return landing


# Words for the session file's record kinds and message roles (the ids stay in the entry details).
_KIND_WORDS = {
    "model_change": "model",
    "thinking_level_change": "thinking level",
    "custom": "extension data",
}
_ROLE_WORDS = {
    "compactionSummary": "compaction summary",
    "branchSummary": "branch summary",
    "custom": "extension message",
}


def context_edit_title(record: EntryRecord, tree: SessionTree, preview: str) -> str:
    """What an edit did, and to which entry (by its own title)."""
    target_id = record.meta.get("targetId")
    what = LEFT_OUT if preview.endswith(" left out") else REPLACED
    target = tree.record(str(target_id)) if isinstance(target_id, str) else None
    if target is None or target.type == "context_edit":
        return f"[context edit] {what}: {target_id}"
    return f"[context edit] {what}: {entry_title(target, tree)}"


def entry_title(record: EntryRecord, tree: SessionTree) -> str:
    """One-line text of a row."""
    kind = record.type
    preview = strip_ansi(tree.details(record).preview or "")
    if kind == "message":
        role = record.role or "?"
        if role == "toolResult":
            return f"[tool result] {preview}"
        stop = record.meta.get("stopReason")
        if role == "assistant" and stop == "error":
            from piwork.core.llm import readable_error

            error = readable_error(str(record.meta.get("errorMessage") or "no reason given"))
            return f"assistant: ✗ failed — {error}" + (f" (after: {preview})" if preview else "")
        if role == "assistant" and stop == "aborted":
            return f"assistant: ■ stopped — {preview}" if preview else "assistant: ■ stopped before answering"
        if role == "assistant" and not preview:
            return "assistant: (no text)"
        if role == "bashExecution":
            return f"[shell] {preview}"
        if role == "system":  # prompt state, not a conversation message
            return f"[system prompt] {preview}" if preview else "[system prompt]"
        return f"{_ROLE_WORDS.get(role, role)}: {preview}"
    if kind == "compaction":
        tokens = record.meta.get("tokensBefore")
        size = f" ({tokens:,} tokens before)" if isinstance(tokens, int) else ""
        return f"[compaction{size}] {preview}"
    if kind == "branch_summary":
        return f"[branch summary] {preview}" if preview else "[branch summary] (empty)"
    custom_type = str(record.meta.get("customType"))
    from piwork.core.context import CUSTOM_TYPE_WORDS

    if kind in ("custom_message", "custom") and custom_type in CUSTOM_TYPE_WORDS:
        words = f"[{CUSTOM_TYPE_WORDS[custom_type]}]"
        return words if preview in ("", custom_type) else f"{words} {preview}"
    if kind == "custom_message":
        return f"[{record.meta.get('customType', 'custom')}] {preview}"
    if kind == "label":
        target = record.meta.get("targetId")
        return f"[label] {preview or '(cleared)'} → {target}"
    if kind == "session_info":
        return f"[name] {preview}"
    if kind == "context_edit":
        return context_edit_title(record, tree, preview)
    if kind == "usage":  # preview: "<kind> <provider>/<model>"
        return f"[billed traffic] {preview.strip() or 'outside a reply'}"
    return f"[{_KIND_WORDS.get(str(kind), kind)}] {preview}"
