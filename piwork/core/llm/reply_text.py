"""Growing a reply's text blocks as deltas stream in: linear time, bounded size.

``block[key] += delta`` on a string held by a dict copies the whole text on every delta, so a reply of
tens of megabytes costs quadratic time. ``ReplyText.add`` takes the text out of the block first, so
that the only reference left is the local one and CPython grows the string in place, then puts it
back (the key keeps its place, readers of the live message see the text so far after every delta).

A reply whose text and thinking grow past ``MAX_REPLY_CHARS`` is cut there: the stream ends with an
error that says so and keeps what arrived (as a command's output is cut beyond its limit), instead of
holding gigabytes a server might send. Such a reply is not retried.
"""

from __future__ import annotations

from typing import Any

from piwork.core.llm.reply_limits import REPLY_SIZE_LIMIT
from piwork.core.llm.transport import StreamFailure
from piwork.core.llm.types import ErrorInfo, ErrorKind

MAX_REPLY_CHARS = 64 * 1024 * 1024  # far beyond any model's output; bounds a hostile stream's memory


class ReplyText:
    """The size of one reply's streamed text so far, and the in-place append of its deltas."""

    def __init__(self, limit: int | None = None) -> None:
        self.limit = MAX_REPLY_CHARS if limit is None else limit
        self.size = 0

    def add(self, block: dict[str, Any], key: str, delta: str) -> str:
        """Append ``delta`` to ``block[key]``; returns the part of it kept (all of it below the limit).
        Raises ``StreamFailure`` once the limit is reached, after keeping what fits."""
        room = self.limit - self.size
        kept = delta if len(delta) <= room else delta[: max(room, 0)]
        self.size += len(kept)
        if kept:
            text = block[key]
            block[key] = ""  # the block lets go of the text: the append below can grow it in place
            text += kept
            block[key] = text
        if len(kept) < len(delta):
            raise StreamFailure(
                f"The reply was cut at {self.limit // (1024 * 1024)} MB of text ({REPLY_SIZE_LIMIT}); "
                "what arrived before it is kept",
                ErrorInfo(ErrorKind.MALFORMED_STREAM, retryable=False),
            )
        return kept
