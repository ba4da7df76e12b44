"""Streaming output accumulator: a bounded tail in memory, the full raw output spilled to a file.

Command output can be gigabytes. The accumulator decodes chunks incrementally (a character split
across chunks is completed by the next one, invalid bytes become U+FFFD), keeps only a rolling tail
of the decoded text for display, counts lines and bytes of everything, and once the output exceeds
the display limits writes every raw byte (ANSI codes and invalid UTF-8 included) to a spill file.
Before that point the raw chunks (at most about ``max_bytes``) are held in memory.

The log is a convenience, never a reason to fail: when it cannot be created or written (a full
disk) it is removed and the accumulator goes on with the tail alone, saying why in ``log_problem``;
with ``max_log_bytes`` the log keeps only that many first bytes (``log_capped``).
"""

from __future__ import annotations

import codecs
import contextlib
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import BinaryIO

from piwork.core.fs.errors import describe_os_error
from piwork.core.redaction import StreamRedactor
from piwork.core.truncate import DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, TruncationResult, truncate_tail

SPILL_BATCH_BYTES = 1 << 20  # raw output is written to the spill file in batches of about this size

SpillOpener = Callable[[], tuple[str, BinaryIO]]
"""Creates the spill file on demand; returns its absolute path and a binary file open for writing."""


@dataclass(frozen=True, slots=True)
class OutputSnapshot:
    """The displayable tail of the output so far, with the truncation record and the spill path."""

    content: str
    truncation: TruncationResult
    full_output_path: str | None
    log_problem: str | None = None
    """Why there is no full-output log although the output was cut (e.g. the disk is full)."""
    log_capped_at: int | None = None
    """When the log stopped at the size cap: the cap in bytes (the log holds the output's start)."""


class OutputAccumulator:
    """Collects raw output chunks with bounded memory (see module docstring)."""

    def __init__(
        self,
        open_spill: SpillOpener,
        max_lines: int = DEFAULT_MAX_LINES,
        max_bytes: int = DEFAULT_MAX_BYTES,
        max_log_bytes: int | None = None,
        redactor: StreamRedactor | None = None,
    ) -> None:
        self.max_lines = max_lines
        self._redactor = redactor
        self.max_log_bytes = max_log_bytes
        self.log_problem: str | None = None
        self.log_capped = False
        self._log_written = 0
        self.max_bytes = max_bytes
        self._rolling_bytes = max(max_bytes * 2, 1)
        self._open_spill = open_spill
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._raw_chunks: list[bytes] = []
        self._tail_parts: list[str] = []
        self._tail_bytes = 0
        self._tail_at_line_start = True
        self.total_raw_bytes = 0
        self.total_decoded_bytes = 0
        self._completed_lines = 0
        self._open_line_bytes = 0
        self._has_open_line = False
        self._last_completed_line_bytes = 0
        self._finished = False
        self._spill_path: str | None = None
        self._spill: BinaryIO | None = None
        self._pending: list[bytes] = []
        self._pending_bytes = 0

    # -- feeding ---------------------------------------------------------------------------------

    def append(self, data: bytes) -> None:
        if self._finished:
            raise RuntimeError("Cannot append to a finished output accumulator")
        self.total_raw_bytes += len(data)
        # A newline byte always decodes to itself at once, so counting raw bytes is exact (and cheaper).
        self._append_text(self._decoder.decode(data), data.count(b"\n"))
        if self._spill is not None or self._over_limits():
            self._ensure_spill()
            if self._spill is not None:
                self._pending.append(data)
                self._pending_bytes += len(data)
                if self._pending_bytes >= SPILL_BATCH_BYTES:
                    self.flush()
        elif data:
            self._raw_chunks.append(bytes(data))

    def finish(self) -> None:
        """Flush the decoder; opens the spill file if the limits were exceeded. Idempotent."""
        if self._finished:
            return
        self._finished = True
        rest = self._decoder.decode(b"", final=True)
        self._append_text(rest, rest.count("\n"))
        if self._over_limits():
            self._ensure_spill()

    def flush(self) -> None:
        """Write buffered raw output to the spill file (done in batches, and before every snapshot)."""
        pending, self._pending = self._pending, []
        self._pending_bytes = 0
        if self._spill is not None and pending:
            self._write(b"".join(pending))

    def close(self) -> None:
        """Write what is buffered and close the spill file (the file itself is kept)."""
        self.flush()
        if self._redactor is not None and self._spill is not None:
            self._write(self._redactor.finish(), redacted=True)
        spill, self._spill = self._spill, None
        if spill is not None:
            try:
                spill.close()
            except OSError as err:
                self._give_up(err, spill)

    # -- reading ---------------------------------------------------------------------------------

    @property
    def total_lines(self) -> int:
        return self._completed_lines + (1 if self._has_open_line else 0)

    @property
    def full_output_path(self) -> str | None:
        return self._spill_path

    @property
    def open_line_bytes(self) -> int:
        """UTF-8 size of the unterminated last line (0 when the output ends with a newline)."""
        return self._open_line_bytes

    @property
    def last_line_bytes(self) -> int:
        """UTF-8 size of the last line, terminated or not (the line a partial view shows)."""
        return self._open_line_bytes if self._has_open_line else self._last_completed_line_bytes

    def snapshot(self, persist_if_truncated: bool = False) -> OutputSnapshot:
        tail = truncate_tail(self._snapshot_text(), self.max_lines, self.max_bytes)
        truncated = self.total_lines > self.max_lines or self.total_decoded_bytes > self.max_bytes
        truncated_by = None
        if truncated:
            truncated_by = tail.truncated_by or (
                "bytes" if self.total_decoded_bytes > self.max_bytes else "lines"
            )
        record = TruncationResult(
            content=tail.content,
            truncated=truncated,
            truncated_by=truncated_by,
            total_lines=self.total_lines,
            total_bytes=self.total_decoded_bytes,
            output_lines=tail.output_lines,
            output_bytes=tail.output_bytes,
            last_line_partial=tail.last_line_partial,
            first_line_exceeds_limit=tail.first_line_exceeds_limit,
            max_lines=self.max_lines,
            max_bytes=self.max_bytes,
        )
        if persist_if_truncated and truncated:
            self._ensure_spill()
        self.flush()
        capped = self.max_log_bytes if self.log_capped else None
        return OutputSnapshot(tail.content, record, self._spill_path, self.log_problem, capped)

    # -- internals -------------------------------------------------------------------------------

    def _over_limits(self) -> bool:
        return (
            self.total_raw_bytes > self.max_bytes
            or self.total_decoded_bytes > self.max_bytes
            or self.total_lines > self.max_lines
        )

    def _append_text(self, text: str, newlines: int) -> None:
        if not text:
            return
        size = len(text) if text.isascii() else len(text.encode("utf-8"))
        self.total_decoded_bytes += size
        self._tail_parts.append(text)
        self._tail_bytes += size
        if self._tail_bytes > self._rolling_bytes * 2:
            self._trim_tail()
        last_nl = text.rfind("\n")
        if last_nl < 0:
            self._open_line_bytes += size
            self._has_open_line = True
        else:
            prev_nl = text.rfind("\n", 0, last_nl)
            if prev_nl < 0:
                self._last_completed_line_bytes = self._open_line_bytes + _utf8_size(text[:last_nl])
            else:
                self._last_completed_line_bytes = _utf8_size(text[prev_nl + 1 : last_nl])
            self._completed_lines += newlines
            rest = text[last_nl + 1 :]
            self._open_line_bytes = _utf8_size(rest)
            self._has_open_line = bool(rest)

    def _trim_tail(self) -> None:
        text = "".join(self._tail_parts)
        if text.isascii():  # one byte per character: cut the string directly
            self._tail_at_line_start = text[-self._rolling_bytes - 1] == "\n"
            self._tail_parts = [text[-self._rolling_bytes :]]
            self._tail_bytes = self._rolling_bytes
            return
        data = text.encode("utf-8")
        if len(data) <= self._rolling_bytes:
            self._tail_parts = [data.decode("utf-8")]
            self._tail_bytes = len(data)
            return
        start = len(data) - self._rolling_bytes
        while start < len(data) and (data[start] & 0xC0) == 0x80:
            start += 1
        if start > 0:
            self._tail_at_line_start = data[start - 1] == 0x0A
        kept = data[start:]
        self._tail_parts = [kept.decode("utf-8")]
        self._tail_bytes = len(kept)

    def _snapshot_text(self) -> str:
        text = "".join(self._tail_parts)
        self._tail_parts = [text] if text else []
        if self._tail_at_line_start:
            return text
        first_nl = text.find("\n")
        # Dropping the cut line must not drop everything: when the only newline ends the text, the cut
        # line is also the last one, so its tail is what to show (Pi would show nothing here).
        if first_nl < 0 or first_nl == len(text) - 1:
            return text
        return text[first_nl + 1 :]

    def _ensure_spill(self) -> None:
        if self._spill_path is not None or self.log_problem is not None:
            return
        try:
            self._spill_path, self._spill = self._open_spill()
        except OSError as err:
            self._give_up(err, None)
            return
        chunks, self._raw_chunks = self._raw_chunks, []
        if chunks:
            self._write(b"".join(chunks))

    def _write(self, data: bytes, redacted: bool = False) -> None:
        spill = self._spill
        if spill is None:
            return
        if self._redactor is not None and not redacted:  # keys never reach the log
            data = self._redactor.feed(data)
        room = None if self.max_log_bytes is None else self.max_log_bytes - self._log_written
        if room is not None and len(data) >= room:
            data = data[:room]
            self.log_capped = True
        try:
            spill.write(data)
            spill.flush()
        except OSError as err:
            self._give_up(err, spill)
            return
        self._log_written += len(data)
        if self.log_capped:  # the log keeps the output's start; the tail stays in memory
            self._spill = None
            try:
                spill.close()
            except OSError as err:
                self._give_up(err, spill)

    def _give_up(self, err: OSError, spill: BinaryIO | None) -> None:
        """The log cannot be written: drop it (freeing the space) and carry on without one."""
        self.log_problem = describe_os_error(err, "write").rsplit(", ", 1)[0]
        self._spill = None
        self._pending = []
        self._pending_bytes = 0
        self._raw_chunks = []
        if spill is not None:
            with contextlib.suppress(OSError):
                spill.close()
        if self._spill_path is not None:
            with contextlib.suppress(OSError):
                os.unlink(self._spill_path)
        self._spill_path = None
        self.log_capped = False


def _utf8_size(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode("utf-8"))
