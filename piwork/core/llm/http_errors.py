"""The error text of a non-2xx provider answer, worded as Pi words it for the same answer.

Both tools keep this text in the failed assistant message (``errorMessage``) and show it to the user,
and overflow/retry classification reads it, so the same answer must give the same words whichever
tool continues the session. The rules follow what the provider SDKs Pi uses do with a body:

- Anthropic: a JSON body is re-serialised whole (compact) after the status; its top-level ``message``
  is used instead when it has one. A body that is not JSON is kept as it is.
- OpenAI-compatible: the body's ``error`` object is what counts (a JSON body without one counts whole,
  as a gateway's ``{"detail": "bad gateway"}``); its ``message`` follows the status
  (``429 Rate limit reached``). When the message does not already carry the rest of that object, the
  object itself is shown instead (``429: {"message": …, "code": …}``), so codes such as
  ``insufficient_quota`` stay visible.
- No usable body: ``<status> status code (no body)``.

Very long bodies are cut at :data:`MAX_BODY_CHARS` with a note (a deliberate limit: a provider's HTML
error page should not fill a session file).
"""

from __future__ import annotations

import json
from typing import Any

from piwork.core.jscompat import js_json_stringify, js_truthy
from piwork.core.llm.types import ANTHROPIC_MESSAGES

MAX_BODY_CHARS = 4000


def _parse(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def _truncate(text: str, more: bool = False) -> str:
    if len(text) <= MAX_BODY_CHARS and not more:
        return text
    dropped = len(text) - MAX_BODY_CHARS
    return f"{text[:MAX_BODY_CHARS]}... [truncated {dropped}{'+' if more else ''} chars]"


def _sdk_message(status: int, error: Any, fallback: str | None, more: bool = False) -> str:
    """``<status> <message>``: the error's message, else the error as JSON, else the raw body."""
    detail: str | None
    if isinstance(error, dict) and js_truthy(error.get("message")):
        message = error["message"]
        detail = message if isinstance(message, str) else js_json_stringify(message)
    elif js_truthy(error):
        detail = js_json_stringify(error)
    else:
        detail = fallback
    if detail:
        return f"{status} {_truncate(detail, more)}"
    return f"{status} status code (no body)"


def _openai_error(parsed: Any) -> Any:
    """The error object the OpenAI SDK reports for a parsed body: its ``error`` field, or the whole JSON
    object (or array) when it has no such field or holds null there (a gateway's ``{"detail": …}``)."""
    if isinstance(parsed, dict):
        inner = parsed.get("error")
        return parsed if inner is None else inner
    return parsed if isinstance(parsed, list) else None


def http_error_text(api: str, status: int, body: str, more: bool = False) -> str:
    """The error text for ``status`` with response ``body`` (``more``: the body was longer than read)."""
    parsed = _parse(body)
    raw = None if js_truthy(parsed) else body
    if api == ANTHROPIC_MESSAGES:
        return _sdk_message(status, parsed, raw, more)
    error = _openai_error(parsed)
    message = _sdk_message(status, error, raw, more)
    if isinstance(error, dict) and error:
        shown = _truncate(js_json_stringify(error).strip())
        if shown and shown not in message:
            return f"{status}: {shown}"
    return message
