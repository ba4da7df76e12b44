"""The window's dialogs that need the open session's state: the sessions browser, the command palette,
the search over every session, Settings, and choosing a session file or a project folder to open. Each
is reached through its window action (the controller links them); what a dialog's choice opens goes back to the session's lifecycle."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, Protocol

from PySide6.QtCore import Qt

from piwork.core.llm import ModelRegistry
from piwork.core.session import default_session_dir, files_to_search
from piwork.core.settings import Settings
from piwork.core.workflows import AgentRuntime
from piwork.gui.chat.chat_panel import ChatPanel
from piwork.gui.commands import BUILTIN
from piwork.gui.dialogs import ask_folder, ask_open_file
from piwork.gui.key_status import KeyStatus
from piwork.gui.main_window import MainWindow
from piwork.gui.model_choice import ModelChoice
from piwork.gui.palette.palette_dialog import PaletteDialog
from piwork.gui.palette.sources import (
    ModelItemsFollower,
    action_items,
    command_items,
    list_recent_sessions,
    model_items,
)
from piwork.gui.search.search_dialog import SearchDialog
from piwork.gui.sessions.session_browser import SessionBrowser
from piwork.gui.settings.settings_dialog import SettingsDialog


class DialogHost(Protocol):
    """The open session, the controller's model and key state, and opening another session."""

    cwd: str
    agent_dir: Path
    runtime: AgentRuntime | None
    models: ModelRegistry
    keys: KeyStatus
    chat: ChatPanel  # the tab's chat

    def spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]: ...

    async def open_session(self, session_file: str | None) -> AgentRuntime: ...

    async def open_project(self, folder: str) -> AgentRuntime | None: ...

    async def open_at(self, path: str, entry_id: str | None) -> None: ...


class DialogOpeners:
    def __init__(self, host: DialogHost, window: MainWindow, model_choice: ModelChoice) -> None:
        self.host = host
        self.window = window
        self.chat = host.chat
        self.model_choice = model_choice
        self.chat.addServerRequested.connect(lambda: self.show_settings().providers_page.edit_server(None))
        self.chat.addKeyRequested.connect(self.show_settings)

    @property
    def cwd(self) -> str:
        return self.host.cwd

    def _open_in_task(self, path: str) -> None:
        self.host.spawn(self.host.open_session(path))

    def choose_session_file(self) -> None:
        self.host.spawn(self._choose_session_file())

    async def _choose_session_file(self) -> None:
        start = default_session_dir(self.host.cwd, self.host.agent_dir)
        folder = start if await asyncio.to_thread(start.is_dir) else self.host.cwd
        path = await ask_open_file(
            self.window, "Open Session", str(folder), "Sessions (*.jsonl);;All files (*)"
        )
        if path:
            await self.host.open_session(path)

    def choose_project_folder(self) -> None:
        self.host.spawn(self._choose_project_folder())

    async def _choose_project_folder(self) -> None:
        folder = await ask_folder(self.window, "Open Project Folder", os.path.dirname(self.host.cwd))
        if folder:
            await self.host.open_project(folder)

    def show_sessions_browser(self) -> SessionBrowser:
        browser = SessionBrowser(self.host.cwd, self.host.agent_dir, parent=self.window)
        browser.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        browser.sessionChosen.connect(self._open_in_task)
        browser.show()
        browser.refresh()
        return browser

    def show_palette(self) -> PaletteDialog:
        """Every action, command, skill, template, model and (once listed) recent session."""
        runtime = self.host.runtime
        resources = runtime.resources if runtime is not None else None
        commands = command_items(BUILTIN, self.chat.run_command, self.chat.composer.set_text, resources)
        items = action_items(self.window) + commands + model_items(self.model_choice)
        dialog = PaletteDialog(items, self.window)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        list_recent_sessions(self.host.agent_dir, self.host.cwd, self._open_in_task, dialog.add_items, dialog)
        ModelItemsFollower(self.model_choice, dialog)
        if self.host.keys.checking:
            self.host.keys.refresh()
        dialog.show()
        dialog.query.setFocus()
        return dialog

    def show_search(self) -> SearchDialog:
        """The search over every session; a result opens its session with the tree on the entry."""
        cwd, agent_dir = self.host.cwd, self.host.agent_dir
        store = self.host.runtime.store if self.host.runtime is not None else None
        extra = [store.session_dir] if store is not None and store.session_dir is not None else []

        def list_files(everywhere: bool) -> list[Path]:
            return files_to_search(cwd, agent_dir, everywhere=everywhere, extra_folders=extra)

        dialog = SearchDialog(list_files, self.window)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.hitChosen.connect(lambda path, entry: self.host.spawn(self.host.open_at(path, entry or None)))
        dialog.show()
        return dialog

    def show_settings(self) -> SettingsDialog:
        """The settings dialog on its Providers page (one at a time: an open one is brought forward)."""
        open_dialog = self.window.findChild(SettingsDialog, "settingsDialog")
        if open_dialog is not None and open_dialog.isVisible():
            open_dialog.tabs.setCurrentIndex(0)
            open_dialog.raise_()
            open_dialog.activateWindow()
            return open_dialog
        runtime = self.host.runtime
        settings = runtime.resources.settings if runtime else None
        if settings is None:
            settings = Settings.for_project(self.host.cwd, str(self.host.agent_dir), project_trusted=False)
        dialog = SettingsDialog(settings, self.host.keys, self.host.models, self.host.agent_dir, self.window)
        dialog.settingsSaved.connect(self.model_choice.fill_pickers)
        dialog.providers_page.providersChanged.connect(self.model_choice.providers_changed)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.show()
        return dialog
