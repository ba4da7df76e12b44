"""A mouse-wheel click scrolls the chat by the system's lines per click (3 by default) of its text, at any
font size: the step follows the tallest line the chat shows, never less than 24 px."""

from __future__ import annotations

from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QFont, QFontDatabase, QFontMetrics, QWheelEvent
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from piwork.gui.chat.chat_panel import ChatPanel
from piwork.gui.chat.chat_view import ChatView
from piwork.gui.theme import load_theme
from tests.gui.chat.test_opening_a_card import _session


def _wheel_down(view: ChatView) -> None:
    viewport = view.viewport()
    centre = QPointF(viewport.rect().center())
    event = QWheelEvent(
        centre,
        QPointF(viewport.mapToGlobal(centre)),
        QPoint(0, 0),
        QPoint(0, -120),  # one notch towards the user
        Qt.MouseButton.NoButton,
        Qt.KeyboardModifier.NoModifier,
        Qt.ScrollPhase.NoScrollPhase,
        False,
    )
    QApplication.sendEvent(viewport, event)


def test_a_wheel_click_moves_three_lines_of_large_text(qtbot: QtBot) -> None:
    panel = ChatPanel(load_theme("light"))
    qtbot.addWidget(panel)
    panel.resize(1000, 700)
    panel.show()
    qtbot.waitExposed(panel)
    view = panel.view
    font = QFont(view.font())
    font.setPixelSize(28)
    view.setFont(font)
    panel.presenter.show_messages(_session())
    bar = view.verticalScrollBar()
    qtbot.waitUntil(lambda: view.chat_delegate.pending_rows() == 0 and bar.value() == bar.maximum() > 0)
    bar.setValue(0)
    _wheel_down(view)
    line = max(
        QFontMetrics(font).lineSpacing(),
        QFontMetrics(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)).lineSpacing(),
    )
    assert bar.value() == QApplication.wheelScrollLines() * line
    assert line > 24


def test_small_text_keeps_at_least_24_px_a_line(qtbot: QtBot) -> None:
    panel = ChatPanel(load_theme("light"))
    qtbot.addWidget(panel)
    panel.resize(1000, 700)
    panel.show()
    qtbot.waitExposed(panel)
    panel.presenter.show_messages(_session() + _session())
    view = panel.view
    bar = view.verticalScrollBar()
    qtbot.waitUntil(lambda: view.chat_delegate.pending_rows() == 0 and bar.value() == bar.maximum() > 0)
    bar.setValue(0)
    _wheel_down(view)
    assert bar.value() >= QApplication.wheelScrollLines() * 24
