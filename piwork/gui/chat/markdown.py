"""Markdown into a QTextDocument, with fenced code blocks highlighted by Pygments.

Qt's Markdown importer marks every code-block line with ``BlockCodeLanguage``; consecutive marked blocks form
one code block, which is lexed as a whole (so multi-line strings and comments colour correctly) and coloured
with ``QTextCursor.mergeCharFormat``. Lexers and formats are cached: rendering happens once per finished
message, never per streamed delta.
"""

from __future__ import annotations

from functools import lru_cache

from pygments.lexer import Lexer
from pygments.lexers import TextLexer, get_lexer_by_name
from pygments.styles import get_style_by_name
from pygments.token import _TokenType
from pygments.util import ClassNotFound
from PySide6.QtCore import Qt
from PySide6.QtGui import (
    QColor,
    QFont,
    QTextBlock,
    QTextBlockFormat,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
    QTextFormat,
)

LIGHT_STYLE = "default"
DARK_STYLE = "monokai"
MAX_HIGHLIGHT_CHARS = 200_000  # larger code blocks stay plain: colouring them would stall the GUI thread


@lru_cache(maxsize=64)
def lexer_for(language: str) -> Lexer:
    name = language.strip().split()[0].lower() if language.strip() else ""
    if not name:
        return TextLexer(stripnl=False, ensurenl=False)
    try:
        return get_lexer_by_name(name, stripnl=False, ensurenl=False)
    except ClassNotFound:
        return TextLexer(stripnl=False, ensurenl=False)


@lru_cache(maxsize=4)
def _style_formats(style_name: str) -> dict[_TokenType, QTextCharFormat]:
    formats: dict[_TokenType, QTextCharFormat] = {}
    for token, spec in get_style_by_name(style_name):
        fmt = QTextCharFormat()
        if spec["color"]:
            fmt.setForeground(QColor("#" + spec["color"]))
        if spec["bold"]:
            fmt.setFontWeight(QFont.Weight.Bold)
        if spec["italic"]:
            fmt.setFontItalic(True)
        formats[token] = fmt
    return formats


def _format_for(token: _TokenType, formats: dict[_TokenType, QTextCharFormat]) -> QTextCharFormat | None:
    while token is not None:
        fmt = formats.get(token)
        if fmt is not None and fmt.foreground().style() != Qt.BrushStyle.NoBrush:
            return fmt
        token = token.parent
    return None


def _code_language(block: QTextBlock) -> str | None:
    value = block.blockFormat().property(QTextFormat.Property.BlockCodeLanguage)
    return None if value is None else str(value)


def highlight_code_blocks(doc: QTextDocument, dark: bool, background: QColor | None = None) -> int:
    """Colour every code block of ``doc`` (and tint its background); returns how many were highlighted."""
    formats = _style_formats(DARK_STYLE if dark else LIGHT_STYLE)
    count = 0
    block = doc.begin()
    while block.isValid():
        language = _code_language(block)
        if language is None:
            block = block.next()
            continue
        first = block
        lines = []
        while block.isValid() and _code_language(block) == language:
            lines.append(block.text())
            if background is not None:
                _tint(doc, block, background)
            block = block.next()
        code = "\n".join(lines)
        if len(code) <= MAX_HIGHLIGHT_CHARS:
            _colour(doc, first.position(), code, lexer_for(language), formats)
            count += 1
    return count


def _tint(doc: QTextDocument, block: QTextBlock, background: QColor) -> None:
    cursor = QTextCursor(block)
    fmt = QTextBlockFormat()
    fmt.setBackground(background)
    cursor.mergeBlockFormat(fmt)


def _colour(
    doc: QTextDocument, start: int, code: str, lexer: Lexer, formats: dict[_TokenType, QTextCharFormat]
) -> None:
    cursor = QTextCursor(doc)
    cursor.beginEditBlock()
    offset = start
    for token, value in lexer.get_tokens(code):
        length = len(value.encode("utf-16-le")) // 2  # Qt positions count UTF-16 units
        fmt = _format_for(token, formats)
        if fmt is not None and value.strip():
            cursor.setPosition(offset)
            cursor.setPosition(offset + length, QTextCursor.MoveMode.KeepAnchor)
            cursor.mergeCharFormat(fmt)
        offset += length
    cursor.endEditBlock()


def render_markdown(doc: QTextDocument, text: str, dark: bool, code_background: QColor | None = None) -> None:
    """Replace ``doc``'s content with ``text`` rendered as Markdown, code highlighted."""
    doc.setMarkdown(text, QTextDocument.MarkdownFeature.MarkdownDialectGitHub)
    highlight_code_blocks(doc, dark, code_background)
