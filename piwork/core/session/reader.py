"""Reading a session file into header, light records and diagnostics, without writing anything.

The file is read in blocks of whole lines. Message lines in the usual layout are indexed from
their bytes (see ``line_index.py``); every other line is parsed in full. Only the small fields of
each entry are kept (see ``records.py``) unless ``keep_bodies`` is set, so a large file costs
little memory. Bodies are read back by byte offset when needed (see ``body_source.py``).
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from piwork.core.collector import paused_gc
from piwork.core.jscompat import js_truthy
from piwork.core.session.body_source import FileBodySource
from piwork.core.session.format import (
    BAD_HEADER,
    MALFORMED_JSON,
    TORN_TAIL,
    UNSUPPORTED_FORMAT,
    Diagnostic,
    is_blank,
    is_header,
    is_v4_header,
    is_valid_header,
    json_loads,
    json_loads_bytes,
)
from piwork.core.session.line_index import scan_message_lines, suspect_lines
from piwork.core.session.records import EntryRecord, make_record

__all__ = ["FileBodySource", "LoadedFile", "read_body", "read_session_file"]

Status = Literal["ok", "missing", "empty", "not_session", "unsupported"]
READ_CHUNK = 8 * 1024 * 1024


@dataclass
class LoadedFile:
    """What a session file holds. ``status`` tells whether it is a usable session at all."""

    path: Path
    status: Status
    header: dict[str, Any] | None = None
    records: list[EntryRecord] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    size: int = 0
    torn: bool = False
    source: FileBodySource | None = None

    @property
    def version(self) -> Any:
        if self.header is None:
            return None
        return self.header.get("version", 1)


def read_session_file(
    path: str | os.PathLike[str], keep_bodies: bool = False, keep_non_objects: bool = False
) -> LoadedFile:
    """Parse a session file. Never writes, never raises for bad content (only for I/O errors).

    ``keep_non_objects`` keeps JSON lines that are not objects (``42``, ``"x"``) as entries, the
    way the reference does; by default they are reported as ``malformed_json`` and skipped.
    """
    with paused_gc(keep=True):
        return _read(Path(path), keep_bodies, keep_non_objects)


def read_regular_bytes(path: str | os.PathLike[str]) -> bytes:
    """All of a session file read again (an export after its parse), from a descriptor that is checked to
    be a regular file: one swapped for a FIFO or device since is refused (``OSError``), never waited on."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    with open(fd, "rb", buffering=0) as handle:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise OSError(errno.EINVAL, "not a regular file (changed since it was read)", os.fspath(path))
        return handle.read()


def _special(mode: int) -> bool:
    """A FIFO, device or socket: never read or written as a session (a folder fails as before)."""
    return not stat.S_ISREG(mode) and not stat.S_ISDIR(mode)


def _read(file_path: Path, keep_bodies: bool, keep_non_objects: bool) -> LoadedFile:
    try:
        info = file_path.stat()
    except FileNotFoundError:
        return LoadedFile(file_path, "missing")
    if _special(info.st_mode):  # a FIFO would block a read (and a write) for ever, a device never end
        return LoadedFile(file_path, "not_session")
    loaded = LoadedFile(file_path, "ok", size=info.st_size)
    loaded.source = FileBodySource(file_path)
    if info.st_size == 0:
        loaded.status = "empty"
        return loaded
    indexer = _Indexer(loaded, keep_bodies, keep_non_objects)
    if stat.S_ISDIR(info.st_mode):  # as opening it to read says, naming the path
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(file_path))
    fd = os.open(file_path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    if _special(os.fstat(fd).st_mode):  # swapped for one since the check above
        os.close(fd)
        return LoadedFile(file_path, "not_session")
    with open(fd, "rb", buffering=0) as handle:
        carry: list[bytes] = []  # the start of a line that goes on in the next chunk
        base = 0  # file offset of the first byte not indexed yet
        while not indexer.done and (chunk := handle.read(READ_CHUNK)):
            start = 0
            if carry:  # finish the line begun in the previous chunks, on its own
                first_end = chunk.find(b"\n") + 1
                if first_end == 0:
                    carry.append(chunk)
                    continue
                line = b"".join([*carry, chunk[:first_end]])
                indexer.block(line, 0, len(line), base)
                base += len(line)
                carry, start = [], first_end
            cut = chunk.rfind(b"\n") + 1
            if cut > start:  # whole lines, indexed in place (no copy of the chunk)
                indexer.block(chunk, start, cut, base - start)
                base += cut - start
            if max(cut, start) < len(chunk):
                carry.append(chunk[max(cut, start) :])
        if carry and not indexer.done:
            indexer.line(b"".join(carry), indexer.line_number + 1, base, has_newline=False)
    if indexer.first:
        loaded.status = "not_session"
    return loaded


class _Indexer:
    """Turns the lines of a file, block by block, into the header, records and diagnostics."""

    def __init__(self, loaded: LoadedFile, keep_bodies: bool, keep_non_objects: bool) -> None:
        self.loaded = loaded
        self.keep_bodies = keep_bodies
        self.keep_non_objects = keep_non_objects
        self.first = True  # no entry parsed yet: the next one must be the header
        self.done = False  # the file turned out not to be a session piwork can read
        self.line_number = 0

    def block(self, data: bytes, begin: int, stop: int, base: int) -> None:
        """Index ``data[begin:stop]`` (whole lines, each ending with a newline); ``base`` is the
        file offset of ``data[0]``."""
        position = begin
        while position < stop and (self.first or self.keep_bodies) and not self.done:
            end = data.index(b"\n", position)
            self.line_number += 1
            self.line(data[position:end], self.line_number, base + position, has_newline=True)
            position = end + 1
        if position >= stop or self.done:
            return

        def other(start: int, end: int, number: int) -> None:
            self.line(data[start:end], number, base + start, has_newline=True)

        records, source = self.loaded.records, self.loaded.source
        for start, end in suspect_lines(data, position, stop):  # parsed in full, never indexed by bytes
            if start > position:
                self.line_number = scan_message_lines(
                    data, position, start, base, self.line_number, records, other, source
                )
            self.line_number += 1
            other(start, end, self.line_number)
            position = end + 1
        if position < stop:
            self.line_number = scan_message_lines(
                data, position, stop, base, self.line_number, records, other, source
            )

    def line(self, raw: bytes, number: int, offset: int, has_newline: bool) -> None:
        """Parse one line in full (the header, lines in other layouts, the torn tail)."""
        loaded = self.loaded
        if not has_newline:
            loaded.torn = True
        if not raw.strip():
            return
        try:
            value = json_loads_bytes(raw)
        except ValueError:
            if is_blank(raw):
                return
            if self.first and is_v4_header(_loose_json(raw)):
                loaded.status = "unsupported"
                self.done = True
                return
            kind = TORN_TAIL if not has_newline else MALFORMED_JSON
            text = (
                "The last line is incomplete (the program writing it probably stopped); it is skipped"
                if kind == TORN_TAIL
                else "Line is not valid JSON; it is skipped"
            )
            loaded.diagnostics.append(Diagnostic(kind, number, offset, text))
            return
        if self.keep_non_objects and not js_truthy(value):
            return  # the reference drops null/0/false/"" lines before looking at them
        if self.first:
            self._header(value, number, offset)
            return
        if not isinstance(value, dict) and not self.keep_non_objects:
            loaded.diagnostics.append(
                Diagnostic(MALFORMED_JSON, number, offset, "Line is JSON but not an object; it is skipped")
            )
            return
        if is_header(value) and not self.keep_non_objects:
            loaded.diagnostics.append(
                Diagnostic(BAD_HEADER, number, offset, "A second session header inside the file is ignored")
            )
        record = make_record(value, len(loaded.records), number, offset, len(raw))
        if self.keep_bodies or not isinstance(value, dict):
            record.body = value
        else:
            record.source = loaded.source  # read back with the others when a context needs it
        loaded.records.append(record)

    def _header(self, value: Any, number: int, offset: int) -> None:
        loaded = self.loaded
        self.first = False
        if is_v4_header(value):
            loaded.status = "unsupported"
            loaded.diagnostics.append(
                Diagnostic(UNSUPPORTED_FORMAT, number, offset, "This session uses the experimental v4 format")
            )
            self.done = True
        elif not is_valid_header(value):
            loaded.status = "not_session"
            loaded.diagnostics.append(
                Diagnostic(BAD_HEADER, number, offset, "The first entry is not a session header")
            )
            self.done = True
        else:
            loaded.header = value


def _loose_json(raw: bytes) -> Any:
    try:
        return json_loads(raw.decode("utf-8", "replace").strip())
    except ValueError:
        return None


def read_body(fd: int, record: EntryRecord) -> Any:
    """Parse one entry again from the file by its byte offset."""
    return json_loads_bytes(os.pread(fd, record.length, record.offset))
