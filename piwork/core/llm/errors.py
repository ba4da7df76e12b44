"""Classifying failed requests: context overflow, non-retryable limits, retryable transient failures.

The patterns are data so they can be read and extended in one place. Classification works on the
``errorMessage`` string (it carries the HTTP status and the provider's text) so it also applies to
failed messages loaded from a session file.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from piwork.core.llm.reply_limits import LIMIT_REACHED
from piwork.core.llm.types import ErrorInfo, ErrorKind, Message

OVERFLOW_PATTERNS: tuple[str, ...] = (
    r"prompt is too long",
    r"request_too_large",
    r"input is too long for requested model",
    r"exceeds the context window",
    r"exceeds (?:the )?(?:model'?s )?maximum context length(?: of [\d,]+ tokens?|\s*\([\d,]+\))",
    r"input token count.*exceeds the maximum",
    r"maximum prompt length is \d+",
    r"reduce the length of the messages",
    r"maximum context length is \d+ tokens",
    r"exceeds (?:the )?maximum allowed input length of [\d,]+ tokens?",
    r"input \(\d+ tokens\) is longer than the model'?s context length \(\d+ tokens\)",
    r"exceeds the limit of \d+",
    r"exceeds the available context size",
    r"greater than the context length",
    r"context window exceeds limit",
    r"exceeded model token limit",
    r"too large for model with \d+ maximum context length",
    r"prompt has [\d,]+ tokens?, but the configured context size is [\d,]+ tokens?",
    r"model_context_window_exceeded",
    r"prompt too long; exceeded (?:max )?context length",
    r"range of input length should be",
    r"context[_ ]length[_ ]exceeded",
    r"too many tokens",
    r"token limit exceeded",
    r"^4(?:00|13)\s*(?:status code)?\s*\(no body\)",
)
NOT_OVERFLOW_PATTERNS: tuple[str, ...] = (r"rate limit", r"too many requests")
NOT_RETRYABLE_PATTERNS: tuple[str, ...] = (
    "insufficient_quota",
    "quota exceeded",
    "billing",
    "out of budget",
    "Monthly usage limit reached",
    "available balance",
    "GoUsageLimitError",
    "FreeUsageLimitError",
)
# Bare status numbers match as whole words so "max_tokens: 5000" is not taken for a server error.
RETRYABLE_PATTERNS: tuple[str, ...] = (
    "overloaded",
    "rate.?limit",
    "too many requests",
    r"\b429\b",
    r"\b500\b",
    r"\b502\b",
    r"\b503\b",
    r"\b504\b",
    r"\b524\b",
    "service.?unavailable",
    "server.?error",
    "internal.?error",
    "provider.?returned.?error",
    "network.?error",
    "connection.?(?:error|refused|lost)",
    "other side closed",
    "fetch failed",
    "getaddrinfo",
    "ENOTFOUND",
    "EAI_AGAIN",
    "upstream.?connect",
    "reset before headers",
    "socket hang up",
    "timed? out",
    "timeout",
    "terminated",
    "ended without",
    "stream ended before message_stop",
    "retry delay",
    "you can retry your request",
    "try your request again",
    "please retry your request",
    "ResourceExhausted",
)


def _any(patterns: tuple[str, ...], flags: int = re.IGNORECASE) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{p})" for p in patterns), flags)


_OVERFLOW = _any(OVERFLOW_PATTERNS, re.IGNORECASE | re.DOTALL)
_NOT_OVERFLOW = _any(NOT_OVERFLOW_PATTERNS)
_NOT_RETRYABLE = _any(NOT_RETRYABLE_PATTERNS)
_RETRYABLE = _any(RETRYABLE_PATTERNS)
_STATUS_AT_START = re.compile(r"^(\d{3})\b")


def is_overflow_text(text: str) -> bool:
    return bool(_OVERFLOW.search(text)) and not _NOT_OVERFLOW.search(text)


def is_context_overflow(message: Message, context_window: int = 0) -> bool:
    """True when a message failed (or silently truncated) because the prompt did not fit the model."""
    stop = message.get("stopReason")
    text = message.get("errorMessage") or ""
    if stop == "error" and text and is_overflow_text(text):
        return True
    usage: Mapping[str, Any] = message.get("usage") or {}
    prompt = (usage.get("input") or 0) + (usage.get("cacheRead") or 0)
    if context_window > 0 and stop == "stop" and prompt > context_window:
        return True
    return (
        context_window > 0
        and stop == "length"
        and (usage.get("output") or 0) == 0
        and prompt >= context_window * 0.99
    )


def is_retryable_text(text: str) -> bool:
    """Transient failure worth an automatic retry (never true for overflow or quota/billing limits)."""
    if not text or is_overflow_text(text) or _NOT_RETRYABLE.search(text) or LIMIT_REACHED.search(text):
        return False  # a reply that ran into piwork's own time limits has had its time
    return bool(_RETRYABLE.search(text))


def classify(text: str, status: int | None = None, retry_after_ms: int | None = None) -> ErrorInfo:
    """An ``ErrorInfo`` for a failure described by ``text`` (``"<status> <body>"`` or transport text)."""
    if status is None:
        match = _STATUS_AT_START.match(text)
        status = int(match.group(1)) if match else None
    lowered = text.lower()
    kind = ErrorKind.UNKNOWN
    if is_overflow_text(text):
        kind = ErrorKind.CONTEXT_OVERFLOW
    elif _NOT_RETRYABLE.search(text):
        kind = ErrorKind.QUOTA
    elif status in (401, 403) or "authentication_error" in lowered or "invalid api key" in lowered:
        kind = ErrorKind.AUTH
    elif status == 429 or re.search("rate.?limit|too many requests", lowered):
        kind = ErrorKind.RATE_LIMIT
    elif status == 529 or "overloaded" in lowered:
        kind = ErrorKind.OVERLOADED
    elif status is not None and status >= 500:
        kind = ErrorKind.SERVER
    elif status is not None and 400 <= status < 500:
        kind = ErrorKind.INVALID_REQUEST
    elif LIMIT_REACHED.search(text) or re.search("timed? out|timeout", lowered):
        kind = ErrorKind.TIMEOUT
    elif re.search("stream ended|malformed|ended without|invalid json in stream", lowered):
        kind = ErrorKind.MALFORMED_STREAM
    elif re.search("connect|network|socket|getaddrinfo|closed|reset", lowered):
        kind = ErrorKind.NETWORK
    return ErrorInfo(
        kind=kind, status=status, retry_after_ms=retry_after_ms, retryable=is_retryable_text(text)
    )
