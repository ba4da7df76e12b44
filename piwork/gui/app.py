"""Application boot: QApplication, palette, notification hooks, main window, and the qasync loop."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QSettings, QStandardPaths
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QApplication

from piwork import __version__
from piwork.core.paths import agent_dir
from piwork.gui import compat
from piwork.gui.assets import APP_ID, resource_path
from piwork.gui.background import BackgroundTasks
from piwork.gui.chat.markdown import warm_up_lexers
from piwork.gui.inbox.wiring import follow_tabs, install_inbox
from piwork.gui.main_window import MainWindow
from piwork.gui.notifications import NotificationCenter
from piwork.gui.tabs.manager import TabManager
from piwork.gui.theme import ThemeManager

CONFIG_DIR_ENV = "PIWORK_CONFIG_DIR"  # where window layout is remembered (tests point it at a tmp dir)
THEME_ENV = "PIWORK_THEME"  # "light" or "dark" forces a palette
PALETTE_KEY = "theme/palette"  # window.ini: the palette picked with View → Dark Palette


@dataclass(frozen=True)
class WindowOptions:
    cwd: str
    session_file: str | None = None
    approve: bool | None = None  # one-run trust override: True trusted, False untrusted, None = ask/saved
    smoke_test: bool = False  # show the window, then quit at once (checks a build can start its GUI)


def config_dir(env: Mapping[str, str] | None = None) -> Path:
    environ = env if env is not None else os.environ
    override = environ.get(CONFIG_DIR_ENV)
    if override:
        return Path(override)
    location = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.GenericConfigLocation)
    return Path(location or Path.home() / ".config") / "piwork"


def ui_settings(env: Mapping[str, str] | None = None) -> QSettings:
    """Window geometry and dock layout (not engine settings: those are Pi's settings.json)."""
    return QSettings(str(config_dir(env) / "window.ini"), QSettings.Format.IniFormat)


def create_application(argv: list[str]) -> QApplication:
    existing = QApplication.instance()
    if isinstance(existing, QApplication):
        return existing
    app = QApplication(argv)
    app.setApplicationName("piwork")
    app.setOrganizationName("piwork")
    app.setOrganizationDomain("piwork.dev")
    app.setApplicationVersion(__version__)
    app.setDesktopFileName(APP_ID)
    app.setWindowIcon(QIcon(str(resource_path("icons", "piwork.svg"))))
    app.setStyle("Fusion")  # the palettes are designed for Fusion; native styles ignore parts of them
    return app


def build_window(
    app: QApplication, options: WindowOptions
) -> tuple[MainWindow, ThemeManager, NotificationCenter]:
    ui = ui_settings()
    saved = ui.value(PALETTE_KEY)  # the palette picked in the window last time, if one was
    forced = os.environ.get(THEME_ENV) or saved
    themes = ThemeManager(app, forced if forced in ("light", "dark") else None)
    window = MainWindow(ui, themes.theme)
    themes.changed.connect(window.set_theme)

    def pick_palette(dark: bool) -> None:
        name = "dark" if dark else "light"
        themes.force(name)
        ui.setValue(PALETTE_KEY, name)

    window.themeToggled.connect(pick_palette)
    notifications = NotificationCenter(window)
    window.set_session_title(None, options.cwd)
    return window, themes, notifications


def tab_manager(
    window: MainWindow, themes: ThemeManager, notifications: NotificationCenter, approve: bool | None
) -> TabManager:
    """The window's tabs; a tab moved to a window of its own gets one like the first (its size, palette
    and an inbox of every tab), which follows the palette too."""

    def make_window() -> MainWindow:
        other = MainWindow(window.ui_state, themes.theme)
        themes.changed.connect(other.set_theme)
        other.themeToggled.connect(window.themeToggled)
        inbox = install_inbox(other)
        themes.changed.connect(inbox.panel.set_theme)
        follow_tabs(inbox, manager.registry, manager.registry.controllers())
        other.resize(window.size())
        return other

    manager = TabManager(notifications, agent_dir(), approve=approve, make_window=make_window)
    return manager


def run(options: WindowOptions) -> int:
    app = create_application([sys.argv[0] if sys.argv else "piwork"])
    window, themes, notifications = build_window(app, options)
    inbox = install_inbox(window)  # before the layout is restored: its dock is remembered
    themes.changed.connect(inbox.panel.set_theme)
    tabs = tab_manager(window, themes, notifications, options.approve)
    controller = tabs.controller(window, options.cwd)
    follow_tabs(inbox, tabs.registry, tabs.registry.controllers())  # every tab, in every window

    async def main(quit_event: asyncio.Event) -> int:
        notifications.install(asyncio.get_running_loop())
        warm_up = BackgroundTasks()
        warm_up.spawn(asyncio.to_thread(warm_up_lexers))  # the first code block then renders without it
        try:
            window.restore_layout()
            window.show()
            # a project reopens where it was left (its latest session), unless turned off in the Session menu
            controller.spawn(
                controller.open_session(options.session_file, most_recent=window.reopens_last_session())
            )
            if options.smoke_test:
                await asyncio.sleep(0.05)  # let the window map and lay out once
                print(f"piwork: window ok ({app.platformName()}) in {controller.cwd}")
                app.quit()
            await quit_event.wait()
            warm_up.cancel_all()
            await tabs.shutdown()
        finally:
            window.save_layout()
            notifications.uninstall()
        return 0

    try:
        return compat.run_until_quit(app, main)
    finally:
        # The loop stops as soon as the application quits, which can cut ``shutdown`` short (its tasks
        # are cancelled, never resumed): whatever the open session still had queued is written here.
        tabs.close_session_files()
