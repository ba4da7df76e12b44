"""Pointing at characters of the chat's rows and sending the mouse events a person's hand would."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QPoint, QPointF, Qt
from PySide6.QtGui import QMouseEvent
from PySide6.QtWidgets import QApplication

from piwork.gui.chat.chat_model import ChatModel
from piwork.gui.chat.chat_view import ChatView

LEFT = Qt.MouseButton.LeftButton
NO_BUTTON = Qt.MouseButton.NoButton


def char_pos(view: ChatView, visible: int, offset: int) -> QPoint:
    """The viewport point at the left edge of the character ``offset`` of row ``visible``'s body, half-way
    down its line (found with the row's laid-out document, as the painter places it)."""
    model = view.model()
    assert isinstance(model, ChatModel)
    chat_row = model.row_at(visible)
    index = model.index(visible, 0)
    geo = view.chat_delegate.geometry(chat_row, view.visualRect(index))
    doc = view.chat_delegate.body_document(chat_row)
    assert doc is not None
    block = doc.findBlock(offset)
    layout = block.layout()
    line = layout.lineForTextPosition(offset - block.position())
    x = line.cursorToX(offset - block.position())
    x = x[0] if isinstance(x, tuple) else x
    y = layout.position().y() + line.y() + line.height() / 2
    return geo.body.topLeft() + QPointF(x + 1, y).toPoint()


def send(
    view: ChatView,
    kind: QEvent.Type,
    pos: QPoint,
    button: Qt.MouseButton,
    held: Qt.MouseButton,
    modifiers: Qt.KeyboardModifier = Qt.KeyboardModifier.NoModifier,
) -> None:
    point = QPointF(pos)
    global_point = QPointF(view.viewport().mapToGlobal(pos))
    event = QMouseEvent(kind, point, global_point, button, held, modifiers)
    QApplication.sendEvent(view.viewport(), event)


def drag(view: ChatView, start: QPoint, end: QPoint, steps: int = 4) -> None:
    send(view, QEvent.Type.MouseButtonPress, start, LEFT, LEFT)
    for i in range(1, steps + 1):
        point = start + (end - start) * i / steps
        send(view, QEvent.Type.MouseMove, point, NO_BUTTON, LEFT)
    send(view, QEvent.Type.MouseButtonRelease, end, LEFT, NO_BUTTON)


def click(view: ChatView, pos: QPoint) -> None:
    send(view, QEvent.Type.MouseButtonPress, pos, LEFT, LEFT)
    send(view, QEvent.Type.MouseButtonRelease, pos, LEFT, NO_BUTTON)


def double_click(view: ChatView, pos: QPoint) -> None:
    click(view, pos)
    send(view, QEvent.Type.MouseButtonDblClick, pos, LEFT, LEFT)
    send(view, QEvent.Type.MouseButtonRelease, pos, LEFT, NO_BUTTON)
