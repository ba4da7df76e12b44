"""The main window: menus and shortcuts, remembered layout, About, shortcuts help, palettes."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QSettings, Qt
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QMessageBox
from pytestqt.qtbot import QtBot

from piwork import __version__
from piwork.gui.actions import ACTIONS
from piwork.gui.app import ui_settings
from piwork.gui.main_window import MainWindow
from piwork.gui.theme import load_theme


def _window(qtbot: QtBot, settings: QSettings | None = None) -> MainWindow:
    window = MainWindow(settings or ui_settings(), load_theme("light"))
    qtbot.addWidget(window)
    return window


def test_every_action_is_in_its_menu_with_a_unique_shortcut(qtbot: QtBot) -> None:
    window = _window(qtbot)
    seen: dict[str, str] = {}
    for spec in ACTIONS:
        action = window.action_map[spec.id]
        menu = window.menus[spec.menu]
        assert action in menu.actions()  # type: ignore[attr-defined]
        if spec.shortcut:
            keys = action.shortcut().toString()
            assert keys == QKeySequence(spec.shortcut).toString()
            assert keys not in seen, f"{spec.id} and {seen.get(keys)} share {keys}"
            seen[keys] = spec.id
    toggle = window.docks["logs"].toggleViewAction()
    assert toggle in window.menus["View"].actions()  # type: ignore[attr-defined]


def test_layout_and_dock_state_are_restored_in_the_next_run(qtbot: QtBot, tmp_path: Path) -> None:
    settings = QSettings(str(tmp_path / "window.ini"), QSettings.Format.IniFormat)
    first = _window(qtbot, settings)
    first.show()
    qtbot.waitExposed(first)
    first.resize(760, 700)  # the offscreen screen is 800x800; restoreGeometry keeps windows on screen
    first.docks["logs"].show()
    first.addDockWidget(Qt.DockWidgetArea.TopDockWidgetArea, first.docks["logs"])
    qtbot.waitUntil(lambda: first.docks["logs"].isVisible())
    saved_size = first.size()
    first.close()

    again = QSettings(str(tmp_path / "window.ini"), QSettings.Format.IniFormat)
    second = _window(qtbot, again)
    assert second.restore_layout()
    second.show()
    qtbot.waitExposed(second)
    assert second.size() == saved_size
    assert second.docks["logs"].isVisible()
    assert second.dockWidgetArea(second.docks["logs"]) == Qt.DockWidgetArea.TopDockWidgetArea


def test_no_saved_layout_means_defaults(qtbot: QtBot) -> None:
    window = _window(qtbot)
    assert not window.restore_layout()
    assert not window.docks["logs"].isVisible()


def test_about_box_names_the_version(qtbot: QtBot) -> None:
    window = _window(qtbot)
    box = window.show_about()
    assert isinstance(box, QMessageBox)
    assert __version__ in box.text()
    box.close()


def test_shortcuts_help_lists_every_shortcut(qtbot: QtBot) -> None:
    window = _window(qtbot)
    dialog = window.show_shortcuts()
    listed = {dialog.table.item(r, 2).text() for r in range(dialog.table.rowCount())}
    for spec in ACTIONS:
        if spec.shortcut:
            assert QKeySequence(spec.shortcut).toString(QKeySequence.SequenceFormat.NativeText) in listed
    assert "Shift+Enter" in listed
    assert "Alt+1" in listed  # dock toggles too
    dialog.close()


def test_dark_palette_toggle_reaches_the_chat(qtbot: QtBot) -> None:
    window = _window(qtbot)
    with qtbot.waitSignal(window.themeToggled) as blocker:
        window.action_map["toggle_theme"].trigger()
    assert blocker.args == [True]
    dark = load_theme("dark")
    window.set_theme(dark)
    assert window.chat.view.chat_delegate.theme.dark
    assert dark.palette.color(dark.palette.ColorRole.Window).lightness() < 80


def test_truncated_badge_opens_the_log_dock(qtbot: QtBot, tmp_path: Path, qloop: object) -> None:
    window = _window(qtbot)  # the log viewer indexes the file on the window's loop
    log = tmp_path / "out.log"
    log.write_text("line\n" * 10)
    window.open_log(str(log))
    assert window.docks["logs"].isVisibleTo(window)


def test_theme_manager_applies_and_forces_palettes(qtbot: QtBot) -> None:
    from PySide6.QtWidgets import QApplication

    from piwork.gui.theme import ThemeManager

    app = QApplication.instance()
    assert isinstance(app, QApplication)
    before = QApplication.palette()
    manager = ThemeManager(app, forced="light")
    try:
        with qtbot.waitSignal(manager.changed) as changed:
            manager.force("dark")
        assert changed.args[0].dark
        assert QApplication.palette().color(before.ColorRole.Window).lightness() < 80
    finally:
        app.setPalette(before)
        manager.deleteLater()


def test_the_palette_picked_in_the_window_is_the_next_windows(
    qtbot: QtBot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """View → Dark Palette is remembered (window.ini): the next window starts dark, its menu checked."""
    from PySide6.QtWidgets import QApplication

    from piwork.gui.app import THEME_ENV, WindowOptions, build_window

    monkeypatch.setenv("PIWORK_CONFIG_DIR", str(tmp_path / "cfg"))
    monkeypatch.delenv(THEME_ENV, raising=False)
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    before = QApplication.palette()
    try:
        first, themes, notes = build_window(app, WindowOptions(cwd=str(tmp_path)))
        qtbot.addWidget(first)
        first.action_map["toggle_theme"].setChecked(not themes.theme.dark)
        picked = themes.theme.dark
        notes.close_all()
        second, again, notes2 = build_window(app, WindowOptions(cwd=str(tmp_path)))
        qtbot.addWidget(second)
        assert again.theme.dark is picked
        assert second.action_map["toggle_theme"].isChecked() is picked
        notes2.close_all()
    finally:
        app.setPalette(before)


def test_the_tree_shortcut_focuses_the_tab_on_show(qtbot: QtBot, tmp_path: Path) -> None:
    """Ctrl+T puts the keyboard in the Graph when the Graph tab shows (Up then moves in it, not in the
    composer's history), and in the Outline otherwise."""
    window = MainWindow(QSettings(str(tmp_path / "w.ini"), QSettings.Format.IniFormat), load_theme("light"))
    qtbot.addWidget(window)
    window.show()
    window.activateWindow()
    qtbot.waitExposed(window)
    panel = window.tree_panel
    panel.views.setCurrentWidget(panel.graph)
    window.show_tree()
    qtbot.waitUntil(lambda: panel.graph.list.hasFocus(), timeout=3000)
    panel.views.setCurrentWidget(panel.view)
    window.action_map["session_tree"].trigger()
    qtbot.waitUntil(lambda: panel.view.hasFocus(), timeout=3000)


def test_a_first_window_fits_a_small_screen() -> None:
    from PySide6.QtCore import QSize

    from piwork.gui.main_window import PREFERRED_SIZE, first_size

    assert first_size(QSize(1600, 970)) == PREFERRED_SIZE
    small = first_size(QSize(1000, 672))  # a 1000×700 screen less a panel
    assert small.width() <= 980 and small.height() <= 632
    assert first_size(None) == PREFERRED_SIZE
