"""What the chat says about an answer besides its content: the model and time heading it, and a note when
it is incomplete (the output limit, a stop, a broken connection). Plain data from the assistant message's own
fields, no Qt: conversations are built in worker threads.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class AnswerHead:
    """The line heading an answer: which model wrote it, and when."""

    model: str
    provider: str = ""
    timestamp: int | None = None  # milliseconds since the epoch


@dataclass(frozen=True, slots=True)
class IncompleteMark:
    """The note under an answer that ended before the model finished it."""

    note: str  # "Incomplete: stopped"
    hint: str = ""  # what the person can do about it


def head_of(message: dict[str, Any]) -> AnswerHead | None:
    """The heading of an assistant message, from its ``model``, ``provider`` and ``timestamp``."""
    model = message.get("model")
    provider = message.get("provider")
    model = model if isinstance(model, str) else ""
    provider = provider if isinstance(provider, str) else ""
    timestamp = message.get("timestamp")
    stamp = int(timestamp) if isinstance(timestamp, int | float) and not isinstance(timestamp, bool) else None
    if not model and not provider and stamp is None:
        return None
    return AnswerHead(model, provider, stamp)


LIMIT_NOTE = "Incomplete: the reply hit the output limit"
LIMIT_HINT = "ask the model to continue, or raise max tokens for this model"
STOPPED_NOTE = "Incomplete: stopped"
STOPPED_HINT = "send a message to continue from here, or right-click to Retry"
CUT_NOTE = "Incomplete: the connection ended"
SILENT_NOTE = "Incomplete: the provider stopped answering"
FAILED_NOTE = "Incomplete: an error ended the reply"
# Kinds of failure that mean the stream itself broke off (no stop ever came).
_CUT_KINDS = ("malformed_stream", "network")  # ``ErrorKind``'s values


def incomplete_mark(message: dict[str, Any]) -> IncompleteMark | None:
    """The note for an assistant message that ended early, by its ``stopReason``; None for one that ended
    as the model meant it to. A failure's card (below the answer) gives its reason and advice, so its
    note only says how the answer ended."""
    reason = message.get("stopReason")
    if reason == "length":
        return IncompleteMark(LIMIT_NOTE, LIMIT_HINT)
    if reason == "aborted":
        return IncompleteMark(STOPPED_NOTE, STOPPED_HINT)
    if reason == "error":
        from piwork.core.llm import classify

        kind = classify(str(message.get("errorMessage") or "")).kind.value
        if kind in _CUT_KINDS:
            return IncompleteMark(CUT_NOTE)
        if kind == "timeout":
            return IncompleteMark(SILENT_NOTE)
        return IncompleteMark(FAILED_NOTE)
    return None
