"""The chat's scroll bar shows where the view is: its handle stands out from the conversation's background,
at the bottom of the bar when the newest message is shown and at the top when the first one is."""

from __future__ import annotations

import pytest
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QScrollBar
from pytestqt.qtbot import QtBot

from piwork.gui.chat.chat_panel import ChatPanel
from piwork.gui.theme import load_theme
from tests.gui.chat.test_opening_a_card import _session


def _handle_span(bar: QScrollBar, background: int) -> tuple[int, int]:
    """First and last pixel rows of the bar's middle column that stand out from the chat's background."""
    image = bar.grab().toImage()
    x = image.width() // 2
    rows = [y for y in range(image.height()) if abs(image.pixelColor(x, y).lightness() - background) > 60]
    assert rows, "no scroll bar handle stands out from the background"
    return rows[0], rows[-1]


@pytest.mark.parametrize("name", ["light", "dark"])
def test_the_handle_shows_where_the_view_is(qtbot: QtBot, name: str) -> None:
    theme = load_theme(name)
    panel = ChatPanel(theme)
    qtbot.addWidget(panel)
    panel.resize(1000, 700)
    panel.show()
    qtbot.waitExposed(panel)
    panel.presenter.show_messages(_session() + _session())
    view = panel.view
    bar = view.verticalScrollBar()
    qtbot.waitUntil(lambda: view.chat_delegate.pending_rows() == 0 and bar.value() == bar.maximum() > 0)
    background = theme.palette.color(QPalette.ColorRole.Base).lightness()  # the conversation's
    height = bar.height()
    expected = height * bar.pageStep() / (bar.maximum() + bar.pageStep())
    top, bottom = _handle_span(bar, background)
    assert bottom >= height - 6 and top > height / 3, (name, top, bottom, height)
    assert abs((bottom - top) - expected) < max(12, expected * 0.15)
    bar.setValue(0)
    top, bottom = _handle_span(bar, background)
    assert top <= 6 and bottom < height * 2 / 3, (name, top, bottom, height)
