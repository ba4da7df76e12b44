"""Server-Sent Events decoding: a pure incremental decoder plus a thin async layer over byte chunks.

The decoder follows the WHATWG event-stream rules that matter for model APIs: lines end with ``\\r\\n``,
``\\r`` or ``\\n`` (a ``\\r\\n`` split across two chunks counts once); lines starting with ``:`` are
comments; ``field: value`` drops one optional space after the colon; several ``data`` lines join with
``\\n``; a blank line dispatches the event; ``finish()`` dispatches a trailing event that had no blank line.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import AsyncIterable, AsyncIterator
from dataclasses import dataclass

_LINE_END = re.compile(r"\r\n|\r|\n")


@dataclass(frozen=True)
class SseEvent:
    event: str  # "message" when the stream named none
    data: str
    id: str | None = None
    retry: int | None = None


class SseDecoder:
    """Feed text (or bytes, decoded as UTF-8 incrementally); get complete events back."""

    def __init__(self) -> None:
        self._utf8 = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._pending: list[
            str
        ] = []  # the start of a line not ended yet, in pieces (a long line stays linear)
        self._skip_lf = False  # the previous chunk ended with "\r": a leading "\n" belongs to it
        self._event = ""
        self._data: list[str] = []
        self._id: str | None = None
        self._retry: int | None = None
        self._has_fields = False

    def feed(self, chunk: bytes | str) -> list[SseEvent]:
        text = self._utf8.decode(chunk) if isinstance(chunk, bytes) else chunk
        if self._skip_lf and text.startswith("\n"):
            text = text[1:]
        self._skip_lf = False
        if not text:
            return []
        events: list[SseEvent] = []
        start = 0
        last: re.Match[str] | None = None
        for last in _LINE_END.finditer(text):  # only the new text is searched for line ends
            line = text[start : last.start()]
            if self._pending:
                line = "".join([*self._pending, line])
                self._pending = []
            self._line(line, events)
            start = last.end()
        # A "\r" that ends the chunk may be the first half of a "\r\n" split across chunks.
        self._skip_lf = last is not None and last.group() == "\r" and start == len(text)
        if start < len(text):
            self._pending.append(text[start:])
        return events

    def finish(self) -> list[SseEvent]:
        """End of stream: flush a last unterminated line and dispatch a pending event."""
        events: list[SseEvent] = []
        tail = "".join(self._pending) + self._utf8.decode(b"", final=True)
        self._pending = []
        if tail:
            self._line(tail, events)
        self._dispatch(events)
        return events

    def _line(self, line: str, events: list[SseEvent]) -> None:
        if not line:
            self._dispatch(events)
            return
        if line.startswith(":"):
            return
        name, sep, value = line.partition(":")
        if sep and value.startswith(" "):
            value = value[1:]
        if name == "data":
            self._data.append(value)
            self._has_fields = True
        elif name == "event":
            self._event = value
            self._has_fields = True
        elif name == "id" and "\0" not in value:
            self._id = value
        elif name == "retry" and value.isdigit():
            self._retry = int(value)

    def _dispatch(self, events: list[SseEvent]) -> None:
        if self._has_fields:
            events.append(SseEvent(self._event or "message", "\n".join(self._data), self._id, self._retry))
        self._event = ""
        self._data = []
        self._has_fields = False
        self._retry = None


async def aiter_sse(chunks: AsyncIterable[bytes]) -> AsyncIterator[SseEvent]:
    """Decode an async stream of byte chunks into events (a trailing event is dispatched at EOF)."""
    decoder = SseDecoder()
    async for chunk in chunks:
        for event in decoder.feed(chunk):
            yield event
    for event in decoder.finish():
        yield event
