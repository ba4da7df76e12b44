"""Regex search over a log file, line by line, in bounded memory.

`search_file_lines` reads the file in chunks cut at line ends, reports the 0-based numbers of
matching lines in batches, and stops when cancelled or when `max_matches` lines matched. A single
line longer than `HUGE_LINE` is searched in pieces (a match straddling two pieces can be missed).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable

CHUNK = 1 << 22
HUGE_LINE = 1 << 24
MAX_MATCHES = 100_000


class _Scanner:
    def __init__(
        self, regex: re.Pattern[str], on_batch: Callable[[list[int], int], None], limit: int
    ) -> None:
        self.regex = regex
        self.on_batch = on_batch
        self.limit = limit
        self.line = 0  # line number of the next unprocessed text
        self.found = 0
        self.last_reported = -1

    @property
    def capped(self) -> bool:
        return self.found >= self.limit

    def scan(self, text: str, done_bytes: int) -> None:
        """Search `text`, which starts at the beginning of line `self.line`."""
        batch: list[int] = []
        pos = 0
        line = self.line
        while not self.capped:
            match = self.regex.search(text, pos)
            if match is None:
                break
            line += text.count("\n", pos, match.start())
            if line != self.last_reported:
                batch.append(line)
                self.last_reported = line
                self.found += 1
            next_newline = text.find("\n", match.start())
            if next_newline == -1:
                break
            pos = next_newline + 1
            line += 1
        self.line += text.count("\n")
        self.on_batch(batch, done_bytes)


def search_file_lines(
    path: str,
    regex: re.Pattern[str],
    size: int,
    on_batch: Callable[[list[int], int], None],
    cancel: threading.Event,
    max_matches: int = MAX_MATCHES,
) -> tuple[int, bool]:
    """Returns (matching lines found, whether the search stopped at `max_matches`)."""
    scanner = _Scanner(regex, on_batch, max_matches)
    carry = b""
    done = 0
    with open(path, "rb") as handle:
        while done < size and not scanner.capped:
            if cancel.is_set():
                break
            data = handle.read(min(CHUNK, size - done))
            if not data:
                break
            done += len(data)
            buffer = carry + data if carry else data
            cut = len(buffer) if done >= size else buffer.rfind(b"\n") + 1
            if cut == 0:
                if len(buffer) < HUGE_LINE:
                    carry = buffer
                    continue
                cut = len(buffer)
            carry = buffer[cut:]
            scanner.scan(buffer[:cut].decode("utf-8", errors="replace"), done)
        if carry and not cancel.is_set() and not scanner.capped:
            scanner.scan(carry.decode("utf-8", errors="replace"), done)
    return scanner.found, scanner.capped


def compile_search(text: str, use_regex: bool, case_sensitive: bool) -> re.Pattern[str]:
    """Compile the user's query; raises re.error with the parser's message for a bad pattern."""
    flags = re.MULTILINE | (0 if case_sensitive else re.IGNORECASE)
    return re.compile(text if use_regex else re.escape(text), flags)
