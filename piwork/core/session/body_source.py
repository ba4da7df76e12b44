"""Reading entry bodies back from a session file by byte offset, many at a time.

A context build needs most lines of a long path. Reading them one ``pread`` and one parse at a
time costs more than the parse itself, so ``load_many`` reads file windows of a few MiB, joins
the wanted lines of each window into one JSON array (one copy of them) and parses it in one call.
Any window whose array does not parse into exactly the expected entries is read again line by
line, so a bad line is reported alone.
``check_many`` only finds the lines that do not parse: each line of a window is parsed on its own and
dropped at once (its objects reuse the memory the previous line's freed, which costs less than one
array of a window's entries alive together).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import orjson

from piwork.core.jscompat import UNDEFINED
from piwork.core.session.format import json_loads_bytes
from piwork.core.session.records import EntryRecord

WINDOW = 2 * 1024 * 1024  # bytes read (and parsed) at once; bounds the memory a load adds


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
        if all(records[i].offset < records[i + 1].offset for i in range(count - 1)):
            return self._load_sorted(records)
        order = sorted(range(count), key=lambda i: records[i].offset)
        out: list[Any] = [None] * count
        for i, body in zip(order, self._load_sorted([records[i] for i in order]), strict=True):
            out[i] = body
        return out

    def check_many(self, records: Sequence[EntryRecord]) -> None:
        """Parse the lines of ``records`` (in file order) and discard them: each one that is unreadable
        is reported through ``on_error``, exactly as ``load`` would report it."""
        if any(records[i].offset >= records[i + 1].offset for i in range(len(records) - 1)):
            records = sorted(records, key=lambda record: record.offset)
        fd = self._descriptor()
        count = len(records)
        at = 0
        while at < count:
            start = records[at].offset
            limit = start + WINDOW
            end_at = at + 1
            while end_at < count and records[end_at].offset + records[end_at].length <= limit:
                end_at += 1
            last = records[end_at - 1]
            size = max(last.offset + last.length - start, records[at].length)
            data = os.pread(fd, size, start)
            view = memoryview(data)
            for record in records[at:end_at]:
                begin = record.offset - start
                try:
                    if begin < 0 or begin + record.length > len(data):
                        raise ValueError("outside the window")
                    orjson.loads(view[begin : begin + record.length])
                except (orjson.JSONDecodeError, ValueError):
                    self.load(record)  # the standard way decides, and reports
            at = end_at

    def _load_sorted(self, records: Sequence[EntryRecord]) -> list[Any]:
        """``load_many`` for records in file order, window by window (one pass over the records)."""
        fd = self._descriptor()
        out: list[Any] = []
        count = len(records)
        at = 0
        while at < count:
            first = records[at]
            start = first.offset
            limit = start + WINDOW
            run_end = start + first.length
            end_at = at + 1
            while end_at < count:
                record = records[end_at]
                offset = record.offset
                if offset < run_end or offset + record.length > limit:
                    break  # lines that overlap (read them one by one) or the window is full
                run_end = offset + record.length
                end_at += 1
            window = records[at:end_at]
            data = os.pread(fd, run_end - start, start)
            values = _parse_window(data, start, window) if len(data) == run_end - start else None
            out.extend([self.load(record) for record in window] if values is None else values)
            at = end_at
        return out

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def _parse_window(data: bytes, start: int, window: Sequence[EntryRecord]) -> list[Any] | None:
    """The window's entries parsed as one JSON array, or ``None`` when that does not work out."""
    view = memoryview(data)
    pieces: list[Any] = [view[r.offset - start : r.offset - start + r.length] for r in window]
    # one copy of the window's lines: the brackets go on the first and last line
    pieces[0] = b"[" + pieces[0]
    pieces[-1] = bytes(pieces[-1]) + b"]"
    text = b",".join(pieces)
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
