"""Search over a log file's bytes, line by line, in bounded memory and without decoding the file.

`search_file_lines` maps the file and runs a compiled `bytes` regex over line-aligned pieces of it,
reporting the 0-based numbers of matching lines in batches (one per piece, with the bytes done) and
stopping when cancelled or when `max_matches` lines matched. Match offsets become line numbers through
a snapshot of the line index's per-block newline counts (bisect-free: block = offset // BLOCK_SIZE,
then a count inside one block); the part of the file not indexed yet is counted as it is searched.

What is matched: the file's text as written, one line at a time, escape sequences included (as grep
does); colour codes are hidden only when lines are shown. A query typed as plain text is matched as
its UTF-8 bytes; "Match case" off folds ASCII letters by lowering each piece and non-ASCII letters by
alternatives of their upper and lower case. A regex is run on bytes where that gives the same answer
as on text: always for an ASCII pattern over ASCII pieces; a piece holding non-ASCII bytes (and every
piece, for a non-ASCII pattern) is decoded and searched as text, so `.`, `\\w` and case folding keep
their Unicode meaning. A single line longer than `HUGE_LINE` is searched in pieces (a match straddling
two pieces can be missed), and a pattern spanning a newline matches only within one piece.
"""

from __future__ import annotations

import mmap
import re
import threading
from array import array
from collections.abc import Callable
from dataclasses import dataclass
from typing import AnyStr

from piwork.gui.logs.line_index import BLOCK_SIZE

PIECE = 1 << 23  # 8 MiB: small enough to cancel quickly and report progress often
HUGE_LINE = 1 << 26
MAX_MATCHES = 100_000


@dataclass(frozen=True)
class CompiledSearch:
    """A user's query ready to run: `text` on decoded text, `data` on bytes (lowered first when
    `lower_data`), `data_any_text` when `data` answers like `text` on any bytes, not only ASCII."""

    text: re.Pattern[str]
    data: re.Pattern[bytes] | None
    data_any_text: bool
    lower_data: bool = False


def compile_search(text: str, use_regex: bool, case_sensitive: bool) -> CompiledSearch:
    """Compile the user's query; raises re.error with the parser's message for a bad pattern."""
    flags = re.MULTILINE | (0 if case_sensitive else re.IGNORECASE)
    as_text = re.compile(text if use_regex else re.escape(text), flags)
    if not use_regex:
        if case_sensitive:
            return CompiledSearch(as_text, re.compile(re.escape(text.encode("utf-8"))), True)
        return CompiledSearch(as_text, re.compile(_folded_literal(text)), True, lower_data=True)
    if not text.isascii():
        return CompiledSearch(as_text, None, False)
    try:
        as_data = re.compile(text.encode("ascii"), flags)
    except re.error:  # text-only syntax such as \N{...} or \u....
        return CompiledSearch(as_text, None, False)
    return CompiledSearch(as_text, as_data, False)


def _folded_literal(text: str) -> bytes:
    """A bytes pattern matching `text` in any letter case within data that was passed through
    bytes.lower() (which lowers ASCII letters only)."""
    parts: list[bytes] = []
    for char in text:
        if char.isascii():
            parts.append(re.escape(char.lower().encode("ascii")))
            continue
        variants = sorted({v for v in (char, char.lower(), char.upper(), char.casefold()) if len(v) == 1})
        encoded = [re.escape(v.lower() if v.isascii() else v).encode("utf-8") for v in variants]
        parts.append(encoded[0] if len(encoded) == 1 else b"(?:" + b"|".join(encoded) + b")")
    return b"".join(parts)


class _LineCounter:
    """Line numbers of offsets inside one piece, moving forward only. A gap longer than a block is
    bridged with the index snapshot when it covers that block, else by counting newlines."""

    def __init__(self, piece: bytes, start: int, first_line: int, newlines_before: array[int] | None):
        self.piece = piece
        self.start = start  # file offset of the piece
        self.pos = 0
        self.line = first_line
        self.newlines_before = newlines_before

    def line_at(self, pos: int) -> int:
        snapshot = self.newlines_before
        if snapshot is not None and pos - self.pos > BLOCK_SIZE:
            block = (self.start + pos) // BLOCK_SIZE
            block_start = block * BLOCK_SIZE - self.start
            if block < len(snapshot) and block_start >= self.pos:
                self.pos, self.line = block_start, snapshot[block]
        self.line += self.piece.count(b"\n", self.pos, pos)
        self.pos = pos
        return self.line


def _matching_lines(
    piece: AnyStr, regex: re.Pattern[AnyStr], line_at: Callable[[int], int], limit: int
) -> list[int]:
    """Line numbers (via `line_at(offset)`) of the lines of `piece` that `regex` matches, each once."""
    newline: AnyStr = "\n" if isinstance(piece, str) else b"\n"
    lines: list[int] = []
    pos = 0
    end = len(piece)
    search = regex.search
    find = piece.find
    while len(lines) < limit:
        match = search(piece, pos)
        if match is None:
            break
        start = match.start()
        if start == end and (end == 0 or piece[end - 1 :] == newline):
            break  # an empty match after the last newline: no line there
        lines.append(line_at(start))
        next_newline = find(newline, start)
        if next_newline == -1:
            break
        pos = next_newline + 1
    return lines


def _text_lines(piece: bytes, regex: re.Pattern[str], first_line: int, limit: int) -> list[int]:
    text = piece.decode("utf-8", errors="replace")
    state = [0, first_line]

    def line_at(offset: int) -> int:
        state[1] += text.count("\n", state[0], offset)
        state[0] = offset
        return state[1]

    return _matching_lines(text, regex, line_at, limit)


def _piece_end(view: mmap.mmap, start: int, size: int) -> int:
    """End of the piece starting at `start`: just after the last newline within PIECE bytes (or
    within HUGE_LINE bytes for a very long line), the file's end, or a forced cut."""
    end = min(size, start + PIECE)
    if end == size:
        return end
    cut = view.rfind(b"\n", start, end)
    if cut == -1:
        far = min(size, start + HUGE_LINE)
        cut = view.find(b"\n", end, far)
        if cut == -1:
            return far
    return cut + 1


def search_file_lines(
    path: str,
    query: CompiledSearch,
    size: int,
    on_batch: Callable[[list[int], int], None],
    cancel: threading.Event,
    max_matches: int = MAX_MATCHES,
    newlines_before: array[int] | None = None,
) -> tuple[int, bool]:
    """Search the first `size` bytes of `path`; `newlines_before` is an optional snapshot of the line
    index (newlines before each indexed block). Returns (matching lines, whether `max_matches` hit)."""
    if size <= 0:
        return 0, False
    found = 0
    last_line = -1
    with open(path, "rb") as handle:
        try:
            view = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
        except ValueError:  # emptied since it was opened
            return 0, False
    with view:
        size = min(size, len(view))
        start = 0
        first_line = 0
        while start < size and found < max_matches and not cancel.is_set():
            end = _piece_end(view, start, size)
            piece = view[start:end]
            limit = max_matches - found
            counter = _LineCounter(piece, start, first_line, newlines_before)
            if query.data is not None and (query.data_any_text or piece.isascii()):
                data = piece.lower() if query.lower_data else piece
                lines = _matching_lines(data, query.data, counter.line_at, limit)
            else:
                lines = _text_lines(piece, query.text, first_line, limit)
            first_line = counter.line_at(len(piece))
            if lines and lines[0] == last_line:  # a huge line cut in two matched in both parts
                del lines[0]
            last_line = lines[-1] if lines else last_line
            found += len(lines)
            start = end
            on_batch(lines, start)
    return found, found >= max_matches
