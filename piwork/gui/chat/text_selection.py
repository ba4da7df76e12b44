"""Text selected in the chat: an anchor and a cursor, each a (row, character offset) point.

A row is named by its position in the whole conversation (``ChatModel.position_of_key``: rows are only ever
appended, so positions hold until the rows are replaced), and an offset counts characters of the row's body
document, the text the delegate paints. Nothing is kept per row, so a selection across thousands of rows costs
two points; only the rows at its ends are read from their documents (they were hit-tested, so they were on
screen). The text of a row the selection covers whole comes from the row itself, without building its
document: its source text (what a row with Markdown was rendered from) or, for plain rows, what the document
was filled with.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from PySide6.QtCore import QPoint, QPointF, QRect, Qt
from PySide6.QtGui import QAbstractTextDocumentLayout, QPalette, QTextCharFormat, QTextCursor, QTextDocument

from piwork.gui.chat.rows import ChatRow, RowKind, body_shown
from piwork.gui.chat.tool_views import view_for

END = sys.maxsize  # an offset past every row's end: "to the end of the row"
ROW_SEPARATOR = "\n\n"

# Rows whose body is rendered from Markdown (row_documents.RowDocuments._fill): their source is row.text.
MARKDOWN_KINDS = (RowKind.TEXT, RowKind.USER, RowKind.SKILL, RowKind.NOTICE)


@dataclass(frozen=True, order=True)
class TextPoint:
    row: int  # the row's position in the whole conversation
    offset: int  # characters into the row's body document (END: its end)


@dataclass(frozen=True)
class TextSelection:
    anchor: TextPoint  # where the selection started (stays put while it is extended)
    cursor: TextPoint  # where it ends now (moves with the mouse or the keys)

    @property
    def start(self) -> TextPoint:
        return min(self.anchor, self.cursor)

    @property
    def end(self) -> TextPoint:
        return max(self.anchor, self.cursor)

    @property
    def empty(self) -> bool:
        return self.anchor == self.cursor

    def rows(self) -> range:
        return range(self.start.row, self.end.row + 1)

    def span_in(self, row: int, length: int) -> tuple[int, int] | None:
        """The selected characters [start, end) of the row at ``row`` whose text has ``length`` characters."""
        start, end = self.start, self.end
        if self.empty or not start.row <= row <= end.row:
            return None
        first = min(start.offset, length) if row == start.row else 0
        last = min(end.offset, length) if row == end.row else length
        return (first, last) if last > first else None

    def covers_whole(self, row: int) -> bool:
        """Whether the row is selected from its start to its end (its text is then read from the row)."""
        start, end = self.start, self.end
        return (row > start.row or start.offset == 0) and (row < end.row or end.offset == END)


def whole(first: int, last: int) -> TextSelection:
    """The rows ``first`` to ``last`` (positions) from the start of the first to the end of the last."""
    return TextSelection(TextPoint(first, 0), TextPoint(last, END))


# ---- hit-testing -------------------------------------------------------------------------------


def doc_length(doc: QTextDocument) -> int:
    """The characters an offset can count in ``doc`` (its last block's closing separator left out)."""
    return max(0, doc.characterCount() - 1)


def offset_at(doc: QTextDocument, body: QRect, pos: QPoint) -> int:
    """The character offset in ``doc``, painted with its top-left at ``body``'s, nearest ``pos``: its start
    above the body, its end below it, the nearest character of the line across from ``pos`` otherwise."""
    if pos.y() < body.top():
        return 0
    if pos.y() > body.bottom():
        return doc_length(doc)
    x = min(max(pos.x(), body.left()), body.right()) - body.left()
    hit = doc.documentLayout().hitTest(QPointF(x, pos.y() - body.top()), Qt.HitTestAccuracy.FuzzyHit)
    return min(max(hit, 0), doc_length(doc))


def word_span(doc: QTextDocument, offset: int) -> tuple[int, int]:
    """The word at ``offset`` (what a double-click selects); the character there when it is no word."""
    cursor = QTextCursor(doc)
    cursor.setPosition(min(offset, doc_length(doc)))
    cursor.select(QTextCursor.SelectionType.WordUnderCursor)
    if cursor.hasSelection():
        return cursor.selectionStart(), cursor.selectionEnd()
    return offset, min(offset + 1, doc_length(doc))


def paragraph_span(doc: QTextDocument, offset: int) -> tuple[int, int]:
    """The paragraph (text block) at ``offset``: what a triple-click selects."""
    block = doc.findBlock(min(offset, doc_length(doc)))
    return block.position(), block.position() + max(0, block.length() - 1)


def moved(doc: QTextDocument, offset: int, operation: QTextCursor.MoveOperation) -> int:
    """``offset`` moved by a cursor ``operation`` (a character, a word, a line) within ``doc``."""
    cursor = QTextCursor(doc)
    cursor.setPosition(min(offset, doc_length(doc)))
    cursor.movePosition(operation)
    return cursor.position()


# ---- text of a selection ---------------------------------------------------------------------


def row_plain_text(row: ChatRow) -> str:
    """The text a row's body document is filled with, from the row alone (no document is built). Rows with
    Markdown give their source, which reads as plain text."""
    if row.kind is RowKind.TOOL and row.tool is not None:
        return view_for(row.tool.name).body(row.tool, expanded=not row.collapsed)
    if row.kind is RowKind.NOTICE and row.hint:
        return f"{row.text}\n\n{row.hint}"
    if row.kind is RowKind.ERROR and row.hint:
        return f"{row.text}\n{row.hint}"
    return row.text


def row_markdown(row: ChatRow) -> str:
    """A whole row as Markdown: its source when it was rendered from Markdown, a tool card's body as a code
    block, the text as it is otherwise."""
    if row.kind is RowKind.TOOL:
        return fenced(row_plain_text(row))
    if row.kind is RowKind.NOTICE and row.hint:
        return f"{row.text}\n\n*{row.hint}*"
    return row_plain_text(row)


def row_copy_markdown(row: ChatRow) -> str:
    """A row copied whole as a row (no text selected) as Markdown: what copying it as plain text gives
    (``ChatRow.plain_text``), with its Markdown kept and a tool card's text as a code block."""
    if row.tool is not None:
        return fenced(row.plain_text())
    if row.title and row.kind in (RowKind.NOTICE, RowKind.ERROR):
        return f"**{row.title}**\n\n{row.text}".rstrip()
    return row.plain_text()


def fenced(text: str) -> str:
    """``text`` as a Markdown code block, its fence longer than any run of backticks inside it."""
    longest, run = 0, 0
    for char in text:
        run = run + 1 if char == "`" else 0
        longest = max(longest, run)
    fence = "`" * max(3, longest + 1)
    return f"{fence}\n{text}\n{fence}"


def fragment_plain(doc: QTextDocument, first: int, last: int) -> str:
    cursor = QTextCursor(doc)
    cursor.setPosition(first)
    cursor.setPosition(last, QTextCursor.MoveMode.KeepAnchor)
    return cursor.selection().toPlainText()


def fragment_markdown(row: ChatRow, doc: QTextDocument, first: int, last: int) -> str:
    """Part of a row as Markdown: Qt's Markdown of the fragment for rows rendered from Markdown, the plain
    text otherwise (a tool card's in a code block)."""
    if row.kind in MARKDOWN_KINDS:
        cursor = QTextCursor(doc)
        cursor.setPosition(first)
        cursor.setPosition(last, QTextCursor.MoveMode.KeepAnchor)
        return cursor.selection().toMarkdown().strip("\n")
    text = fragment_plain(doc, first, last)
    return fenced(text) if row.kind is RowKind.TOOL else text


def end_text(
    selection: TextSelection,
    position: int,
    row: ChatRow | None,
    document: Callable[[ChatRow], QTextDocument | None],
    markdown: bool,
) -> str:
    """The selected text of the row at ``position``, one of the selection's two ends (covered whole or in
    part: a part is read from the row's document)."""
    if row is None or row.kind is RowKind.MORE or not body_shown(row):
        return ""
    if selection.covers_whole(position):
        return row_markdown(row) if markdown else row_plain_text(row)
    doc = document(row)
    if doc is None:
        return ""
    span = selection.span_in(position, doc_length(doc))
    if span is None:
        return ""
    if markdown:
        return fragment_markdown(row, doc, *span)
    return fragment_plain(doc, *span)


def whole_rows_text(rows: Iterable[ChatRow], markdown: bool) -> list[str]:
    """The text of rows a selection covers whole, read from the rows alone (no Qt: a worker thread may run
    it for a long selection)."""
    texts = []
    for row in rows:
        if row.kind is RowKind.MORE or not body_shown(row):
            continue
        text = row_markdown(row) if markdown else row_plain_text(row)
        if text:
            texts.append(text)
    return texts


def joined(texts: Iterable[str]) -> str:
    """Rows' texts one after another with a blank line between them (empty ones left out)."""
    return ROW_SEPARATOR.join(text for text in texts if text)


def selection_format(
    doc: QTextDocument, span: tuple[int, int], palette: QPalette
) -> QAbstractTextDocumentLayout.Selection:
    """The characters ``span`` of ``doc`` painted as selected text, in the palette's highlight colours."""
    cursor = QTextCursor(doc)
    cursor.setPosition(span[0])
    cursor.setPosition(span[1], QTextCursor.MoveMode.KeepAnchor)
    selection = QAbstractTextDocumentLayout.Selection()
    selection.cursor = cursor
    fmt = QTextCharFormat()
    fmt.setBackground(palette.brush(QPalette.ColorRole.Highlight))
    fmt.setForeground(palette.brush(QPalette.ColorRole.HighlightedText))
    selection.format = fmt
    return selection
