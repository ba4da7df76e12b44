"""Markdown into a QTextDocument, with fenced code blocks highlighted by Pygments.

Qt's Markdown importer marks every code-block line with ``BlockCodeLanguage``; consecutive marked blocks form
one code block, which is lexed as a whole (so multi-line strings and comments colour correctly) and coloured
with ``QTextCursor.mergeCharFormat``. Lexers and formats are cached: rendering happens once per finished
message, never per streamed delta.
"""

from __future__ import annotations

from dataclasses import dataclass
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

from piwork.gui.inert_text import replace_images

LIGHT_STYLE = "default"
DARK_STYLE = "monokai"
MAX_HIGHLIGHT_CHARS = 200_000  # larger code blocks stay plain: colouring them would stall the GUI thread
# No HTML: a reply's "List<String>" or "<details>" is text to read; as HTML it (and all after it) vanished,
# and a tag could name a file to load.
MARKDOWN_FEATURES = (
    QTextDocument.MarkdownFeature.MarkdownDialectGitHub | QTextDocument.MarkdownFeature.MarkdownNoHTML
)


COMMON_LANGUAGES = (
    "python",
    "bash",
    "javascript",
    "typescript",
    "json",
    "diff",
    "rust",
    "go",
    "c",
    "cpp",
    "java",
)


def warm_up_lexers() -> None:
    """Import the lexers of common languages ahead of time (a first import costs tens of ms).

    Pure Python and thread-safe: the app runs it in a worker thread (``asyncio.to_thread``) at start-up.
    The colour styles' modules too (the first code block coloured imported them on the GUI thread)."""
    for language in COMMON_LANGUAGES:
        lexer_for(language)
    for style in (LIGHT_STYLE, DARK_STYLE):
        get_style_by_name(style)


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


@dataclass(frozen=True)
class CodeBlock:
    start: int  # document position of the first character
    code: str
    language: str
    block_numbers: tuple[int, ...]


def code_blocks(doc: QTextDocument) -> list[CodeBlock]:
    """Every code block of ``doc`` (consecutive blocks marked with the same code language)."""
    found: list[CodeBlock] = []
    block = doc.begin()
    while block.isValid():
        language = _code_language(block)
        if language is None:
            block = block.next()
            continue
        first = block
        lines: list[str] = []
        numbers: list[int] = []
        while block.isValid() and _code_language(block) == language:
            lines.append(block.text())
            numbers.append(block.blockNumber())
            block = block.next()
        found.append(CodeBlock(first.position(), "\n".join(lines), language, tuple(numbers)))
    return found


def colour_code_block(
    doc: QTextDocument, code_block: CodeBlock, dark: bool, background: QColor | None
) -> bool:
    """Tint and colour one code block; False when it is too large to colour."""
    if background is not None:
        for number in code_block.block_numbers:
            _tint(doc, doc.findBlockByNumber(number), background)
    if len(code_block.code) > MAX_HIGHLIGHT_CHARS:
        return False
    formats = _style_formats(DARK_STYLE if dark else LIGHT_STYLE)
    _colour(doc, code_block.start, code_block.code, lexer_for(code_block.language), formats)
    return True


def highlight_code_blocks(doc: QTextDocument, dark: bool, background: QColor | None = None) -> int:
    """Colour every code block of ``doc`` (and tint its background); returns how many were highlighted."""
    return sum(1 for block in code_blocks(doc) if colour_code_block(doc, block, dark, background))


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
    """Replace ``doc``'s content with ``text`` rendered as Markdown, code highlighted, images referenced by the
    text named instead of shown. ``doc`` should be an InertTextDocument (it never loads what a text names)."""
    doc.setMarkdown(text, MARKDOWN_FEATURES)
    if "![" in text:  # Markdown's only image syntax (with HTML off); most texts have none to look for
        replace_images(doc)
    _soften_headings(doc)
    highlight_code_blocks(doc, dark, code_background)


# Qt's Markdown headings are sized for pages (h1 twice the text); in a chat row a step above the
# text reads better.
_HEADING_SCALE = {1: 1.35, 2: 1.2, 3: 1.1}


def _soften_headings(doc: QTextDocument) -> None:
    base = doc.defaultFont().pointSizeF()
    if base <= 0:
        return
    changes: list[tuple[int, int, QTextCharFormat]] = []
    block = doc.begin()
    while block.isValid():
        level = block.blockFormat().headingLevel()
        fragments = block.begin()
        while level > 0 and not fragments.atEnd():
            fragment = fragments.fragment()
            fmt = fragment.charFormat()
            fmt.clearProperty(QTextFormat.Property.FontSizeAdjustment)
            fmt.setFontPointSize(base * _HEADING_SCALE.get(level, 1.0))
            fmt.setFontWeight(QFont.Weight.Bold)  # Qt bolds only the first fragment of a heading
            changes.append((fragment.position(), fragment.length(), fmt))
            fragments += 1
        block = block.next()
    cursor = QTextCursor(doc)
    for position, length, fmt in changes:  # collected first: changing formats re-splits fragments
        cursor.setPosition(position)
        cursor.setPosition(position + length, QTextCursor.MoveMode.KeepAnchor)
        cursor.setCharFormat(fmt)
