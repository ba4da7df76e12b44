"""A changed file's diff rows in syntax colour, made in a worker thread (pure Python, no Qt).

Each side of the file (then and now) is lexed whole with the Pygments lexer its name picks, so strings and
comments spanning lines colour as in an editor; each diff row takes the spans of its line on its side
(``-`` rows the old side, context and ``+`` rows the new). The colours are the chat's code styles
(``LIGHT_STYLE``/``DARK_STYLE``), as RGB triples the delegate paints.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from pygments.lexer import Lexer
from pygments.lexers import TextLexer, get_lexer_for_filename
from pygments.styles import get_style_by_name
from pygments.token import _TokenType
from pygments.util import ClassNotFound

from piwork.core.checkpoints import ChangeSet, DiffLine, FileChange
from piwork.gui.chat.markdown import DARK_STYLE, LIGHT_STYLE

MAX_COLOURED_CHARS = 400_000  # a longer side stays plain


@dataclass(frozen=True)
class Span:
    text: str
    rgb: tuple[int, int, int] | None
    bold: bool = False
    italic: bool = False


Spans = tuple[Span, ...]


@dataclass(frozen=True)
class ColourStyle:
    colour: tuple[int, int, int] | None
    bold: bool
    italic: bool


@lru_cache(maxsize=4)
def _styles(style_name: str) -> dict[_TokenType, ColourStyle]:
    found = {}
    for token, spec in get_style_by_name(style_name):
        colour = spec["color"]
        rgb = (int(colour[0:2], 16), int(colour[2:4], 16), int(colour[4:6], 16)) if colour else None
        found[token] = ColourStyle(rgb, bool(spec["bold"]), bool(spec["italic"]))
    return found


def _style_of(token: _TokenType, styles: dict[_TokenType, ColourStyle]) -> ColourStyle | None:
    while token is not None:
        style = styles.get(token)
        if style is not None and style.colour is not None:
            return style
        token = token.parent
    return None


@lru_cache(maxsize=128)
def lexer_for_path(path: str) -> Lexer:
    try:
        return get_lexer_for_filename(path.rsplit("/", 1)[-1], stripnl=False, ensurenl=False)
    except ClassNotFound:
        return TextLexer(stripnl=False, ensurenl=False)


def line_spans(path: str, text: str, dark: bool) -> list[Spans]:
    """The coloured spans of each line of ``text`` (split at ``\\n``; a ``\\r`` before it dropped)."""
    if len(text) > MAX_COLOURED_CHARS:
        return [(Span(line.rstrip("\r"), None),) for line in text.split("\n")]
    styles = _styles(DARK_STYLE if dark else LIGHT_STYLE)
    lines: list[list[Span]] = [[]]
    for token, value in lexer_for_path(path).get_tokens(text):
        style = _style_of(token, styles)
        parts = value.split("\n")
        for number, part in enumerate(parts):
            if number:
                lines.append([])
            if part:
                lines[-1].append(
                    Span(part, style.colour, style.bold, style.italic) if style else Span(part, None)
                )
    return [_strip_cr(spans) for spans in lines]


def _strip_cr(spans: list[Span]) -> Spans:
    if spans and spans[-1].text.endswith("\r"):
        last = spans[-1]
        trimmed = last.text[:-1]
        spans = [*spans[:-1], *([Span(trimmed, last.rgb, last.bold, last.italic)] if trimmed else [])]
    return tuple(spans)


@dataclass(frozen=True)
class DiffRow:
    hunk: int  # index of the hunk the row belongs to (-1: the file's note)
    line: DiffLine | None  # None: the hunk's header row (or the file's note)
    text: str  # what a header or note row says
    spans: Spans | None = None


@dataclass(frozen=True)
class DiffRows:
    """A file's rows as the diff view lists them, made in a worker."""

    change: FileChange
    rows: tuple[DiffRow, ...]
    headers: tuple[int, ...]  # the row of each hunk's header
    widest: int  # characters of the longest row


def diff_rows(changes: ChangeSet, change: FileChange, dark: bool) -> DiffRows:
    """In a worker: ``change``'s note (if any), then each hunk's header and lines, in syntax colour."""
    texts = changes.texts.get(change.path)
    old = line_spans(change.path, texts[0], dark) if texts and change.hunks else []
    new = line_spans(change.path, texts[1], dark) if texts and change.hunks else []
    rows: list[DiffRow] = []
    headers: list[int] = []
    if change.note is not None:
        rows.append(DiffRow(-1, None, change.note[:1].upper() + change.note[1:] + "."))
    for h, hunk in enumerate(change.hunks):
        headers.append(len(rows))
        rows.append(DiffRow(h, None, hunk.header))
        rows.extend(DiffRow(h, line, line.text, _row_spans(line, old, new)) for line in hunk.rows)
    widest = max((len(r.text) + 4 for r in rows), default=0)
    return DiffRows(change, tuple(rows), tuple(headers), widest)


def _row_spans(row: DiffLine, old: list[Spans], new: list[Spans]) -> Spans | None:
    if row.kind == "-" and row.old_no is not None and row.old_no <= len(old):
        return old[row.old_no - 1]
    if row.kind in (" ", "+") and row.new_no is not None and row.new_no <= len(new):
        return new[row.new_no - 1]
    return None
