"""Application boot: QApplication, palette, notification hooks, main window, and the qasync loop."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import shiboken6
from PySide6.QtCore import QEvent, QObject, QSettings, QStandardPaths, Qt, QTimer
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QApplication, QWidget

from piwork import __version__
from piwork.gui import compat
from piwork.gui.assets import APP_ID, resource_path
from piwork.gui.background import BackgroundTasks
from piwork.gui.chat.empty_state import CHECKING
from piwork.gui.inbox.dock_spec import DOCK_ID as INBOX_DOCK
from piwork.gui.inbox.dock_spec import SHORTCUT as INBOX_SHORTCUT
from piwork.gui.main_window import MainWindow
from piwork.gui.notifications import NotificationCenter
from piwork.gui.theme import ThemeManager

if TYPE_CHECKING:
    from piwork.gui.chat.chat_panel import ChatPanel
    from piwork.gui.commands import SlashCommand
    from piwork.gui.inbox.wiring import WindowInbox
    from piwork.gui.session_controller import SessionController
    from piwork.gui.tabs.manager import TabManager

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
    from piwork.core.paths import agent_dir
    from piwork.gui.inbox.wiring import follow_tabs, install_inbox
    from piwork.gui.tabs.manager import TabManager

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


def add_inbox_dock(window: MainWindow, themes: ThemeManager) -> list[WindowInbox]:
    """The inbox's dock, where the layout remembers it (hidden until asked for); what it shows, its badge
    and the title's count are made when it is first shown or once the session's parts are loaded. The list
    holds the window's inbox once made."""
    made: list[WindowInbox] = []

    def make_panel() -> QWidget:
        from piwork.gui.inbox.wiring import install_inbox

        installed = install_inbox(window)
        themes.changed.connect(installed.panel.set_theme)
        made.append(installed)
        return installed.panel

    window.add_lazy_dock(
        INBOX_DOCK, "Inbox", make_panel, Qt.DockWidgetArea.RightDockWidgetArea, INBOX_SHORTCUT
    )
    window.docks[INBOX_DOCK].hide()
    return made


def load_session_parts() -> None:
    """Import what opening a session takes: the engine and the window's parts that drive it (some 400
    modules). Run in a worker once the window has shown its first frame; the engine has no Qt, and the
    window's modules make only plain values of Qt types as they load (no widget, no paint device)."""
    from piwork.code_cache import long_lived_imports

    with long_lived_imports():  # as the window's own modules are (``piwork.commands.window``)
        from piwork.core.workflows import create_runtime
        from piwork.gui.inbox.wiring import follow_tabs
        from piwork.gui.tabs.manager import TabManager
        from piwork.gui.tree.graph_model import BranchGraphModel  # the graph view's, made with its first tree
    del create_runtime, follow_tabs, TabManager, BranchGraphModel


FIRST_FRAME_LIMIT_MS = 1000  # a window that is never painted (started minimized) waits no longer


async def first_frame(window: MainWindow) -> None:
    """Return once ``window`` has painted its first frame (or after ``FIRST_FRAME_LIMIT_MS``)."""
    painted: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def done() -> None:
        if not painted.done():
            painted.set_result(None)

    class Watch(QObject):
        def eventFilter(self, watched: QObject, event: QEvent) -> bool:
            if event.type() == QEvent.Type.Paint and not painted.done():
                QTimer.singleShot(0, done)  # once the frame is flushed
            return False

    watch = Watch(window)
    window.installEventFilter(watch)
    QTimer.singleShot(FIRST_FRAME_LIMIT_MS, done)
    try:
        await painted
    finally:
        window.removeEventFilter(watch)
        watch.deleteLater()


def open_first_session(window: MainWindow, controller: SessionController, session_file: str | None) -> None:
    """The first tab opens ``session_file``, else its project where it was left (its latest session,
    unless turned off in the Session menu); or, when something was dropped on the window before its
    session's parts were made, what was dropped instead: the start's own session is not opened only to be
    replaced a moment later (its trust question first)."""
    if window.holds_drops():
        controller.spawn(open_held_drops(window, controller, session_file))
        return
    controller.spawn(controller.open_session(session_file, most_recent=window.reopens_last_session()))


async def open_held_drops(
    window: MainWindow, controller: SessionController, session_file: str | None
) -> None:
    """Open what was dropped on the window before its session's parts were made, as a drop then would
    have: in the order dropped, each once the one before has opened (or failed, as the tab then says),
    and no further once the window has closed. When none opened (a dropped folder gone meanwhile), the
    start's own session does, so the tab is not left without one."""
    while shiboken6.isValid(window) and (target := window.next_held_drop()) is not None:
        if target.kind == "folder":
            opening = controller.spawn(controller.open_project(target.path))
        else:
            opening = controller.spawn(controller.open_session(target.path))
        await asyncio.wait({opening})
    if controller.runtime is None and shiboken6.isValid(window) and window.isVisible():
        await controller.open_session(session_file, most_recent=window.reopens_last_session())


class HeldInput:
    """What is sent from the chat before its session's parts are made is put back in the editor, with the
    notice the chat gives while a session opens (nothing typed is lost)."""

    def __init__(self, chat: ChatPanel) -> None:
        self.chat = chat
        chat.promptSubmitted.connect(self._put_back)
        chat.followUpSubmitted.connect(self._put_back)
        chat.userCommandSubmitted.connect(self._put_back_user_command)
        chat.commandSubmitted.connect(self._put_back_command)

    def _put_back(self, text: str) -> None:
        self.chat.composer.set_text(text)
        self.chat.presenter.add_notice("No session", "The session is still opening; send again in a moment.")

    def _put_back_user_command(self, command: str, excluded: bool) -> None:
        self._put_back(("!!" if excluded else "!") + command)

    def _put_back_command(self, command: SlashCommand) -> None:
        name = f"skill:{command.skill}" if command.name == "skill" and command.skill else command.name
        self._put_back(f"/{name} {command.args}".rstrip())

    def release(self) -> None:
        chat = self.chat
        chat.promptSubmitted.disconnect(self._put_back)
        chat.followUpSubmitted.disconnect(self._put_back)
        chat.userCommandSubmitted.disconnect(self._put_back_user_command)
        chat.commandSubmitted.disconnect(self._put_back_command)


def run(options: WindowOptions) -> int:
    app = create_application([sys.argv[0] if sys.argv else "piwork"])
    window, themes, notifications = build_window(app, options)
    inboxes = add_inbox_dock(window, themes)  # before the layout is restored: its dock is remembered
    started: list[TabManager] = []

    async def main(quit_event: asyncio.Event) -> int:
        from piwork.gui.chat.markdown import warm_up_lexers

        notifications.install(asyncio.get_running_loop())
        warm_up = BackgroundTasks()
        try:
            window.restore_layout()
            held = HeldInput(window.chat)
            window.wait_for_session_parts()  # the session's actions are disabled until its parts are made
            # What the chat says until the session's parts have asked the keyring (their first step), so the
            # first frame already says it rather than "no models".
            window.chat.set_model_state(CHECKING)
            window.chat.footer.model_picker.show_checking()
            window.show()
            # The window's first frame comes before the session's parts are loaded (in a worker) and made.
            await first_frame(window)
            await asyncio.to_thread(load_session_parts)
            from piwork.gui.inbox.wiring import follow_tabs

            tabs = tab_manager(window, themes, notifications, options.approve)
            started.append(tabs)
            controller = tabs.controller(window, options.cwd)
            held.release()
            window.session_parts_made()
            window.dock_panel(INBOX_DOCK)
            follow_tabs(inboxes[0], tabs.registry, tabs.registry.controllers())  # every tab, in every window
            warm_up.spawn(asyncio.to_thread(warm_up_lexers))  # the first code block then renders without it
            open_first_session(window, controller, options.session_file)
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
        for tabs in started:
            tabs.close_session_files()
