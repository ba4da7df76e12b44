"""A sparse line index over a (possibly huge) log file, so any line can be read without loading the file.

The file is cut into fixed-size blocks; the index stores, per block, how many newlines come before it.
Finding line N is a bisect over the blocks plus a scan of one block (the newline positions of recently
used blocks are cached). Counting is done by `count_block_newlines` (run it in a worker) and fed to
`LineIndex.add_block_counts` on the owning thread, so the index itself is single-threaded.

Lines are split on "\\n" only; a final line without "\\n" counts once the whole file is indexed.
"""

from __future__ import annotations

import errno
import mmap
import os
import threading
from array import array
from bisect import bisect_right
from collections import OrderedDict
from collections.abc import Callable

from piwork.core import safe_read

BLOCK_SIZE = 1 << 16
READ_CHUNK = 1 << 22  # 4 MiB per read, i.e. 64 blocks
MAX_LINE_BYTES = 1 << 16  # longest prefix of a single line that is ever read for display
_CACHED_BLOCKS = 64


FULL_OUTPUT = safe_read.FileKind("full output log", 1 << 62)  # read in windows, never whole


class LogFileError(Exception):
    """The full-output file is missing or cannot be read (message is shown to the user)."""


class LineIndex:
    def __init__(self, path: str) -> None:
        self.path = path
        try:
            # never blocks: a FIFO or device where the log should be is refused, not waited on for ever
            fd, _info = safe_read.open_regular(path, FULL_OUTPUT)
        except FileNotFoundError as exc:
            raise LogFileError(f"The full output file no longer exists: {path}") from exc
        except safe_read.UnreadableFile as exc:
            raise LogFileError(f"The full output file cannot be read: {exc}") from exc
        except OSError as exc:
            raise LogFileError(f"The full output file cannot be read: {path} ({exc.strerror})") from exc
        self._file = os.fdopen(fd, "rb")  # kept open for the life of the index
        self.size = os.fstat(self._file.fileno()).st_size
        self._mm: mmap.mmap | None = None
        if self.size:
            try:
                self._mm = mmap.mmap(self._file.fileno(), 0, access=mmap.ACCESS_READ)
            except (OSError, ValueError) as exc:
                self._file.close()
                raise LogFileError(f"The full output file cannot be read: {path} ({exc})") from exc
        self._newlines_before = array("q", [0])  # len == indexed blocks + 1
        self._positions: OrderedDict[int, list[int]] = OrderedDict()
        self._ends_with_newline = self._mm is not None and self._mm[self.size - 1 : self.size] == b"\n"

    def close(self) -> None:
        if self._mm is not None:
            self._mm.close()
            self._mm = None
        self._file.close()

    @property
    def block_count(self) -> int:
        return (self.size + BLOCK_SIZE - 1) // BLOCK_SIZE

    @property
    def indexed_blocks(self) -> int:
        return len(self._newlines_before) - 1

    @property
    def complete(self) -> bool:
        return self.indexed_blocks >= self.block_count

    @property
    def newline_count(self) -> int:
        return self._newlines_before[-1]

    @property
    def line_count(self) -> int:
        """Lines known so far (only complete lines while indexing is still running)."""
        count = self.newline_count
        if self.complete and self.size and not self._ends_with_newline:
            count += 1
        return count

    def newline_counts(self) -> array[int]:
        """A copy of the newlines counted before each indexed block (and after the last one), which
        another thread may read while indexing goes on."""
        return array("q", self._newlines_before)

    def add_block_counts(self, counts: list[int]) -> None:
        total = self._newlines_before[-1]
        for count in counts:
            total += count
            self._newlines_before.append(total)

    def index_all(self) -> None:
        """Index synchronously (small files and tests)."""
        self.add_block_counts(
            count_block_newlines(self.path, self.indexed_blocks, self.block_count, self.size)
        )

    def _block_positions(self, block: int) -> list[int]:
        cached = self._positions.get(block)
        if cached is not None:
            self._positions.move_to_end(block)
            return cached
        assert self._mm is not None
        start = block * BLOCK_SIZE
        end = min(self.size, start + BLOCK_SIZE)
        positions: list[int] = []
        find = self._mm.find
        pos = find(b"\n", start, end)
        while pos != -1:
            positions.append(pos)
            pos = find(b"\n", pos + 1, end)
        self._positions[block] = positions
        if len(self._positions) > _CACHED_BLOCKS:
            self._positions.popitem(last=False)
        return positions

    def _newline_offset(self, k: int) -> int:
        """File offset of the k-th newline (0-based); k must be < newline_count."""
        block = bisect_right(self._newlines_before, k) - 1
        return self._block_positions(block)[k - self._newlines_before[block]]

    def line_span(self, line: int) -> tuple[int, int]:
        """(start, end) byte offsets of `line` (0-based), end excluding the newline."""
        if not 0 <= line < self.line_count:
            raise IndexError(line)
        start = 0 if line == 0 else self._newline_offset(line - 1) + 1
        end = self._newline_offset(line) if line < self.newline_count else self.size
        return start, end

    def line_bytes(self, line: int, limit: int = MAX_LINE_BYTES) -> tuple[bytes, int]:
        """The first `limit` bytes of a line and the line's full length in bytes."""
        start, end = self.line_span(line)
        assert self._mm is not None
        return self._mm[start : min(end, start + limit)], end - start

    def line_text(self, line: int, limit: int = MAX_LINE_BYTES) -> str:
        data, _length = self.line_bytes(line, limit)
        return data.decode("utf-8", errors="replace")


def _whole_hole_blocks(fd: int, block: int, end_block: int, size: int) -> int:
    """How many whole blocks from `block` on lie in a hole of a sparse file (they hold only zero
    bytes, so no newline): 0 when the platform cannot tell or data starts within this block."""
    seek_data = getattr(os, "SEEK_DATA", None)
    if seek_data is None:
        return 0
    try:
        data_at = os.lseek(fd, block * BLOCK_SIZE, seek_data)
    except OSError as exc:
        if exc.errno != errno.ENXIO:  # ENXIO: nothing but a hole up to the end of the file
            return 0
        data_at = size
    return max(0, min(min(data_at, size) // BLOCK_SIZE, end_block) - block)


def count_block_newlines(
    path: str,
    first_block: int,
    end_block: int,
    size: int,
    on_batch: Callable[[list[int], int], None] | None = None,
    cancel: threading.Event | None = None,
) -> list[int]:
    """Count newlines per block for blocks [first_block, end_block) of the first `size` bytes.

    With `on_batch`, counts are handed over every read chunk (with the bytes done so far) and the
    returned list is empty; otherwise they are returned. Stops early when `cancel` is set. Holes
    of sparse files are skipped without reading them.
    """
    collected: list[int] = []
    buffer = bytearray(READ_CHUNK)
    view = memoryview(buffer)
    chunk_blocks = READ_CHUNK // BLOCK_SIZE
    with open(path, "rb", buffering=0) as handle:
        fd = handle.fileno()
        block = first_block
        while block < end_block:
            if cancel is not None and cancel.is_set():
                break
            holes = _whole_hole_blocks(fd, block, end_block, size)
            if holes:
                counts = [0] * holes
            else:
                got = min(os.preadv(fd, [view], block * BLOCK_SIZE), size - block * BLOCK_SIZE)
                if got <= 0:
                    break
                counts = [buffer.count(b"\n", s, min(s + BLOCK_SIZE, got)) for s in range(0, got, BLOCK_SIZE)]
                counts = counts[: min(end_block - block, chunk_blocks)]
            block += len(counts)
            if on_batch is not None:
                on_batch(counts, min(size, block * BLOCK_SIZE))
            else:
                collected.extend(counts)
    return collected
