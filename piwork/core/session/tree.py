"""The session tree: index, leaf, labels, name, navigation, appends and context building.

``SessionTree`` holds one session's entries as light records (see ``records.py``) and loads a
message body only when asked, so a 100 MB file opens quickly. It knows nothing about files: an
optional *sink* (the store) is told about every appended entry. Problems in the entry graph
(missing or duplicate ids, dangling parents, cycles) become diagnostics and never loop.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from functools import cmp_to_key
from typing import Any

from piwork.core.collector import paused_gc
from piwork.core.ids import IdFactory, random_entry_id
from piwork.core.jscompat import UNDEFINED, js_trim, js_truthy
from piwork.core.session.context_edits import (
    ActiveEdit,
    ContextEditRejected,
    active_edits,
    editable_role,
    normalized_replacement,
    original_content,
)
from piwork.core.session.format import DUPLICATE_ID, MISSING_ID, Diagnostic
from piwork.core.session.graph import check_graph
from piwork.core.session.jsvalues import js_same, map_key
from piwork.core.session.migrate import unique_id
from piwork.core.session.records import EntryRecord, fill_details, make_record
from piwork.core.session.system_messages import current_system_message
from piwork.core.session.timestamps import iso_now, js_date_ms
from piwork.core.session.tree_context import ContextStream, bodies_of, context_for_path, context_records
from piwork.core.session.tree_types import (
    EntryNotFound,
    EntrySink,
    EventKind,
    NodeSummary,
    SessionContext,
    TreeEvent,
    TreeNode,
)

__all__ = [
    "EntryNotFound",
    "EntrySink",
    "NodeSummary",
    "SessionContext",
    "SessionTree",
    "TreeEvent",
    "TreeNode",
    "tree_from_values",
]

BodyLoader = Callable[[EntryRecord], Any]

_CURRENT: Any = object()


def _compare_time(a: EntryRecord, b: EntryRecord) -> int:
    ta, tb = a.time_ms, b.time_ms
    if ta != ta or tb != tb:  # NaN compares equal to everything, like a JS comparator returning NaN
        return 0
    return -1 if ta < tb else (1 if ta > tb else 0)


class SessionTree:
    """One session's entry tree (header excluded) with Pi's append and navigation semantics."""

    def __init__(
        self,
        header: dict[str, Any] | None,
        records: Iterable[EntryRecord] = (),
        *,
        load_body: BodyLoader | None = None,
        new_id: IdFactory = random_entry_id,
        clock: Callable[[], str] = iso_now,
        diagnostics: Iterable[Diagnostic] = (),
    ) -> None:
        self.header = header
        self._records: list[EntryRecord] = list(records)
        self._load_body = load_body
        self._new_id = new_id
        self._clock = clock
        self._file_diagnostics = list(diagnostics)
        self._listeners: list[Callable[[TreeEvent], None]] = []
        self.sink: EntrySink | None = None
        # State entries to write just before the next entry (see ``before_next_append``).
        self._deferred: list[Callable[[], object]] = []
        # the last path walked: (index it was walked in, record count, graph diagnostics, path)
        self._kept_path: tuple[dict[Any, EntryRecord], int, int, list[EntryRecord]] | None = None
        self._reindex()

    # ----------------------------------------------------------------- index
    def _reindex(self) -> None:
        with paused_gc(keep=True):
            self._reindex_all()

    def _reindex_all(self) -> None:
        self._by_key: dict[Any, EntryRecord] = {}
        self._children: dict[Any, EntryRecord | list[EntryRecord]] = {}
        self._labels: dict[Any, tuple[str, Any]] = {}
        self._graph_diagnostics: list[Diagnostic] = []
        self._name_record: EntryRecord | None = None
        self._has_conversation = False
        self.leaf_id: Any = None
        by_key = self._by_key
        children = self._children
        has_conversation = False
        # Records whose parent was found earlier in the file need no graph check (see below).
        unchecked: list[EntryRecord] = []
        for record in self._records:
            entry_id = record.id
            parent_id = record.parent_id
            # The usual message entry, indexed inline (a large session has 100,000 of them).
            if record.type != "message" or type(entry_id) is not str or entry_id in by_key:
                self._index_record(record, reindexing=True)
                unchecked.append(record)
                continue
            if type(parent_id) is str:
                parent = by_key.get(parent_id)
                if parent is not None:
                    record.parent_id = parent_id = parent.id  # share one string object per id
                if parent is None or parent.seq >= record.seq:
                    unchecked.append(record)
                parent_key: Any = parent_id
            else:
                parent_key = map_key(parent_id)
                unchecked.append(record)
            by_key[entry_id] = record
            siblings = children.get(parent_key)
            if siblings is None:
                children[parent_key] = record  # most entries have one child: no list for them
            elif isinstance(siblings, list):
                siblings.append(record)
            else:
                children[parent_key] = [siblings, record]
            if record.role == "assistant" or record.role == "user":
                has_conversation = True
        self._has_conversation = self._has_conversation or has_conversation
        self.leaf_id = next(
            ((None if r.id is UNDEFINED else r.id) for r in reversed(self._records) if r.type != "session"),
            None,
        )
        # A parent found earlier in the file stays the one ``by_key`` holds unless an id is used
        # twice (the later entry wins), and it can be neither dangling nor part of a cycle.
        duplicates = any(d.kind == DUPLICATE_ID for d in self._graph_diagnostics)
        self._graph_diagnostics.extend(check_graph(self._records if duplicates else unchecked, by_key))

    def _index_record(self, record: EntryRecord, reindexing: bool = False) -> None:
        kind = record.type
        if kind == "session":
            return
        entry_id = record.id
        if type(entry_id) is str:
            key: Any = entry_id
            if key in self._by_key:
                self._graph_diagnostics.append(
                    Diagnostic(
                        DUPLICATE_ID,
                        record.line,
                        record.offset,
                        f"Entry id {entry_id} is used more than once; the later entry wins",
                        entry_id,
                    )
                )
        else:
            key = map_key(entry_id)
            if reindexing and kind is not UNDEFINED:
                self._graph_diagnostics.append(
                    Diagnostic(
                        MISSING_ID, record.line, record.offset, "Entry has no id; shown but not linkable"
                    )
                )
        self._by_key[key] = record
        parent_id = record.parent_id
        parent_key = parent_id if type(parent_id) is str else map_key(parent_id)
        if type(parent_id) is str:
            parent = self._by_key.get(parent_id)
            if parent is not None:
                record.parent_id = parent.id  # share one string object per id
        siblings = self._children.get(parent_key)
        if siblings is None:
            self._children[parent_key] = record  # most entries have one child: no list for them
        elif isinstance(siblings, list):
            siblings.append(record)
        else:
            self._children[parent_key] = [siblings, record]
        self.leaf_id = entry_id if entry_id is not UNDEFINED else None
        if kind == "message":
            if record.role == "assistant" or record.role == "user":
                self._has_conversation = True
        elif kind == "label":
            target = map_key(record.meta.get("targetId", UNDEFINED))
            label = record.meta.get("label", UNDEFINED)
            if js_truthy(label):
                self._labels[target] = (label, record.timestamp)
            else:
                self._labels.pop(target, None)
        elif kind == "session_info":
            self._name_record = record

    def add_diagnostic(self, diagnostic: Diagnostic) -> None:
        self._file_diagnostics.append(diagnostic)

    @property
    def diagnostics(self) -> list[Diagnostic]:
        return self._file_diagnostics + self._graph_diagnostics

    # ----------------------------------------------------------------- reading
    def __len__(self) -> int:
        return len(self._records)

    @property
    def records(self) -> list[EntryRecord]:
        return self._records

    @property
    def has_conversation(self) -> bool:
        """Whether a user or assistant message is among the entries (a new file is written from then on,
        as Pi 1.6 does; 0.85 waited for the first assistant message)."""
        return self._has_conversation

    def record(self, entry_id: Any) -> EntryRecord | None:
        return self._by_key.get(map_key(entry_id))

    def has(self, entry_id: Any) -> bool:
        return map_key(entry_id) in self._by_key

    @property
    def body_loader(self) -> BodyLoader | None:
        """How bodies not held on their records are read back (given at construction; None: in memory)."""
        return self._load_body

    def body(self, record: EntryRecord) -> Any:
        if record.body is not None or self._load_body is None:
            return record.body
        return self._load_body(record)

    def bodies(self, records: list[EntryRecord]) -> list[Any]:
        """The bodies of ``records`` in order, those of one file read together in file windows (one
        parse per window rather than one read and parse per line); ``None`` for an unreadable line."""
        return bodies_of(self, records) if records else []

    def entry(self, entry_id: Any) -> Any:
        record = self.record(entry_id)
        return None if record is None else self.body(record)

    def entries(self) -> list[Any]:
        """Every entry body in file order (loads them all: for small sessions and tools)."""
        return [self.body(r) for r in self._records if r.type != "session"]

    def children(self, entry_id: Any) -> list[EntryRecord]:
        """Direct children in file order."""
        found = self._children.get(map_key(entry_id))
        if found is None:
            return []
        return list(found) if isinstance(found, list) else [found]

    def sorted_children(self, entry_id: Any) -> list[EntryRecord]:
        """Direct children by time stamp, oldest first (stable), as the tree view lists them."""
        return sorted(self.children(entry_id), key=cmp_to_key(_compare_time))

    def label(self, entry_id: Any) -> str | None:
        found = self._labels.get(map_key(entry_id))
        return None if found is None else found[0]

    def label_timestamp(self, entry_id: Any) -> Any:
        found = self._labels.get(map_key(entry_id))
        return None if found is None else found[1]

    @property
    def id_factory(self) -> IdFactory:
        return self._new_id

    def label_items(self) -> list[tuple[Any, str, Any]]:
        """``(target, label, label time stamp)`` in the order the labels were set (a cleared and
        set again label moves to the end), targets of other types as their index keys."""
        return [(target, label, stamp) for target, (label, stamp) in self._labels.items()]

    def labels(self) -> dict[str, str]:
        """Current labels of existing entries, in file order of the entries."""
        out: dict[str, str] = {}
        if not self._labels:
            return out
        for record in self._records:
            label = self.label(record.id)
            if label is not None and record.type != "session":
                out[str(record.id)] = label
        return out

    @property
    def name(self) -> str | None:
        """Latest ``session_info`` name in file order; blank means unnamed."""
        if self._name_record is None:
            return None
        name = self._name_record.meta.get("name")
        if not isinstance(name, str):
            return None
        return js_trim(name) or None

    def path(self, leaf_id: Any = _CURRENT) -> list[EntryRecord]:
        """Root→entry path following ``parentId``; ``[]`` for an unknown id or a null leaf.

        The last path walked is kept: asked again for the same entry, or for an entry appended since
        below it (a run asks for the leaf's path a dozen times on a million-entry session), only the
        new part is walked. The kept path is valid while no entry was re-keyed: the same index, and
        no appended entry reused an id (the only ways an older entry's parent could change)."""
        start_id = self.leaf_id if leaf_id is _CURRENT else leaf_id
        start = self._by_key.get(map_key(start_id)) if js_truthy(start_id) else None
        if start is None:
            return []
        state = (self._by_key, len(self._records), len(self._graph_diagnostics))
        kept = self._kept_path
        if kept is not None and kept[0] is state[0] and kept[2] == state[2]:
            path = self._extended_path(start, kept[3], state[1] - kept[1])
            if path is not None:
                self._kept_path = (state[0], state[1], state[2], path)
                return list(path)
        path = self._walked_path(start)
        self._kept_path = (state[0], state[1], state[2], path)
        return list(path)

    def _extended_path(
        self, start: EntryRecord, kept: list[EntryRecord], appended: int
    ) -> list[EntryRecord] | None:
        """``kept`` (a path still valid) followed by up to ``appended`` newer entries down to ``start``,
        or ``None`` when ``start`` is not such a descendant of ``kept``'s last entry."""
        if not kept:
            return None
        end = kept[-1]
        tail: list[EntryRecord] = []
        current: EntryRecord | None = start
        while current is not end:
            if current is None or len(tail) >= appended:
                return None
            tail.append(current)
            parent_id = current.parent_id
            current = self._by_key.get(map_key(parent_id)) if js_truthy(parent_id) else None
        if not tail:
            return kept
        tail.reverse()
        return kept + tail

    def _walked_path(self, start: EntryRecord) -> list[EntryRecord]:
        by_key = self._by_key
        limit = len(self._records)
        path: list[EntryRecord] = []
        current: EntryRecord | None = start
        while current is not None:
            path.append(current)
            if len(path) > limit:  # longer than the file: a cycle, walk again watching for it
                return self._path_stopping_at_cycle(start)
            parent_id = current.parent_id
            if type(parent_id) is str:
                current = by_key.get(parent_id) if parent_id else None
            else:
                current = by_key.get(map_key(parent_id)) if js_truthy(parent_id) else None
        path.reverse()
        return path

    def _path_stopping_at_cycle(self, start: EntryRecord | None) -> list[EntryRecord]:
        path: list[EntryRecord] = []
        seen: set[int] = set()
        current = start
        while current is not None and id(current) not in seen:
            seen.add(id(current))
            path.append(current)
            parent_id = current.parent_id
            current = self._by_key.get(map_key(parent_id)) if js_truthy(parent_id) else None
        path.reverse()
        return path

    def roots(self) -> list[EntryRecord]:
        """Entries with no parent, their own parent, or an unknown parent, in file order."""
        out = []
        by_key = self._by_key
        for record in self._records:
            parent = record.parent_id
            if type(parent) is str and parent in by_key and parent != record.id:
                continue  # the usual entry (its own parent when its id is that string too)
            if record.type == "session":
                continue
            if parent is None or js_same(parent, record.id) or map_key(parent) not in by_key:
                out.append(record)
        return out

    def tree(self) -> list[TreeNode]:
        """The whole tree (Pi's ``getTree``): roots in file order, children sorted by time."""
        nodes: dict[Any, TreeNode] = {}
        visible = [r for r in self._records if r.type != "session"]
        for record in visible:
            label = self._labels.get(map_key(record.id))
            nodes[map_key(record.id)] = TreeNode(
                record, [], None if label is None else label[0], None if label is None else label[1]
            )
        roots: list[TreeNode] = []
        for record in visible:
            node = nodes[map_key(record.id)]
            parent_id = record.parent_id
            if parent_id is None or js_same(parent_id, record.id):
                roots.append(node)
                continue
            parent = nodes.get(map_key(parent_id))
            if parent is None or parent is node:
                roots.append(node)
            else:
                parent.children.append(node)

        def by_time(a: TreeNode, b: TreeNode) -> int:
            return _compare_time(a.record, b.record)

        key = cmp_to_key(by_time)
        stack = list(roots)
        seen: set[int] = set()
        while stack:
            node = stack.pop()
            if id(node) in seen:
                continue
            seen.add(id(node))
            node.children.sort(key=key)
            stack.extend(node.children)
        return roots

    def summary(self, record: EntryRecord) -> NodeSummary:
        self.details(record)
        label = self._labels.get(map_key(record.id))
        return NodeSummary(
            id=str(record.id),
            parent_id=record.parent_id if isinstance(record.parent_id, str) else None,
            type=str(record.type),
            role=record.role,
            preview=record.preview,
            label=None if label is None else label[0],
            label_timestamp=None if label is None else label[1],
            timestamp=record.timestamp,
            is_leaf=js_same(record.id, self.leaf_id),
        )

    # ----------------------------------------------------------------- context
    def build_context(
        self, leaf_id: Any = _CURRENT, honour_retained_tail: bool = True, keep_originals: bool = False
    ) -> SessionContext:
        """Messages, model and thinking level for a leaf (default: the current leaf).

        ``None`` means an empty context (a reset leaf). ``retainedTail`` is honoured by default.
        ``keep_originals``: the transcript instead, each message as written, what context edits change
        marked in ``edited``.
        """
        target = self.leaf_id if leaf_id is _CURRENT else leaf_id
        with paused_gc(keep=True):
            path = [] if target is None else self.path(target)
            return context_for_path(self, path, honour_retained_tail, keep_originals)

    def stream_context(self, leaf_id: Any = _CURRENT, honour_retained_tail: bool = True) -> ContextStream:
        """``build_context``'s messages a batch at a time, for a caller that keeps none of them (see
        ``ContextStream``): what a whole context costs in memory is then only one batch."""
        target = self.leaf_id if leaf_id is _CURRENT else leaf_id
        path = [] if target is None else self.path(target)
        return ContextStream(self, path, honour_retained_tail)

    def context_edits(self, leaf_id: Any = _CURRENT) -> list[ActiveEdit]:
        """The context edits in force on the branch ending at ``leaf_id`` (default: the leaf), in the
        order of the entries they change."""
        target = self.leaf_id if leaf_id is _CURRENT else leaf_id
        path = [] if target is None else self.path(target)
        selected, _ = context_records(self, path)
        if not any(record.type == "context_edit" for record in selected):
            return []
        wanted = {map_key(r.meta.get("targetId", UNDEFINED)) for r in selected if r.type == "context_edit"}
        bodies = [self.body(r) for r in selected if r.type == "context_edit" or map_key(r.id) in wanted]
        return active_edits(b for b in bodies if isinstance(b, dict))

    def details(self, record: EntryRecord) -> EntryRecord:
        """Make sure ``preview`` and ``meta`` are complete (parses the body once if needed)."""
        if not record.has_details:
            body = self.body(record)
            if isinstance(body, dict):
                fill_details(record, body)
            else:
                record.cached_preview = ""
        return record

    # ----------------------------------------------------------------- events
    def subscribe(self, callback: Callable[[TreeEvent], None]) -> Callable[[], None]:
        """Call ``callback`` on every change; returns a function that unsubscribes it."""
        self._listeners.append(callback)

        def unsubscribe() -> None:
            if callback in self._listeners:
                self._listeners.remove(callback)

        return unsubscribe

    def _emit(self, kind: EventKind, entry_id: Any) -> None:
        event = TreeEvent(kind, entry_id if isinstance(entry_id, str) else None)
        for callback in list(self._listeners):
            callback(event)

    def replace_records(
        self,
        header: dict[str, Any] | None,
        records: Iterable[EntryRecord],
        diagnostics: Iterable[Diagnostic] = (),
    ) -> None:
        """Swap in a freshly read file (after another program appended); keeps a still-valid leaf."""
        previous_leaf = self.leaf_id
        self.header = header
        self._records = list(records)
        self._file_diagnostics = list(diagnostics)
        self._reindex()
        if previous_leaf is not None and self.has(previous_leaf):
            self.leaf_id = previous_leaf
        self._emit("reload", None)

    def take_in(
        self, records: Iterable[EntryRecord], diagnostics: Iterable[Diagnostic] | None = None
    ) -> None:
        """Entries another program appended to the file, as the reader made them from it (in file order,
        after every entry this tree holds): indexed and announced like appends, nothing written. The
        leaf moves to the last of them. ``diagnostics``: the file's, when it was read whole with them."""
        if diagnostics is not None:
            self._file_diagnostics = list(diagnostics)
        for record in records:
            self._records.append(record)
            self._index_record(record)
            self._emit("append", record.id)

    # ----------------------------------------------------------------- writing
    def new_entry_id(self) -> str:
        return unique_id(lambda candidate: candidate in self._by_key, self._new_id)

    def before_next_append(self, append: Callable[[], object]) -> None:
        """Run ``append`` (appends of its own) right before the next entry is appended, not now: what a
        run records about its starting state reaches the file with the first thing the user does,
        never from merely opening it."""
        self._deferred.append(append)

    def _base(self, kind: str) -> dict[str, Any]:
        if self._deferred:
            deferred, self._deferred = self._deferred, []
            for append in deferred:
                append()
        if self.sink is not None:
            self.sink.before_append(self)
        return {"type": kind, "id": self.new_entry_id(), "parentId": self.leaf_id, "timestamp": self._clock()}

    def append_raw(self, entry: dict[str, Any]) -> str:
        """Append a complete entry dict (its id and parentId already set); it becomes the leaf."""
        if self.sink is not None:
            self.sink.before_append(self)
        record = make_record(entry, len(self._records))
        record.body = entry
        self._records.append(record)
        self._index_record(record)
        if self.sink is not None:
            self.sink.after_append(self, record)
        self._emit("append", record.id)
        return str(record.id)

    def append_message(self, message: dict[str, Any]) -> str:
        return self.append_raw({**self._base("message"), "message": message})

    def append_thinking_level_change(self, thinking_level: str) -> str:
        return self.append_raw({**self._base("thinking_level_change"), "thinkingLevel": thinking_level})

    def append_model_change(self, provider: str, model_id: str) -> str:
        return self.append_raw({**self._base("model_change"), "provider": provider, "modelId": model_id})

    def append_compaction(
        self,
        summary: str,
        first_kept_entry_id: str | None,
        tokens_before: int,
        details: Any = None,
        from_hook: bool | None = None,
        usage: Any = None,
    ) -> str:
        # the prompt state recorded in the transcript (Pi 1.6 system messages) lives on in the compaction
        system = (
            current_system_message(self.build_context().messages) if self._has_system_messages() else None
        )
        entry = {**self._base("compaction"), "summary": summary}
        entry["firstKeptEntryId"] = first_kept_entry_id if first_kept_entry_id is not None else entry["id"]
        entry["tokensBefore"] = tokens_before
        _set(entry, "details", details)
        _set(entry, "usage", usage)
        _set(entry, "fromHook", from_hook)
        if system is not None:
            entry["systemMessage"] = {**system, "timestamp": int(js_date_ms(entry["timestamp"]))}
        return self.append_raw(entry)

    def _has_system_messages(self) -> bool:
        return any(
            r.type == "compaction" or (r.type == "message" and r.role == "system") for r in self.path()
        )

    def append_custom_entry(self, custom_type: str, data: Any = None) -> str:
        entry: dict[str, Any] = {"type": "custom", "customType": custom_type}
        _set(entry, "data", data)
        base = self._base("custom")
        entry.update(id=base["id"], parentId=base["parentId"], timestamp=base["timestamp"])
        return self.append_raw(entry)

    def append_custom_message(
        self, custom_type: str, content: Any, display: bool, details: Any = None
    ) -> str:
        entry: dict[str, Any] = {"type": "custom_message", "customType": custom_type, "content": content}
        entry["display"] = display
        _set(entry, "details", details)
        base = self._base("custom_message")
        entry.update(id=base["id"], parentId=base["parentId"], timestamp=base["timestamp"])
        return self.append_raw(entry)

    def append_context_edit(self, target_id: str, content: Any) -> str:
        """Change what the model sees of ``target_id`` from now on, in Pi 1.6's ``context_edit`` format.

        ``content`` None leaves the entry out of the context; text or a list of content blocks
        replaces its content (text for an assistant message or a tool result is written as one
        text block). The target must be a user, assistant or tool-result message or a custom
        message on the current branch. The file keeps the original; the edit becomes the leaf.
        """
        target = self._editable_target(target_id)
        role = editable_role(self.body(target))
        assert role is not None
        entry = {**self._base("context_edit"), "targetId": target_id}
        entry["replacement"] = normalized_replacement(role, content)
        return self.append_raw(entry)

    def restore_context_edit(self, target_id: str) -> str:
        """Give the model ``target_id``'s own content again, undoing the edits in force on it.

        Written as an edit whose replacement is the entry's original content (the latest edit of
        a target wins, so Pi reads the restore the same way). Raises ``ContextEditRejected`` when
        no edit is in force on the entry.
        """
        target = self._editable_target(target_id)
        if not any(edit.target_id == target_id for edit in self.context_edits()):
            raise ContextEditRejected(f"Entry {target_id} has no context edit to restore")
        original = original_content(self.body(target))
        if not isinstance(original, str | list):
            original = []
        entry = {**self._base("context_edit"), "targetId": target_id, "replacement": {"content": original}}
        return self.append_raw(entry)

    def _editable_target(self, target_id: str) -> EntryRecord:
        record = self.record(target_id)
        if record is None:
            raise EntryNotFound(target_id)
        if not any(js_same(r.id, target_id) for r in self.path()):
            raise ContextEditRejected(f"Entry {target_id} is not on the active branch")
        if editable_role(self.body(record)) is None:
            raise ContextEditRejected(f"Entry {target_id} does not contribute editable model content")
        return record

    def set_name(self, name: str) -> str:
        """Append a ``session_info`` entry; line breaks become one space, ends are trimmed."""
        clean = js_trim(re.sub(r"[\r\n]+", " ", name))
        return self.append_raw({**self._base("session_info"), "name": clean})

    def set_label(self, target_id: str, label: str | None) -> str:
        """Set (or with an empty/None label, clear) a label; the label entry becomes the leaf."""
        if not self.has(target_id):
            raise EntryNotFound(target_id)
        entry = {**self._base("label"), "targetId": target_id}
        _set(entry, "label", label)
        entry_id = self.append_raw(entry)
        self._emit("label", target_id)
        return entry_id

    def branch(self, entry_id: str) -> None:
        """Move the leaf to an existing entry; nothing is written."""
        if not self.has(entry_id):
            raise EntryNotFound(entry_id)
        self.leaf_id = entry_id
        self._emit("leaf", entry_id)

    def reset_leaf(self) -> None:
        """Leaf = none: the next append starts a new root."""
        self.leaf_id = None
        self._emit("leaf", None)

    def branch_with_summary(
        self,
        target_id: str | None,
        summary: str,
        details: Any = None,
        from_hook: bool | None = None,
        usage: Any = None,
    ) -> str:
        """Append a ``branch_summary`` under ``target_id`` recording the abandoned leaf."""
        if target_id is not None and not self.has(target_id):
            raise EntryNotFound(target_id)
        from_id = self.leaf_id if self.leaf_id is not None else "root"
        self.leaf_id = target_id
        entry = {**self._base("branch_summary"), "fromId": from_id, "summary": summary}
        _set(entry, "details", details)
        _set(entry, "usage", usage)
        _set(entry, "fromHook", from_hook)
        return self.append_raw(entry)


def _set(target: dict[str, Any], key: str, value: Any) -> None:
    if value is not None:
        target[key] = value


def tree_from_values(
    values: Iterable[Any], header: dict[str, Any] | None = None, **kwargs: Any
) -> SessionTree:
    """An in-memory tree over parsed entries (bodies kept); header values are skipped."""
    records: list[EntryRecord] = []
    for value in values:
        record = make_record(value, len(records))
        record.body = value
        records.append(record)
    return SessionTree(header, records, **kwargs)
