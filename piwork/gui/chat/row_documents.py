"""The text documents and image thumbnails chat rows are drawn from, cached by row revision and width.

A streaming row's document is appended to (never re-set) until the message ends; a long finished message is
built as Markdown in slices by :class:`MarkdownRenderer` while its plain text shows. The cache is bounded.
Image thumbnails are decoded (base64, then the image format) and scaled in a worker thread; the row gets
them, and its height, when they are ready.
"""

from __future__ import annotations

import asyncio
import base64
from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING

import shiboken6
from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QFont, QFontDatabase, QImage, QPixmap, QTextCharFormat, QTextCursor, QTextDocument
from PySide6.QtWidgets import QWidget

from piwork.gui.background import BackgroundTasks
from piwork.gui.chat.code_fences import person_markdown
from piwork.gui.chat.markdown import render_markdown
from piwork.gui.chat.render_jobs import MarkdownRenderer
from piwork.gui.chat.rows import ChatRow, RowKind
from piwork.gui.chat.tool_views import view_for
from piwork.gui.inert_text import InertTextDocument

if TYPE_CHECKING:
    from piwork.gui.theme import Theme

IMAGE_MAX_HEIGHT = 160
DOC_CACHE_SIZE = 400
ASYNC_RENDER_CHARS = 8000  # longer finished messages are rendered in slices (render_jobs)
_MARKDOWN_ROWS = (RowKind.TEXT, RowKind.USER)  # a message's text: rendered as Markdown once it is whole


def markdown_source(row: ChatRow) -> str:
    """The Markdown a message row is rendered from: a person's lines are kept as typed."""
    return person_markdown(row.text) if row.kind is RowKind.USER else row.text


@dataclass
class _Doc:
    doc: QTextDocument
    revision: int
    width: int
    streamed: int  # characters of row.text appended so far (streaming rows only)
    final: bool


class RowDocuments(QObject):
    rendered = Signal(int)  # row key whose final document or image thumbnails are now ready

    def __init__(self, widget: QWidget, theme: Theme) -> None:
        super().__init__(widget)
        self._widget = widget
        self.theme = theme
        self.renderer = MarkdownRenderer(self)
        self.renderer.finished.connect(self._on_rendered)
        self._docs: OrderedDict[int, _Doc] = OrderedDict()
        self._pixmaps: dict[int, list[QPixmap]] = {}
        self._decoding: set[int] = set()  # row keys whose images a worker thread is decoding
        self._tasks = BackgroundTasks()
        self._mono = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)

    def set_theme(self, theme: Theme) -> None:
        self.theme = theme
        self.renderer.cancel_all()
        self._docs.clear()

    def forget(self, row: ChatRow) -> None:
        self._docs.pop(row.key, None)
        self._pixmaps.pop(row.key, None)
        self._decoding.discard(row.key)

    def holds(self, row: ChatRow) -> bool:
        """Whether a document of ``row`` was built and is still kept."""
        return row.key in self._docs

    def document(self, row: ChatRow, width: int) -> QTextDocument:
        """The laid-out body of ``row`` at ``width``, from the cache when it is still current."""
        entry = self._docs.get(row.key)
        if entry is not None:
            self._docs.move_to_end(row.key)
        if row.kind in _MARKDOWN_ROWS and not row.streaming and len(row.text) > ASYNC_RENDER_CHARS:
            return self._long_text_doc(row, entry, width)
        if entry is not None:
            if entry.revision == row.revision and (entry.width == width or entry.final):
                if entry.width != width:  # the same text at another width: lay it out again, no re-render
                    entry.doc.setTextWidth(width)
                    entry.width = width
                return entry.doc
            if row.streaming and not entry.final and entry.streamed <= len(row.text):
                self._append_streamed(entry, row, width)
                return entry.doc
        doc = InertTextDocument()
        doc.setDocumentMargin(0)
        doc.setDefaultFont(self._widget.font())
        self._fill(doc, row)
        doc.setTextWidth(width)
        self._remember(row, _Doc(doc, row.revision, width, len(row.text), not row.streaming))
        return doc

    def _long_text_doc(self, row: ChatRow, entry: _Doc | None, width: int) -> QTextDocument:
        """A long finished message: its Markdown is built in slices; meanwhile the plain text shows."""
        if entry is not None and entry.final and entry.revision == row.revision:
            if entry.width != width:
                entry.doc.setTextWidth(width)
                entry.width = width
            return entry.doc
        if not self.renderer.pending(row.key, row.revision):
            font = self._widget.font()
            source = markdown_source(row)
            self.renderer.start(
                row.key, row.revision, source, width, font, self.theme.dark, self.theme.accent("code")
            )
        if entry is not None and not entry.final and entry.streamed <= len(row.text):
            self._append_streamed(entry, row, width)
            return entry.doc
        doc = InertTextDocument()
        doc.setDocumentMargin(0)
        doc.setDefaultFont(self._widget.font())
        doc.setPlainText(row.text)
        doc.setTextWidth(width)
        self._remember(row, _Doc(doc, row.revision, width, len(row.text), False))
        return doc

    def _remember(self, row: ChatRow, entry: _Doc) -> None:
        self._docs[row.key] = entry
        while len(self._docs) > DOC_CACHE_SIZE:
            self._docs.popitem(last=False)

    def _on_rendered(self, key: int, revision: int, doc: QTextDocument) -> None:
        self._docs[key] = _Doc(doc, revision, int(doc.textWidth()), 0, True)
        self.rendered.emit(key)

    def _append_streamed(self, entry: _Doc, row: ChatRow, width: int) -> None:
        chunk = row.text[entry.streamed :]
        if chunk:
            cursor = QTextCursor(entry.doc)
            cursor.movePosition(QTextCursor.MoveOperation.End)
            cursor.insertText(chunk)
        if entry.width != width:
            entry.doc.setTextWidth(width)
        entry.streamed = len(row.text)
        entry.revision = row.revision
        entry.width = width

    def _colour_diff(self, doc: QTextDocument) -> None:
        """Added rows (``+NN``) in the ok colour, removed ones (``-NN``) in the fail colour."""
        colours = {"+": self.theme.accent("ok"), "-": self.theme.accent("fail")}
        block = doc.begin()
        while block.isValid():
            text = block.text()
            colour = colours.get(text[:1]) if text[1:2].isspace() or text[1:2].isdigit() else None
            if colour is not None:
                cursor = QTextCursor(block)
                cursor.select(QTextCursor.SelectionType.BlockUnderCursor)
                fmt = QTextCharFormat()
                fmt.setForeground(colour)
                cursor.mergeCharFormat(fmt)
            block = block.next()

    def _fill(self, doc: QTextDocument, row: ChatRow) -> None:
        dark = self.theme.dark
        if row.kind in _MARKDOWN_ROWS and not row.streaming:
            render_markdown(doc, markdown_source(row), dark, self.theme.accent("code"))
        elif row.kind is RowKind.TOOL and row.tool is not None:
            doc.setDefaultFont(self._mono)
            view = view_for(row.tool.name)
            doc.setPlainText(view.body(row.tool, expanded=not row.collapsed))
            if view.diff_body(row.tool):
                self._colour_diff(doc)
        elif row.kind is RowKind.THINKING:
            font = QFont(self._widget.font())
            font.setItalic(True)
            doc.setDefaultFont(font)
            doc.setPlainText(row.text)
        elif row.kind is RowKind.SKILL:
            render_markdown(doc, row.text, dark, self.theme.accent("code"))
        elif row.kind is RowKind.NOTICE and not row.streaming:
            render_markdown(doc, row.text + (f"\n\n*{row.hint}*" if row.hint else ""), dark)
        elif row.kind is RowKind.ERROR:
            doc.setPlainText(row.text)
            if row.hint:
                cursor = QTextCursor(doc)
                cursor.movePosition(QTextCursor.MoveOperation.End)
                cursor.insertBlock()
                fmt = cursor.charFormat()
                fmt.setFontItalic(True)
                cursor.insertText(row.hint, fmt)
        else:
            doc.setPlainText(row.text)

    def pixmaps(self, row: ChatRow) -> list[QPixmap]:
        """The row's thumbnails; none until a worker thread has decoded them (``rendered`` says when)."""
        if not row.images:
            return []
        cached = self._pixmaps.get(row.key)
        if cached is not None:
            return cached
        if row.key not in self._decoding:
            self._decoding.add(row.key)
            self._tasks.spawn(self._decode(row.key, list(row.images)))
        return []

    async def _decode(self, key: int, images: list[tuple[str, str]]) -> None:
        decoded = await asyncio.to_thread(decode_thumbnails, images)
        if not shiboken6.isValid(self) or key not in self._decoding:
            return  # the view went away, or the row was forgotten, meanwhile
        self._decoding.discard(key)
        self._pixmaps[key] = [QPixmap.fromImage(image) for image in decoded]
        self.rendered.emit(key)


def decode_thumbnails(images: list[tuple[str, str]]) -> list[QImage]:
    """Base64 images (mime type, data) as QImages at most IMAGE_MAX_HEIGHT tall; unreadable ones left out.
    QImage, unlike QPixmap, may be made in any thread."""
    thumbnails = []
    for _mime, data in images:
        image = QImage()
        try:
            image.loadFromData(base64.b64decode(data, validate=False))
        except (ValueError, TypeError):
            image = QImage()
        if image.isNull():
            continue
        if image.height() > IMAGE_MAX_HEIGHT:
            image = image.scaledToHeight(IMAGE_MAX_HEIGHT, Qt.TransformationMode.SmoothTransformation)
        thumbnails.append(image)
    return thumbnails
