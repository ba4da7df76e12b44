"""Reading a session file into header, light records and diagnostics, without writing anything.

Lines are parsed one at a time; only the small fields of each entry are kept (see ``records.py``)
unless ``keep_bodies`` is set, so a large file costs little memory. Bodies are read back by byte
offset when needed.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, Literal

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
)
from piwork.core.session.jsvalues import js_truthy
from piwork.core.session.records import EntryRecord, light_record, make_record, paused_gc

Status = Literal["ok", "missing", "empty", "not_session", "unsupported"]
READ_CHUNK = 1024 * 1024


class FileBodySource:
    """Reads entry bodies back from a session file by byte offset (one descriptor, opened lazily)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.on_error: Callable[[EntryRecord], None] | None = None
        self._fd: int | None = None

    def load(self, record: EntryRecord) -> Any:
        if self._fd is None:
            self._fd = os.open(self.path, os.O_RDONLY)
        try:
            return read_body(self._fd, record)
        except ValueError:
            if self.on_error is not None:
                self.on_error(record)
            return None

    def load_many(self, records: list[EntryRecord]) -> list[Any]:
        """Bodies of several entries parsed in one go; ``None`` for any that cannot be read."""
        if self._fd is None:
            self._fd = os.open(self.path, os.O_RDONLY)
        fd = self._fd
        data = b"[" + b",".join(os.pread(fd, r.length, r.offset) for r in records) + b"]"
        try:
            values = json_loads(data.decode("utf-8", "replace"))
            if isinstance(values, list) and len(values) == len(records):
                return values
        except ValueError:
            pass
        return [self.load(r) for r in records]

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


@dataclass
class LoadedFile:
    """What a session file holds. ``status`` tells whether it is a usable session at all."""

    path: Path
    status: Status
    header: dict[str, Any] | None = None
    records: list[EntryRecord] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    size: int = 0
    mtime_ns: int = 0
    torn: bool = False
    source: FileBodySource | None = None

    @property
    def version(self) -> Any:
        if self.header is None:
            return None
        return self.header.get("version", 1)


def _lines(handle: BinaryIO) -> Any:
    """``(line number, offset, raw bytes without newline, ended by newline)`` for each line."""
    offset = 0
    for number, raw in enumerate(handle, start=1):
        has_newline = raw.endswith(b"\n")
        body = raw[:-1] if has_newline else raw
        yield number, offset, body, has_newline
        offset += len(raw)


def read_session_file(
    path: str | os.PathLike[str], keep_bodies: bool = False, keep_non_objects: bool = False
) -> LoadedFile:
    """Parse a session file. Never writes, never raises for bad content (only for I/O errors).

    ``keep_non_objects`` keeps JSON lines that are not objects (``42``, ``"x"``) as entries, the
    way the reference does; by default they are reported as ``malformed_json`` and skipped.
    """
    with paused_gc():
        return _read(Path(path), keep_bodies, keep_non_objects)


def _read(file_path: Path, keep_bodies: bool, keep_non_objects: bool) -> LoadedFile:
    try:
        stat = file_path.stat()
    except FileNotFoundError:
        return LoadedFile(file_path, "missing")
    loaded = LoadedFile(file_path, "ok", size=stat.st_size, mtime_ns=stat.st_mtime_ns)
    source = loaded.source = FileBodySource(file_path)
    if stat.st_size == 0:
        loaded.status = "empty"
        return loaded
    first = True
    with open(file_path, "rb", buffering=READ_CHUNK) as handle:
        for number, offset, raw, has_newline in _lines(handle):
            if not raw.strip():
                if not has_newline:
                    loaded.torn = True
                continue
            if not has_newline:
                loaded.torn = True
            elif not first and not keep_bodies:
                light = light_record(raw, len(loaded.records), number, offset)
                if light is not None:
                    light.source = source
                    loaded.records.append(light)
                    continue
            try:
                value = json_loads(raw.decode("utf-8", "replace"))
            except ValueError:
                if is_blank(raw):
                    continue
                if first and is_v4_header(_loose_json(raw)):
                    loaded.status = "unsupported"
                    return loaded
                kind = TORN_TAIL if not has_newline else MALFORMED_JSON
                text = (
                    "The last line is incomplete (the program writing it probably stopped); it is skipped"
                    if kind == TORN_TAIL
                    else "Line is not valid JSON; it is skipped"
                )
                loaded.diagnostics.append(Diagnostic(kind, number, offset, text))
                continue
            if keep_non_objects and not js_truthy(value):
                continue  # the reference drops null/0/false/"" lines before looking at them
            if first:
                first = False
                if is_v4_header(value):
                    loaded.status = "unsupported"
                    loaded.diagnostics.append(
                        Diagnostic(
                            UNSUPPORTED_FORMAT, number, offset, "This session uses the experimental v4 format"
                        )
                    )
                    return loaded
                if not is_valid_header(value):
                    loaded.status = "not_session"
                    loaded.diagnostics.append(
                        Diagnostic(BAD_HEADER, number, offset, "The first entry is not a session header")
                    )
                    return loaded
                loaded.header = value
                continue
            if not isinstance(value, dict) and not keep_non_objects:
                loaded.diagnostics.append(
                    Diagnostic(
                        MALFORMED_JSON, number, offset, "Line is JSON but not an object; it is skipped"
                    )
                )
                continue
            if is_header(value) and not keep_non_objects:
                loaded.diagnostics.append(
                    Diagnostic(
                        BAD_HEADER, number, offset, "A second session header inside the file is ignored"
                    )
                )
            record = make_record(value, len(loaded.records), number, offset, len(raw))
            if keep_bodies or not isinstance(value, dict):
                record.body = value
            loaded.records.append(record)
    if first:
        loaded.status = "not_session"
    return loaded


def _loose_json(raw: bytes) -> Any:
    try:
        return json_loads(raw.decode("utf-8", "replace").strip())
    except ValueError:
        return None


def read_body(fd: int, record: EntryRecord) -> Any:
    """Parse one entry again from the file by its byte offset."""
    data = os.pread(fd, record.length, record.offset)
    return json_loads(data.decode("utf-8", "replace"))
