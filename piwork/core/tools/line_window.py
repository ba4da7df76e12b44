"""Streaming the lines ``read`` shows out of a file of any size, in bounded memory.

``read`` needs three things from a file: the text of lines ``[start, end)`` (only as much of it as the
output limits can show), that text's full size in lines and bytes, and the file's line count. This
scans the file once in chunks: lines before the window and after it are only counted (a ``\\n`` byte
is never part of a multi-byte sequence, so raw bytes can be counted), the window is decoded
incrementally, and holes of a sparse file are accounted for arithmetically (a hole reads as NUL
bytes, without newlines) instead of being read.
"""

from __future__ import annotations

import codecs
import errno
import os
import threading
from dataclasses import dataclass, replace

from piwork.core.tools.base import ToolError
from piwork.core.truncate import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_LINES,
    TruncationResult,
    count_lines,
    truncate_head,
    utf8_len,
)

CHUNK_BYTES = 1024 * 1024


@dataclass(frozen=True, slots=True)
class LineWindow:
    """What the scan found: the window's truncation, the size of its first line, the file's lines."""

    truncation: TruncationResult
    first_line_bytes: int
    total_file_lines: int


class _Window:
    """Receives the decoded text of the window; keeps a prefix just long enough for ``truncate_head``."""

    def __init__(self, max_lines: int, max_bytes: int) -> None:
        self.max_lines = max_lines
        self.max_bytes = max_bytes
        self.decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self.parts: list[str] = []
        self.kept_chars = 0
        self.kept_newlines = 0
        self.complete = True  # the kept prefix is the whole window
        self.total_bytes = 0
        self.newlines = 0
        self.ends_with_newline = False
        self.empty = True
        self.first_line_bytes = 0
        self.first_line_done = False

    def feed(self, raw: bytes, final: bool = False) -> None:
        self._text(self.decoder.decode(raw, final))

    def feed_nuls(self, count: int) -> None:
        """``count`` NUL bytes of a hole: the first goes through the decoder (it may end a pending
        sequence), the others are counted."""
        if count <= 0:
            return
        self.feed(b"\0")
        rest = count - 1
        if rest == 0:
            return
        self.total_bytes += rest
        if not self.first_line_done:
            self.first_line_bytes += rest
        if self.complete:
            kept = min(rest, self.max_bytes + 2 - self.kept_chars)
            self._keep("\0" * kept, whole=kept == rest)

    def _text(self, text: str) -> None:
        if not text:
            return
        self.empty = False
        self.total_bytes += utf8_len(text)
        self.newlines += text.count("\n")
        self.ends_with_newline = text.endswith("\n")
        if not self.first_line_done:
            cut = text.find("\n")
            self.first_line_bytes += utf8_len(text if cut < 0 else text[:cut])
            self.first_line_done = cut >= 0
        if self.complete:
            piece = text[: self.max_bytes + 2 - self.kept_chars]
            self._keep(piece, whole=len(piece) == len(text))

    def _keep(self, piece: str, whole: bool) -> None:
        # The prefix is enough to decide the truncation exactly once it holds more than
        # ``max_lines`` whole lines, or more characters (hence bytes) than the byte limit plus one:
        # ``truncate_head`` then never keeps its last, possibly cut, line.
        self.parts.append(piece)
        self.kept_chars += len(piece)
        self.kept_newlines += piece.count("\n")
        if not whole or self.kept_newlines > self.max_lines or self.kept_chars > self.max_bytes + 1:
            self.complete = False

    def result(self, total_file_lines: int) -> LineWindow:
        prefix = "".join(self.parts)
        if self.complete:
            return LineWindow(
                truncate_head(prefix, self.max_lines, self.max_bytes),
                self.first_line_bytes,
                total_file_lines,
            )
        truncation = truncate_head(prefix, self.max_lines, self.max_bytes)
        total_lines = 0 if self.empty else self.newlines + (0 if self.ends_with_newline else 1)
        return LineWindow(
            replace(truncation, total_lines=total_lines, total_bytes=self.total_bytes),
            self.first_line_bytes,
            total_file_lines,
        )


class _Scan:
    """Walks raw bytes, counting lines, handing the window's bytes to a :class:`_Window`."""

    def __init__(self, start: int, end: int | None, window: _Window) -> None:
        self.start = start
        self.end = end
        self.line = 0  # index of the line the next byte belongs to
        self.window = window
        self.closed = False

    def _in_window(self) -> bool:
        return self.line >= self.start and (self.end is None or self.line < self.end)

    def feed(self, buf: bytes) -> None:
        i = 0
        size = len(buf)
        while i < size:
            if self.line < self.start:
                need = self.start - self.line
                if buf.count(b"\n", i) < need:
                    self.line += buf.count(b"\n", i)
                    return
                for _ in range(need):
                    i = buf.index(b"\n", i) + 1
                self.line = self.start
            elif self._in_window():
                if self.end is None:
                    self.window.feed(buf[i:] if i else buf)
                    self.line += buf.count(b"\n", i)
                    return
                j = i
                for _ in range(self.end - self.line):
                    j = buf.find(b"\n", j)
                    if j < 0:
                        break
                    j += 1
                if j < 0:  # the window goes on in the next chunk
                    self.line += buf.count(b"\n", i)
                    self.window.feed(buf[i:])
                    return
                # buf[j-1] is the newline ending the window's last line: it is not part of the text
                self.window.feed(buf[i : j - 1], final=True)
                self.closed = True
                self.line = self.end
                i = j
            else:
                self.line += buf.count(b"\n", i)
                return

    def feed_nuls(self, count: int) -> None:
        if self._in_window():
            self.window.feed_nuls(count)

    def finish(self) -> None:
        if not self.closed:
            self.window.feed(b"", final=True)


def _data_regions(fd: int, size: int) -> list[tuple[int, int]] | None:
    """The (start, end) data regions of a sparse file, or ``None`` when the system cannot tell."""
    regions: list[tuple[int, int]] = []
    pos = 0
    while pos < size:
        try:
            start = os.lseek(fd, pos, os.SEEK_DATA)
        except OSError as err:
            if err.errno == errno.ENXIO:  # only a hole is left
                break
            return None
        end = min(os.lseek(fd, start, os.SEEK_HOLE), size)
        if end <= start:
            return None
        regions.append((start, end))
        pos = end
    return regions


def scan_lines(
    fd: int,
    start: int,
    limit: int | None,
    stop: threading.Event,
    max_lines: int = DEFAULT_MAX_LINES,
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> LineWindow:
    """Scan the open regular file ``fd`` for the window of ``limit`` lines from line ``start`` (0-based).

    Reads at most the file's size at the start (a growing log does not keep the scan going) and
    stops with ``Operation aborted`` when ``stop`` is set.
    """
    size = os.fstat(fd).st_size
    window = _Window(max_lines, max_bytes)
    scan = _Scan(start, None if limit is None else start + limit, window)
    regions = _data_regions(fd, size) if hasattr(os, "SEEK_DATA") else None
    pos = 0
    for region_start, region_end in regions if regions is not None else [(0, size)]:
        scan.feed_nuls(region_start - pos)
        pos = region_start
        while pos < region_end:
            if stop.is_set():
                raise ToolError("Operation aborted", aborted=True)
            chunk = os.pread(fd, min(CHUNK_BYTES, region_end - pos), pos)
            if not chunk:  # the file shrank meanwhile
                region_end = pos
                size = pos
                break
            scan.feed(chunk)
            pos += len(chunk)
    scan.feed_nuls(size - pos)
    scan.finish()
    return window.result(scan.line + 1)


__all__ = ["LineWindow", "count_lines", "scan_lines"]
