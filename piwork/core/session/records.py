"""The light per-entry index the tree is built from: ids, type, time and a short preview.

A record keeps what navigation, the tree view and context selection need, so a large file is
indexed once and message bodies are parsed again only for the entries a caller asks for.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Protocol

from piwork.core.jscompat import UNDEFINED, js_trim
from piwork.core.session.timestamps import js_date_ms

PREVIEW_CHARS = 120

# Small fields copied into ``EntryRecord.meta`` per entry type (everything else stays in the body).
_META_FIELDS: dict[str, tuple[str, ...]] = {
    "label": ("targetId", "label"),
    "session_info": ("name",),
    "compaction": ("firstKeptEntryId", "tokensBefore"),
    "model_change": ("provider", "modelId"),
    "thinking_level_change": ("thinkingLevel",),
    "branch_summary": ("fromId",),
    "custom_message": ("customType", "display"),
    "custom": ("customType",),
    "context_edit": ("targetId",),
}


NO_META: Mapping[str, Any] = MappingProxyType({})


class BodySource(Protocol):
    """Reads an entry's body back from where it was indexed (``None`` if it is unreadable)."""

    def load(self, record: EntryRecord) -> Any: ...


class EntryRecord:
    """One entry of a session file, indexed without keeping its body in memory.

    Message lines of a large file are indexed from their bytes only (see ``line_index.py``): their
    ``preview`` is computed from the body the first time it is asked for, and ``meta`` holds only
    ``stopReason``/``hasText`` for assistant messages until then. The line number is kept as its
    distance from ``seq`` (a small number, shared by Python, for most entries of a large file).
    """

    __slots__ = (
        "body",
        "cached_preview",
        "id",
        "length",
        "line_gap",
        "meta",
        "offset",
        "parent_id",
        "role",
        "seq",
        "source",
        "timestamp",
        "type",
    )

    def __init__(
        self,
        seq: int,
        id: Any,
        parent_id: Any,
        type: Any,
        timestamp: Any,
        line: int = 0,
        offset: int = -1,
        length: int = 0,
        role: str | None = None,
        cached_preview: str | None = None,
        meta: Mapping[str, Any] = NO_META,
        body: Any = None,
        source: BodySource | None = None,
    ) -> None:
        self.seq = seq
        self.id = id
        self.parent_id = parent_id
        self.type = type
        self.timestamp = timestamp
        self.line_gap = line - seq
        self.offset = offset
        self.length = length
        self.role = role
        self.cached_preview = cached_preview
        self.meta = meta
        self.body = body
        self.source = source

    def __repr__(self) -> str:
        return f"EntryRecord(seq={self.seq}, id={self.id!r}, type={self.type!r}, line={self.line})"

    @property
    def line(self) -> int:
        """1-based line of the entry in its file (0 when it is not from a file)."""
        return self.seq + self.line_gap

    @property
    def preview(self) -> str:
        """A short one-line text for lists and search (reads the body once if needed)."""
        if self.cached_preview is None:
            value = self.body if self.body is not None or self.source is None else self.source.load(self)
            if isinstance(value, dict):
                fill_details(self, value)
            if self.cached_preview is None:
                self.cached_preview = ""
        return self.cached_preview

    @property
    def has_details(self) -> bool:
        return self.cached_preview is not None

    @property
    def time_ms(self) -> float:
        return js_date_ms(self.timestamp)

    @property
    def key(self) -> str | None:
        return self.id if isinstance(self.id, str) else None


def _short(text: str) -> str:
    text = " ".join(js_trim(text[: PREVIEW_CHARS * 4]).split())
    return text if len(text) <= PREVIEW_CHARS else text[: PREVIEW_CHARS - 1] + "…"


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if not isinstance(block, dict):
                continue
            kind = block.get("type")
            if kind == "text" and isinstance(block.get("text"), str):
                parts.append(block["text"])
            elif kind == "toolCall" and isinstance(block.get("name"), str):
                parts.append(f"{block['name']}(…)")
            elif kind == "image":
                parts.append("[image]")
            if sum(len(p) for p in parts) > PREVIEW_CHARS * 2:
                break
        return " ".join(parts)
    return ""


def _message_meta(message: dict[str, Any], meta: dict[str, Any]) -> str:
    role = message.get("role")
    if role == "assistant":
        for key in ("provider", "model", "stopReason"):
            if key in message:
                meta[key] = message[key]
        error = message.get("errorMessage")
        if message.get("stopReason") in ("error", "aborted") and isinstance(error, str):
            meta["errorMessage"] = error[:PREVIEW_CHARS]
        content = message.get("content")
        meta["hasText"] = isinstance(content, list) and any(
            isinstance(b, dict)
            and b.get("type") == "text"
            and isinstance(b.get("text"), str)
            and js_trim(b["text"])
            for b in content
        )
    if role == "bashExecution":
        return f"!{message.get('command', '')}"
    if role in ("branchSummary", "compactionSummary"):
        summary = message.get("summary")
        return summary if isinstance(summary, str) else ""
    if role == "system":
        return _system_preview(message)
    return _content_text(message.get("content"))


def _tool_names(tools: Any) -> list[str]:
    listed = tools if isinstance(tools, list) else []
    return [t["name"] for t in listed if isinstance(t, dict) and isinstance(t.get("name"), str)]


def _system_preview(message: dict[str, Any]) -> str:
    """A system message's text, else what it changes: the tools it adds (+) and removes (−), the
    prompt sections it sets."""
    text = _content_text(message.get("content"))
    if js_trim(text):
        return text
    added = _tool_names(message.get("toolsAdded"))
    removed = [name for name in _tool_names(message.get("toolsRemoved")) if name not in added]
    parts = []
    if added or removed:
        parts.append("tools " + " ".join([f"+{n}" for n in added] + [f"−{n}" for n in removed]))
    sections = message.get("sections")
    if isinstance(sections, dict) and sections:
        parts.append("sections " + ", ".join(str(name) for name in sections))
    return "; ".join(parts)


def make_record(value: Any, seq: int, line: int = 0, offset: int = -1, length: int = 0) -> EntryRecord:
    """Index one parsed entry (any JSON value); the caller decides whether to keep ``body``."""
    if not isinstance(value, dict):
        return EntryRecord(seq, UNDEFINED, UNDEFINED, UNDEFINED, UNDEFINED, line, offset, length, body=value)
    kind = value.get("type")
    record = EntryRecord(
        seq,
        value.get("id", UNDEFINED),
        value.get("parentId", UNDEFINED),
        kind,
        value.get("timestamp", UNDEFINED),
        line,
        offset,
        length,
    )
    fill_details(record, value)
    return record


def fill_details(record: EntryRecord, value: dict[str, Any]) -> None:
    """Compute ``meta`` and ``preview`` of a record from its parsed body."""
    kind = record.type
    meta: dict[str, Any] = {}
    for key in _META_FIELDS.get(kind, ()) if isinstance(kind, str) else ():
        if key in value:
            meta[key] = value[key]
    preview = ""
    if kind == "message":
        message = value.get("message")
        if isinstance(message, dict):
            role = message.get("role")
            record.role = role if isinstance(role, str) else None
            preview = _message_meta(message, meta)
    elif kind == "compaction":
        meta["hasRetainedTail"] = isinstance(value.get("retainedTail"), list)
        summary_text = value.get("summary")
        preview = summary_text if isinstance(summary_text, str) else ""
    elif kind == "branch_summary":
        summary = value.get("summary")
        meta["hasSummary"] = (isinstance(summary, str) and summary != "") or (
            not isinstance(summary, str) and bool(summary)
        )
        preview = summary if isinstance(summary, str) else ""
    elif kind == "custom_message":
        preview = _content_text(value.get("content"))
    elif kind == "label":
        preview = str(value.get("label") or "")
    elif kind == "session_info":
        preview = str(value.get("name") or "")
    elif kind == "model_change":
        preview = f"{value.get('provider', '')}/{value.get('modelId', '')}"
    elif kind == "thinking_level_change":
        preview = str(value.get("thinkingLevel", ""))
    elif kind == "custom":
        preview = str(value.get("customType", ""))
    elif kind == "context_edit":
        replacement = value.get("replacement")
        what = "left out" if replacement is None else "replaced"
        preview = f"{value.get('targetId', '')} {what}"
    elif kind == "usage":
        preview = f"{value.get('kind', '')} {value.get('provider', '')}/{value.get('model', '')}"
    record.meta = meta
    record.cached_preview = _short(preview)
