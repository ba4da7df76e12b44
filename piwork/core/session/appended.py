"""The entries another program appended to a session file, read from where piwork knew the file to end.

Following a Pi that writes the open session means reading its few new lines many times over; reading the
whole file each time would cost seconds for a long session. When the file is still the one piwork knew (same
device and inode), grown past the known size, which ended a line, only the bytes after it are read. Anything
else — a line that is not a JSON object, a second header, a last line still being written, a file replaced
or cut — returns None, and the caller reads the file whole, as it always could.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from piwork.core.session.format import is_header, json_loads_bytes
from piwork.core.session.records import EntryRecord, make_record

MAX_TAIL = 64 << 20  # more than this appended at once: read the file whole


@dataclass(frozen=True)
class KnownEnd:
    """Where piwork knew the file to end: which file, its size, and the line and entry counts there."""

    device: int
    inode: int
    size: int
    lines: int  # the line number of the last line (0 when not known)
    entries: int  # the entries held, so the first appended one is entry number ``entries``


def read_appended(path: Path, known: KnownEnd) -> tuple[list[EntryRecord], os.stat_result] | None:
    """The entries appended after ``known`` (bodies read back from the file when needed), and the file's
    state they were read at; None when the file is not simply ``known`` grown by whole entry lines."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        grown = st.st_size - known.size
        if not stat.S_ISREG(st.st_mode) or (st.st_dev, st.st_ino) != (known.device, known.inode):
            return None
        if grown <= 0 or grown > MAX_TAIL or known.size <= 0:
            return None
        if os.pread(fd, 1, known.size - 1) != b"\n":  # the known end is not a line's end
            return None
        data = _read_at(fd, known.size, grown)
    except OSError:
        return None
    finally:
        os.close(fd)
    if len(data) != grown or not data.endswith(b"\n"):  # the last line is still being written
        return None
    records: list[EntryRecord] = []
    position, line = 0, known.lines
    while position < len(data):
        end = data.index(b"\n", position)
        raw = data[position:end]
        line += 1 if known.lines else 0
        if raw.strip():
            try:
                value = json_loads_bytes(raw)
            except ValueError:
                return None
            if not isinstance(value, dict) or is_header(value):
                return None
            records.append(
                make_record(value, known.entries + len(records), line, known.size + position, len(raw))
            )
        position = end + 1
    return records, st


def _read_at(fd: int, offset: int, count: int) -> bytes:
    chunks: list[bytes] = []
    while count > 0:
        chunk = os.pread(fd, count, offset)
        if not chunk:
            break
        chunks.append(chunk)
        offset += len(chunk)
        count -= len(chunk)
    return b"".join(chunks)
