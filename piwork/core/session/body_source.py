"""Reading entry bodies back from a session file by byte offset, many at a time.

A context build needs most lines of a long path. Reading them one ``pread`` and one parse at a
time costs more than the parse itself, so ``load_many`` reads file windows of a few MiB, turns
the wanted lines of each window into one JSON array (a run of adjacent lines is one slice whose
newlines become commas) and parses it in one call. Any window whose array does not parse into
exactly the expected entries is read again line by line, so a bad line is reported alone.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from piwork.core.session.format import json_loads_bytes
from piwork.core.session.jsvalues import UNDEFINED
from piwork.core.session.records import EntryRecord

WINDOW = 2 * 1024 * 1024  # bytes read (and parsed) at once; bounds the memory a load adds
NEWLINE = 10


class FileBodySource:
    """Reads entry bodies back from a session file by byte offset (one descriptor, opened lazily)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.on_error: Callable[[EntryRecord], None] | None = None
        self._fd: int | None = None

    def _descriptor(self) -> int:
        if self._fd is None:
            self._fd = os.open(self.path, os.O_RDONLY)
        return self._fd

    def load(self, record: EntryRecord) -> Any:
        """One entry's body, or ``None`` (reported through ``on_error``) if the line is unreadable."""
        try:
            return json_loads_bytes(os.pread(self._descriptor(), record.length, record.offset))
        except ValueError:
            if self.on_error is not None:
                self.on_error(record)
            return None

    def load_many(self, records: Sequence[EntryRecord]) -> list[Any]:
        """Bodies of several entries in their given order; ``None`` for any that cannot be read."""
        count = len(records)
        order = list(range(count))
        if any(records[i].offset > records[i + 1].offset for i in range(count - 1)):
            order.sort(key=lambda i: records[i].offset)
        out: list[Any] = [None] * count
        fd = self._descriptor()
        start_at = 0
        while start_at < count:
            end_at = _window_end(records, order, start_at)
            window = [records[i] for i in order[start_at:end_at]]
            for i, body in zip(order[start_at:end_at], self._load_window(fd, window), strict=True):
                out[i] = body
            start_at = end_at
        return out

    def _load_window(self, fd: int, window: list[EntryRecord]) -> list[Any]:
        start = window[0].offset
        size = window[-1].offset + window[-1].length - start
        data = os.pread(fd, size, start)
        if len(data) == size:
            values = _parse_window(data, start, window)
            if values is not None:
                return values
        return [self.load(record) for record in window]

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def _window_end(records: Sequence[EntryRecord], order: list[int], start_at: int) -> int:
    """Index (in ``order``) after the last record that fits in a window starting at ``start_at``."""
    first = records[order[start_at]]
    limit = first.offset + WINDOW
    end = first.offset + first.length
    at = start_at + 1
    while at < len(order):
        record = records[order[at]]
        if record.offset < end or record.offset + record.length > limit:
            break
        end = record.offset + record.length
        at += 1
    return at


def _parse_window(data: bytes, start: int, window: list[EntryRecord]) -> list[Any] | None:
    """The window's entries parsed as one JSON array, or ``None`` when that does not work out."""
    view = memoryview(data)
    pieces: list[memoryview] = []
    run_start = window[0].offset - start
    run_end = run_start + window[0].length
    for record in window[1:]:
        at = record.offset - start
        if at == run_end + 1 and data[run_end] == NEWLINE:
            run_end = at + record.length  # the next line: keep the run going
            continue
        pieces.append(view[run_start:run_end])
        run_start, run_end = at, at + record.length
    pieces.append(view[run_start:run_end])
    # Lines hold no raw newline, so inside a run every newline is a line break: make it a comma.
    text = b"[" + b",".join(pieces).replace(b"\n", b",") + b"]"
    try:
        values = json_loads_bytes(text)
    except (ValueError, RecursionError):
        return None
    if not isinstance(values, list) or len(values) != len(window):
        return None
    for value, record in zip(values, window, strict=True):
        if type(value) is not dict or value.get("id", UNDEFINED) != record.id:
            return None  # lines that only parse together: read them one by one instead
    return values
