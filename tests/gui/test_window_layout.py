"""The window's layout across restarts and as docks open: Qt's dock state and each tabbed panel's current
tab come back; a damaged stored layout leaves the defaults; side docks open at widths that leave the
conversation and the other docks readable, in a small window and a large one."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QByteArray, QSettings, Qt
from pytestqt.qtbot import QtBot

from piwork.gui.main_window import GEOMETRY_KEY, STATE_KEY, MainWindow
from piwork.gui.theme import load_theme
from piwork.gui.window_layout import CHAT_MIN_WIDTH, SIDE_MIN_WIDTH, TABS_KEY, side_widths


def _settings(tmp_path: Path) -> QSettings:
    return QSettings(str(tmp_path / "window.ini"), QSettings.Format.IniFormat)


def _window(qtbot: QtBot, settings: QSettings, size: tuple[int, int] = (1000, 700)) -> MainWindow:
    window = MainWindow(settings, load_theme("light"))
    qtbot.addWidget(window)
    window.resize(*size)
    return window


def test_panel_tabs_and_tabbed_docks_come_back_in_the_next_run(qtbot: QtBot, tmp_path: Path) -> None:
    first = _window(qtbot, _settings(tmp_path))
    first.show()
    qtbot.waitExposed(first)
    first.tabifyDockWidget(first.docks["context"], first.docks["resources"])
    first.docks["context"].show()
    first.docks["resources"].show()
    first.docks["context"].raise_()
    first.tree_panel.views.setCurrentIndex(1)  # Graph
    first.context_panel.tabs.setCurrentIndex(2)
    first.resource_panel.tabs.setCurrentIndex(1)
    first.log_panel.tabs.setCurrentIndex(1)
    first.close()

    second = _window(qtbot, _settings(tmp_path))
    assert second.restore_layout()
    second.show()
    qtbot.waitExposed(second)
    assert second.tree_panel.views.currentIndex() == 1
    assert second.context_panel.tabs.currentIndex() == 2
    assert second.resource_panel.tabs.currentIndex() == 1
    assert second.log_panel.tabs.currentIndex() == 1
    assert second.tabifiedDockWidgets(second.docks["context"]) == [second.docks["resources"]]
    qtbot.waitUntil(lambda: not second.docks["context"].visibleRegion().isEmpty())
    assert second.docks["resources"].visibleRegion().isEmpty()  # behind the Context tab, as left


@pytest.mark.parametrize(
    "state",
    [
        QByteArray(b"\x00\x00\x00\xff not a window state at all"),
        QByteArray(),
        "a string where bytes belong",
    ],
)
def test_a_damaged_stored_layout_leaves_the_defaults(
    qtbot: QtBot, tmp_path: Path, state: QByteArray | str, capfd: pytest.CaptureFixture[str]
) -> None:
    settings = _settings(tmp_path)
    settings.setValue(STATE_KEY, state)
    settings.setValue(GEOMETRY_KEY, QByteArray(b"\x01\x02 no geometry"))
    settings.setValue(TABS_KEY, '{"tree": 7, "context": "two", "logs": true')  # cut short
    settings.sync()
    window = _window(qtbot, _settings(tmp_path))
    assert not window.restore_layout()
    window.show()
    qtbot.waitExposed(window)
    assert window.docks["tree"].isVisible()
    assert not any(window.docks[d].isVisible() for d in ("resources", "logs", "context"))
    assert window.tree_panel.views.currentIndex() == 0
    assert "Traceback" not in capfd.readouterr().err
    settings.setValue(TABS_KEY, '{"tree": 7, "context": "two", "logs": true, "resources": 1}')
    window.restore_layout()
    assert window.tree_panel.views.currentIndex() == 0 and window.log_panel.tabs.currentIndex() == 0
    assert window.resource_panel.tabs.currentIndex() == 1  # the one readable index is used


def test_side_widths_keep_the_conversation_readable() -> None:
    assert side_widths(1600, True, True) == (300, 380)
    assert side_widths(1000, True, False) == (300, 0)
    left, right = side_widths(1000, True, True)
    assert left >= SIDE_MIN_WIDTH and right >= SIDE_MIN_WIDTH and 1000 - left - right >= CHAT_MIN_WIDTH - 50
    assert side_widths(500, True, True) == (SIDE_MIN_WIDTH, SIDE_MIN_WIDTH)


@pytest.mark.parametrize("size", [(1000, 700), (1600, 1000)])
def test_opening_side_docks_never_leaves_one_unreadably_narrow(
    qtbot: QtBot, tmp_path: Path, size: tuple[int, int]
) -> None:
    window = _window(qtbot, _settings(tmp_path), size)
    window.show()
    qtbot.waitExposed(window)
    tree = window.docks["tree"]
    qtbot.waitUntil(lambda: tree.width() > 0)
    assert abs(tree.width() - 300) <= 10
    for name in ("context", "resources"):
        window.docks[name].show()
        qtbot.wait(20)  # the fit runs once the layout has placed the dock

        def readable() -> bool:
            shown = [d for d in window.docks.values() if d.isVisible()]
            return window.chat.width() >= CHAT_MIN_WIDTH - 60 and all(
                d.width() >= SIDE_MIN_WIDTH - 10 for d in shown
            )

        qtbot.waitUntil(readable, timeout=2000)
    context = window.docks["context"]
    if size[0] == 1600:  # room for the preferred widths
        assert abs(context.width() - 380) <= 20 and abs(tree.width() - 300) <= 10
    assert window.dockWidgetArea(context) == Qt.DockWidgetArea.RightDockWidgetArea
