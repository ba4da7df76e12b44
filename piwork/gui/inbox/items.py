"""What one inbox item says: its kind, the one line about it, since when. Plain data, no Qt."""

from __future__ import annotations

import enum
from dataclasses import dataclass

from piwork.core.approvals import ApprovalRequest
from piwork.core.llm import classify
from piwork.gui.chat.retry_card import reason_in_words


class InboxKind(enum.Enum):
    APPROVAL = "approval"
    TRUST = "trust"
    FAILED = "failed"
    FINISHED = "finished"


# (glyph, label) of each kind, as the panel lists it
KIND_TEXT: dict[InboxKind, tuple[str, str]] = {
    InboxKind.APPROVAL: ("?", "Approve"),
    InboxKind.TRUST: ("⚑", "Trust"),
    InboxKind.FAILED: ("✕", "Failed"),
    InboxKind.FINISHED: ("✓", "Finished"),
}


@dataclass(frozen=True)
class InboxItem:
    """``key`` is unique within a feed (an approval's is its call id); ``since`` is wall-clock seconds."""

    kind: InboxKind
    key: str
    what: str
    since: float
    call_id: str = ""  # an approval's waiting call


def approval_line(request: ApprovalRequest) -> str:
    """The command a call would run (``$ cmd``), or the file it would change (``edit notes.txt``)."""
    if request.kind == "command":
        command = " ".join(request.command.split())  # one line, however the model laid it out
        return f"$ {command}"
    path = request.change.path if request.change is not None else request.suggestion
    return f"{request.tool} {path}".strip()


def failure_line(error_text: str) -> str:
    """A failed reply's kind in words with its HTTP status, never the provider's text (it can quote a key,
    a URL or a header)."""
    status = classify(error_text).status
    reason = reason_in_words(error_text)
    return f"{reason} ({status})" if status is not None else reason


def age_text(seconds: float) -> str:
    """ "now", "4 min", "2 h", "3 d": how long an item has waited."""
    if seconds < 60:
        return "now"
    if seconds < 3600:
        return f"{int(seconds // 60)} min"
    if seconds < 86400:
        return f"{int(seconds // 3600)} h"
    return f"{int(seconds // 86400)} d"
