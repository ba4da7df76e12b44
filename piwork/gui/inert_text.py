"""Text documents and widgets that show what they are given and load nothing else.

Qt's rich text fetches what a text names: ``QTextDocument::loadResource`` reads any local file an image or
style sheet points at (a Markdown ``![x](/dev/zero)`` reads until memory runs out; a FIFO blocks the GUI
thread in ``open()`` for good), decodes ``data:`` URLs, and a QTextBrowser follows a clicked link by reading
its file. Everything the window shows comes from session files, replies, tool output and project files, so
none of it may name something to load. Every rich-text document the window builds is an
:class:`InertTextDocument`; text browsers are :class:`InertTextBrowser`; labels and tooltips that show text
from outside take it as plain text (:func:`plain_label`, :func:`plain_tip`). Images in the chat come only
from a message's own image blocks, decoded in a worker (``chat/row_documents.py``).
"""

from __future__ import annotations

import html
from typing import Any, overload

from PySide6.QtCore import Qt, QUrl
from PySide6.QtGui import QImage, QTextCharFormat, QTextCursor, QTextDocument, QTextImageFormat
from PySide6.QtWidgets import QLabel, QTextBrowser, QWidget

# What an image reference in a text shows instead of the image: the reference itself, as text.
IMAGE_PLACEHOLDER = "[image not loaded: {name}]"


def _blank_image() -> QImage:
    image = QImage(1, 1, QImage.Format.Format_ARGB32)
    image.fill(0)
    return image


class InertTextDocument(QTextDocument):
    """A QTextDocument that never loads a resource: no file, no ``data:`` URL, nothing a text names.

    An image is a blank pixel: given no image, Qt's image handler would load the file by its name itself.
    A resource put in with ``addResource`` is still found (``resource()`` looks there first)."""

    def loadResource(self, type: int, name: QUrl | str) -> Any:
        if type == QTextDocument.ResourceType.ImageResource.value:
            return _blank_image()
        return None


class InertTextBrowser(QTextBrowser):
    """A read-only rich-text view over an :class:`InertTextDocument` that follows no link and loads nothing."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setDocument(InertTextDocument(self))
        self.setOpenLinks(False)
        self.setOpenExternalLinks(False)

    def loadResource(self, type: int, name: QUrl | str) -> Any:
        return None


def plain_label(text: str = "", parent: QWidget | None = None) -> QLabel:
    """A label that shows ``text`` as it is: never parsed as HTML, so never loading what a tag names."""
    label = QLabel(parent)
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setText(text)
    return label


@overload
def plain_tip(text: str) -> str: ...
@overload
def plain_tip(text: None) -> None: ...
def plain_tip(text: str | None) -> str | None:
    """``text`` for a tooltip or a message box, read literally.

    Qt shows such a text as rich text when its first line looks like HTML; a text holding ``<`` or ``&`` is
    therefore escaped into HTML that shows it as it is. Any other text is returned unchanged."""
    if text is None or ("<" not in text and "&" not in text):
        return text
    return "<qt>" + html.escape(text, quote=False).replace("\n", "<br>") + "</qt>"


def replace_images(doc: QTextDocument, start: int = 0) -> int:
    """Replace each image a document's text references (Markdown ``![alt](src)``) from position ``start`` on
    by text naming it, so the document shows no broken image and has nothing to load. Returns how many."""
    spots: list[tuple[int, str]] = []
    block = doc.findBlock(start) if start else doc.begin()
    while block.isValid():
        fragments = block.begin()
        while not fragments.atEnd():
            fragment = fragments.fragment()
            fmt = fragment.charFormat()
            if fmt.isImageFormat():
                name = QTextImageFormat(fmt).name()
                spots.extend((fragment.position() + i, name) for i in range(fragment.length()))
            fragments += 1
        block = block.next()
    if not spots:
        return 0
    cursor = QTextCursor(doc)
    cursor.beginEditBlock()
    for position, name in reversed(spots):  # from the end: earlier positions stay valid
        cursor.setPosition(position)
        cursor.setPosition(position + 1, QTextCursor.MoveMode.KeepAnchor)
        fmt = QTextCharFormat()
        fmt.setFontItalic(True)
        cursor.insertText(IMAGE_PLACEHOLDER.format(name=name or "?"), fmt)
    cursor.endEditBlock()
    return len(spots)
