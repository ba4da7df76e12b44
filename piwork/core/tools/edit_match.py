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


def detect_line_ending(text: str) -> str:
    crlf = text.find("\r\n")
    lf = text.find("\n")
    return "\r\n" if lf != -1 and crlf != -1 and crlf < lf else "\n"


def normalize_to_lf(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def restore_line_endings(text: str, ending: str) -> str:
    return text.replace("\n", "\r\n") if ending == "\r\n" else text


def normalize_fuzzy(text: str) -> str:
    text = unicodedata.normalize("NFKC", text)
    text = "\n".join(js_trim_end(line) for line in text.split("\n"))
    text = _SINGLE_QUOTES.sub("'", text)
    text = _DOUBLE_QUOTES.sub('"', text)
    text = _DASHES.sub("-", text)
    return _SPACES.sub(" ", text)


@dataclass(frozen=True, slots=True)
class _Match:
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


def apply_edits(content: str, edits: list[dict[str, str]], path: str) -> str:
    """The LF-normalised ``content`` with every edit applied; :class:`ToolError` with Pi's texts."""
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
    matches: list[_Match] = []
    for i, (old, new) in enumerate(pairs):
        index, length, _fuzzy = _find(base, old)
        if index == -1:
            raise _not_found(path, i, total)
        count = _occurrences(normalize_fuzzy(base), normalize_fuzzy(old))
        if count > 1:
            raise _duplicate(path, i, total, count)
        matches.append(_Match(i, index, length, new))
    matches.sort(key=lambda m: m.index)
    for previous, current in itertools.pairwise(matches):
        if previous.index + previous.length > current.index:
            raise ToolError(
                f"edits[{previous.edit_index}] and edits[{current.edit_index}] overlap in {path}. "
                "Merge them into one edit or target disjoint regions."
            )
    result = _preserving_unchanged_lines(content, base, matches) if fuzzy_mode else _replace(base, matches)
    if result == content:
        if total == 1:
            raise ToolError(
                f"No changes made to {path}. The replacement produced identical content. This might "
                "indicate an issue with special characters or the text not existing as expected."
            )
        raise ToolError(f"No changes made to {path}. The replacements produced identical content.")
    return result


def _replace(text: str, matches: list[_Match], offset: int = 0) -> str:
    for m in reversed(matches):
        start = m.index - offset
        text = text[:start] + m.new_text + text[start + m.length :]
    return text


def _preserving_unchanged_lines(original: str, base: str, matches: list[_Match]) -> str:
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
    groups: list[tuple[int, int, list[_Match]]] = []
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
    out: list[str] = []
    line_index = 0
    for first, last, members in groups:
        out.extend(original_lines[line_index:first])
        start, end = spans[first][0], spans[last - 1][1]
        out.append(_replace(base[start:end], members, start))
        line_index = last
    out.extend(original_lines[line_index:])
    return "".join(out)
