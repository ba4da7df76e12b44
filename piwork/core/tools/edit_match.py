"""Matching and applying ``edit`` replacements, exactly or in a whitespace/quote-tolerant space.

All edits are matched against the original text. If any edit has no exact match the whole call works
in *fuzzy space* (NFKC, trailing whitespace stripped per line, typographic quotes, dashes and spaces
made ASCII); only the lines a replacement touches are then taken from the normalised text, so the
rest of the file keeps its original bytes.
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from dataclasses import dataclass

from piwork.core.jscompat import js_trim_end, utf16_len
from piwork.core.tools.base import ToolError

_SINGLE_QUOTES = re.compile("[\u2018\u2019\u201a\u201b]")
_DOUBLE_QUOTES = re.compile("[\u201c\u201d\u201e\u201f]")
_DASHES = re.compile("[\u2010\u2011\u2012\u2013\u2014\u2015\u2212]")
_SPACES = re.compile("[\u00a0\u2002-\u200a\u202f\u205f\u3000]")
_LINES_WITH_ENDINGS = re.compile(r"[^\n]*\n|[^\n]+")


def normalize_to_lf(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def normalize_fuzzy(text: str) -> str:
    text = unicodedata.normalize("NFKC", text)
    text = "\n".join(js_trim_end(line) for line in text.split("\n"))
    text = _SINGLE_QUOTES.sub("'", text)
    text = _DOUBLE_QUOTES.sub('"', text)
    text = _DASHES.sub("-", text)
    return _SPACES.sub(" ", text)


@dataclass(frozen=True, slots=True)
class Replacement:
    """``length`` characters at ``index`` of the LF-normalised text become ``new_text``."""

    edit_index: int
    index: int
    length: int
    new_text: str


def _find(content: str, old: str) -> tuple[int, int, bool]:
    """(index, length, fuzzy) of ``old`` in ``content``; index -1 when absent."""
    exact = content.find(old)
    if exact != -1:
        return exact, len(old), False
    fuzzy_old = normalize_fuzzy(old)
    fuzzy = normalize_fuzzy(content).find(fuzzy_old)
    return (fuzzy, len(fuzzy_old), True) if fuzzy != -1 else (-1, 0, False)


def _occurrences(text: str, needle: str) -> int:
    """Occurrences as Pi counts them (``text.split(needle).length - 1``, in UTF-16 units for "")."""
    if needle:
        return text.count(needle)
    return utf16_len(text) - 1  # an empty needle (e.g. only spaces, trimmed away) "occurs" everywhere


def _not_found(path: str, i: int, total: int) -> ToolError:
    if total == 1:
        return ToolError(
            f"Could not find the exact text in {path}. The old text must match exactly including all "
            "whitespace and newlines."
        )
    return ToolError(
        f"Could not find edits[{i}] in {path}. The oldText must match exactly including all whitespace "
        "and newlines."
    )


def _duplicate(path: str, i: int, total: int, count: int) -> ToolError:
    if total == 1:
        return ToolError(
            f"Found {count} occurrences of the text in {path}. The text must be unique. Please provide "
            "more context to make it unique."
        )
    return ToolError(
        f"Found {count} occurrences of edits[{i}] in {path}. Each oldText must be unique. Please provide "
        "more context to make it unique."
    )


def apply_edits(content: str, edits: list[dict[str, str]], path: str) -> tuple[str, list[Replacement]]:
    """The LF-normalised ``content`` with every edit applied, and the replacements (sorted, disjoint,
    in ``content``'s offsets) that did it; :class:`ToolError` with Pi's texts."""
    pairs = [(normalize_to_lf(e["oldText"]), normalize_to_lf(e["newText"])) for e in edits]
    total = len(pairs)
    for i, (old, _new) in enumerate(pairs):
        if not old:
            raise ToolError(
                f"oldText must not be empty in {path}."
                if total == 1
                else f"edits[{i}].oldText must not be empty in {path}."
            )
    fuzzy_mode = any(_find(content, old)[2] for old, _new in pairs)
    base = normalize_fuzzy(content) if fuzzy_mode else content
    matches: list[Replacement] = []
    for i, (old, new) in enumerate(pairs):
        index, length, _fuzzy = _find(base, old)
        if index == -1:
            raise _not_found(path, i, total)
        count = _occurrences(normalize_fuzzy(base), normalize_fuzzy(old))
        if count > 1:
            raise _duplicate(path, i, total, count)
        matches.append(Replacement(i, index, length, new))
    matches.sort(key=lambda m: m.index)
    for previous, current in itertools.pairwise(matches):
        if previous.index + previous.length > current.index:
            raise ToolError(
                f"edits[{previous.edit_index}] and edits[{current.edit_index}] overlap in {path}. "
                "Merge them into one edit or target disjoint regions."
            )
    replacements = _widened_to_lines(content, base, matches) if fuzzy_mode else matches
    result = _replace(content, replacements)
    if result == content:
        if total == 1:
            raise ToolError(
                f"No changes made to {path}. The replacement produced identical content. This might "
                "indicate an issue with special characters or the text not existing as expected."
            )
        raise ToolError(f"No changes made to {path}. The replacements produced identical content.")
    return result, replacements


def _replace(text: str, matches: list[Replacement], offset: int = 0) -> str:
    for m in reversed(matches):
        start = m.index - offset
        text = text[:start] + m.new_text + text[start + m.length :]
    return text


def _widened_to_lines(original: str, base: str, matches: list[Replacement]) -> list[Replacement]:
    """Fuzzy-space matches as replacements of ``original``'s whole touched lines, so untouched lines
    keep their original text."""
    original_lines = _LINES_WITH_ENDINGS.findall(original)
    spans: list[tuple[int, int]] = []
    pos = 0
    for line in _LINES_WITH_ENDINGS.findall(base):
        spans.append((pos, pos + len(line)))
        pos += len(line)
    if len(original_lines) != len(spans):
        raise ToolError(
            "Cannot preserve unchanged lines because the base content has a different line count."
        )
    groups: list[tuple[int, int, list[Replacement]]] = []
    for m in matches:
        start_line = next((i for i, (s, e) in enumerate(spans) if s <= m.index < e), -1)
        if start_line == -1:
            raise ToolError("Replacement range is outside the base content.")
        end_line = start_line
        while end_line < len(spans) and spans[end_line][1] < m.index + m.length:
            end_line += 1
        if end_line >= len(spans):
            raise ToolError("Replacement range is outside the base content.")
        end_line += 1
        if groups and start_line < groups[-1][1]:
            first, last, members = groups[-1]
            groups[-1] = (first, max(last, end_line), [*members, m])
        else:
            groups.append((start_line, end_line, [m]))
    widened: list[Replacement] = []
    original_starts = [0]
    for line in original_lines:
        original_starts.append(original_starts[-1] + len(line))
    for first, last, members in groups:
        start, end = spans[first][0], spans[last - 1][1]
        widened.append(
            Replacement(
                members[0].edit_index,
                original_starts[first],
                original_starts[last] - original_starts[first],
                _replace(base[start:end], members, start),
            )
        )
    return widened


def apply_to_original(original: str, replacements: list[Replacement]) -> str:
    """Replacements matched in ``normalize_to_lf(original)`` applied to ``original`` itself.

    Text outside the replaced ranges keeps its bytes, line endings included; a line break in new text
    takes the ending of the line where its range starts. Only a CRLF changes length when normalised,
    so an offset maps back by adding the CRLFs before it (a range covering that LF covers the CRLF).
    """
    crlfs = [m.start() for m in re.finditer("\r\n", original)]
    lone_cr_only = "\n" not in original and "\r" in original

    def to_original(offset: int) -> int:
        # the n-th CRLF (0-based) at original position p has its LF at p - n in the normalised text
        low, high = 0, len(crlfs)
        while low < high:
            mid = (low + high) // 2
            if crlfs[mid] - mid < offset:
                low = mid + 1
            else:
                high = mid
        return offset + low

    def ending_at(offset: int) -> str:
        line_feed = original.find("\n", offset)
        if line_feed == -1:
            line_feed = original.rfind("\n", 0, offset + 1)
        if line_feed == -1:
            return "\r" if lone_cr_only else "\n"
        return "\r\n" if line_feed > 0 and original[line_feed - 1] == "\r" else "\n"

    parts: list[str] = []
    ends_with_cr = False

    def push(part: str) -> None:
        nonlocal ends_with_cr
        if not part:
            return
        # a CR before a seam and an LF after it would merge into one CRLF: keep them two line breaks
        if ends_with_cr and part[0] == "\n":
            parts.append("\n")
        parts.append(part)
        ends_with_cr = part[-1] == "\r"

    position = 0
    for replacement in replacements:
        start = to_original(replacement.index)
        push(original[position:start])
        ending = ending_at(start)
        push(replacement.new_text if ending == "\n" else replacement.new_text.replace("\n", ending))
        position = to_original(replacement.index + replacement.length)
    push(original[position:])
    return "".join(parts)
