"""Collecting grep's output lines as a search engine reports them, with the match limit applied.

An engine reports every line it would print, in order: matching lines and the context lines around
them (each line once, overlapping windows merged, as ripgrep's ``--context`` does). The collector
formats them (``rel:n: text`` for a match, ``rel-n- text`` for context), stops at the match limit
after the last allowed match's trailing context, and says the limit was reached only once a further
match proves that results were cut off. Lines past the byte cap are counted but not kept.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable

from piwork.core.truncate import DEFAULT_MAX_BYTES, TRUNCATED_LINE_SUFFIX, truncate_line, utf8_len

_LINE_TERMINATOR = re.compile(r"\r?\n?\Z")


def cap_line(text: str) -> tuple[str, bool]:
    """Cap at 500 UTF-16 units without leaving half of a surrogate pair behind."""
    capped = truncate_line(text)
    if not capped.was_truncated:
        return capped.text, False
    kept = capped.text[: -len(TRUNCATED_LINE_SUFFIX)]
    if kept and "\ud800" <= kept[-1] <= "\udbff":
        kept = kept[:-1]
    return kept + TRUNCATED_LINE_SUFFIX, True


def path_formatter(search_path: str, is_dir: bool) -> Callable[[str], str]:
    """How a reported path is shown: relative to the searched folder, else the file's base name."""

    def show(path: str) -> str:
        if is_dir:
            relative = os.path.relpath(os.path.join(search_path, path), search_path)
            if relative != "." and not relative.startswith(".."):
                return relative.replace(os.sep, "/")
        return os.path.basename(path)

    return show


class GrepCollector:
    """Receives reported lines; ``done`` turns true once no further line can change the output."""

    def __init__(self, limit: int, context: int, show_path: Callable[[str], str]) -> None:
        self.limit = limit
        self.context = context
        self._show_path = show_path
        self.lines: list[str] = []
        self.match_count = 0
        self.limit_reached = False
        self.lines_truncated = False
        self.done = False
        self.total_lines = 0
        self._total_bytes = 0  # with one newline counted after every line
        self._limit_hit = False
        self._trailing_end = 0
        self._last_file: str | None = None

    @property
    def total_bytes(self) -> int:
        """UTF-8 size of every line joined by newlines, kept or not."""
        return max(0, self._total_bytes - 1)

    def _push(self, path: str, number: int, text: str, is_match: bool) -> None:
        self._last_file = path
        shown, cut = cap_line(_LINE_TERMINATOR.sub("", text, count=1))
        self.lines_truncated = self.lines_truncated or cut
        rel = self._show_path(path)
        line = f"{rel}:{number}: {shown}" if is_match else f"{rel}-{number}- {shown}"
        if self._total_bytes - 1 <= DEFAULT_MAX_BYTES:
            self.lines.append(line)
        self._total_bytes += utf8_len(line) + 1
        self.total_lines += 1

    def add(self, path: str, number: int, text: str, is_match: bool) -> None:
        """One reported line (``text`` may still end with its line terminator)."""
        if self.done:
            return
        if not self._limit_hit:
            self._push(path, number, text, is_match)
            if is_match:
                self.match_count += 1
                if self.match_count >= self.limit:
                    self._limit_hit = True
                    self._trailing_end = number + self.context
            return
        in_window = path == self._last_file and number <= self._trailing_end
        if in_window:
            self._push(path, number, text, False)  # a match in the trailing context reads as context
        if is_match:
            self.limit_reached = True
        if self.limit_reached and not (in_window and number < self._trailing_end):
            self.done = True
