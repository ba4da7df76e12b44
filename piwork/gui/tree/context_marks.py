"""What the window says about context edits, billed-traffic entries and system-message entries (pure Python).

A ``context_edit`` entry changes what the model sees of an earlier entry; the file keeps the original. The tree
marks each entry an edit in force leaves out or replaces, with what the model now sees in its tooltip; the edit
itself reads as what it did. A ``usage`` entry is billed traffic outside a reply (never in the context); a
``system`` message entry is prompt state (the system prompt as the session recorded it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from piwork.core.session import SessionTree

LEFT_OUT = "left out of the model's context"
REPLACED = "replaced for the model"
PREVIEW_CHARS = 400


@dataclass(frozen=True)
class EditMark:
    """How an edit in force changes one entry for the model: left out, or shown as ``now_sees``."""

    target_id: str
    left_out: bool
    now_sees: str

    @property
    def prefix(self) -> str:
        return "⊘ left out · " if self.left_out else "✎ replaced · "

    def tooltip(self) -> str:
        if self.left_out:
            return "Left out of the model's context: the model no longer sees this entry (the file keeps it)."
        shown = self.now_sees if len(self.now_sees) <= PREVIEW_CHARS else self.now_sees[:PREVIEW_CHARS] + "…"
        return f"Replaced for the model (the file keeps the original). The model now sees:\n{shown}"


def content_text(content: Any) -> str:
    """The readable text of message content: a string, or the text of its blocks (images named)."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts = []
    for block in content:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text":
            parts.append(str(block.get("text", "")))
        elif block.get("type") == "image":
            parts.append(f"[image {block.get('mimeType', '')}]")
    return "\n".join(parts)


def entry_content(entry: Any) -> Any:
    """The content an entry holds in the file: a message's, or a custom message's."""
    if not isinstance(entry, dict):
        return None
    if entry.get("type") == "custom_message":
        return entry.get("content")
    message = entry.get("message")
    return message.get("content") if isinstance(message, dict) else None


def edit_marks(tree: SessionTree) -> dict[str, EditMark]:
    """The entries the edits in force on the current branch change. Reads entry bodies: run in a worker."""
    marks = {}
    for edit in tree.context_edits():
        replacement = edit.replacement
        now_sees = "" if replacement is None else content_text(replacement.get("content"))
        marks[edit.target_id] = EditMark(edit.target_id, replacement is None, now_sees)
    return marks


def usage_detail(body: dict[str, Any]) -> str:
    """The detail pane's text for a ``usage`` entry: what was billed, and that it is not in the context."""
    raw = body.get("usage")
    usage: dict[str, Any] = raw if isinstance(raw, dict) else {}
    figures = []
    for key, words in (
        ("input", "input"),
        ("output", "output"),
        ("cacheRead", "cache read"),
        ("cacheWrite", "cache write"),
    ):
        value = usage.get(key)
        if isinstance(value, int | float) and value:
            figures.append(f"{value:,} {words}")
    cost = usage.get("cost")
    total = cost.get("total") if isinstance(cost, dict) else None
    lines = [
        f"Billed traffic outside a reply ({body.get('kind') or 'unspecified'}) on "
        f"{body.get('provider', '?')}/{body.get('model', '?')}",
        "Tokens: " + (", ".join(figures) if figures else "none recorded"),
    ]
    if isinstance(total, int | float):
        lines.append(f"Cost: ${total:.4f}")
    if body.get("note"):
        lines.append(f"Note: {body['note']}")
    lines.append("Counted in the billed totals and cost; never part of the model's context.")
    return "\n".join(lines)


def context_edit_detail(body: dict[str, Any], target_title: str) -> str:
    replacement = body.get("replacement")
    if replacement is None:
        what = "Leaves the entry out of the model's context from here on."
    else:
        text = content_text(replacement.get("content")) if isinstance(replacement, dict) else ""
        what = f"From here on the model sees, instead of the entry's own content:\n\n{text}"
    return f"Context edit of {body.get('targetId')} ({target_title})\n{what}\n\nThe file keeps the original entry."
