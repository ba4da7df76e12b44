"""The values the session tree hands out: events, nodes, summaries, contexts, and its errors."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

from piwork.core.errors import PiworkError
from piwork.core.jscompat import UNDEFINED
from piwork.core.session.records import EntryRecord

if TYPE_CHECKING:
    from piwork.core.session.tree import SessionTree

EventKind = Literal["append", "leaf", "label", "reload"]


class EntrySink(Protocol):
    """Where appended entries go (the store): checked before and told after every append."""

    def before_append(self, tree: SessionTree) -> None: ...

    def after_append(self, tree: SessionTree, record: EntryRecord) -> None: ...


class EntryNotFound(PiworkError):
    def __init__(self, entry_id: Any) -> None:
        super().__init__(f"Entry {entry_id} not found")
        self.entry_id = entry_id


@dataclass(frozen=True)
class TreeEvent:
    """What changed: an entry was appended, the leaf moved, a label changed, or all was reloaded."""

    kind: EventKind
    entry_id: str | None


@dataclass
class TreeNode:
    """A node of ``SessionTree.tree()``: children sorted by time, current label attached."""

    record: EntryRecord
    children: list[TreeNode] = field(default_factory=list)
    label: str | None = None
    label_timestamp: Any = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.record.id}
        if self.label is not None:
            out["label"] = self.label
        if self.label_timestamp is not None:
            out["labelTimestamp"] = self.label_timestamp
        out["children"] = [child.to_json() for child in self.children]
        return out


@dataclass(frozen=True)
class NodeSummary:
    """Cheap per-entry facts for a tree view row (no message body is parsed)."""

    id: str
    parent_id: str | None
    type: str
    role: str | None
    preview: str
    label: str | None
    label_timestamp: str | None
    timestamp: Any
    is_leaf: bool


@dataclass
class SessionContext:
    """The messages sent to the model for a leaf, with the model and thinking level in effect."""

    messages: list[Any]
    thinking_level: Any
    model: dict[str, Any] | None
    entry_ids: list[Any]
    # built with ``keep_originals``: the messages as written, and by ``id()`` of each message an edit
    # changes (every message of its entry) the ``context_edit`` entry in force on it
    edited: dict[int, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"messages": self.messages}
        if self.thinking_level is not UNDEFINED:
            out["thinkingLevel"] = self.thinking_level
        out["model"] = self.model
        return out
