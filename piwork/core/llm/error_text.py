"""Provider error texts made readable: the message out of a JSON error body instead of raw JSON.

Failed requests carry ``"<status> <body>"`` (providers-and-agent spec §5.3) so that classification works on
strings; people should read "401 · invalid x-api-key (authentication_error)" instead.
"""

from __future__ import annotations

import json
import re
from http import HTTPStatus
from typing import Any

_STATUS_PREFIX = re.compile(r"^(\d{3})\s+(.*)$", re.DOTALL)
_INNER_STATUS = re.compile(r"\s(\d{3})\s+[\[{]", re.DOTALL)  # a status and JSON body after other words
MAX_EXCERPT = 300


def status_phrase(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return ""


def _message_of(data: Any) -> tuple[str, str]:
    """(message, type/code) of an error object in the shapes Anthropic, OpenAI and local servers use."""
    if isinstance(data, list) and data:
        return _message_of(data[0])
    if not isinstance(data, dict):
        return "", ""
    error = data.get("error", data)
    if isinstance(error, str):
        return error, str(data.get("type") or "")
    if isinstance(error, dict):
        message = error.get("message") or error.get("detail") or error.get("msg") or ""
        kind = error.get("type") or error.get("code") or ""
        if isinstance(message, dict | list):
            message = json.dumps(message, ensure_ascii=False)
        return str(message), str(kind) if kind and str(kind) not in str(message) else ""
    return "", ""


def _json_message(text: str) -> str | None:
    if not text.startswith(("{", "[")):
        return None
    try:
        data = json.loads(text)
    except ValueError:
        return None
    message, kind = _message_of(data)
    if not message:
        return None
    return f"{message} ({kind})" if kind else message


def body_message(body: str) -> str:
    """The readable part of an error body: its ``message`` when it is a JSON error, else the text itself
    (whitespace folded, cut at ``MAX_EXCERPT`` characters)."""
    text = body.strip()
    message = _json_message(text)
    if message:
        return message
    folded = " ".join(text.split())
    return folded if len(folded) <= MAX_EXCERPT else folded[: MAX_EXCERPT - 1] + "…"


def readable_error(text: str) -> str:
    """``"429 {json}"`` → ``"429 Too Many Requests · <message>"``; other texts have JSON bodies inside them
    made readable the same way, and are otherwise returned unchanged."""
    match = _STATUS_PREFIX.match(text.strip())
    if match:
        status, body = int(match.group(1)), match.group(2)
        phrase = status_phrase(status)
        head = f"{status} {phrase}".strip()
        readable = body_message(body)
        return f"{head} · {readable}" if readable else head
    inner_status = _INNER_STATUS.search(text)
    if inner_status is not None:  # "Compaction failed: 529 {json}"
        prefix = text[: inner_status.start(1)].rstrip()
        rest = readable_error(text[inner_status.start(1) :])
        return f"{prefix} {rest}" if prefix else rest
    start = text.find("{")
    inner = _json_message(text[start:].strip()) if start >= 0 else None
    if inner:
        prefix = text[:start].rstrip(" :")
        return f"{prefix}: {inner}" if prefix else inner
    return text
