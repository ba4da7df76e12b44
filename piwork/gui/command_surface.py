"""The window as a command reaches it (``WindowSurface``): its dialogs, pickers and panels."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from PySide6.QtWidgets import QWidget

from piwork.gui.chat.chat_panel import ChatPanel
from piwork.gui.commands import SearchQuery
from piwork.gui.main_window import MainWindow


class WindowDialogs(Protocol):
    """The dialogs that need the session's state (``dialog_openers.DialogOpeners``)."""

    @property
    def cwd(self) -> str: ...

    def show_sessions_browser(self) -> object: ...

    def show_search(self) -> SearchQuery: ...

    def show_settings(self) -> object: ...


class CommandSurface:
    def __init__(
        self,
        window: MainWindow,
        dialogs: WindowDialogs,
        show_trust: Callable[[], object],
        chat: ChatPanel | None = None,
        show_title: Callable[[str | None], None] | None = None,
    ) -> None:
        self._window = window
        self._chat = chat or window.chat  # the tab's chat
        self._show_title = show_title  # the tab's title and the window's (else the window's alone)
        self._dialogs = dialogs
        self._show_trust = show_trust

    @property
    def parent(self) -> QWidget:
        return self._window

    def show_status(self, text: str, timeout_ms: int = 5000) -> None:
        self._window.status.showMessage(text, timeout_ms)

    def set_session_title(self, name: str | None) -> None:
        if self._show_title is not None:
            self._show_title(name)
        else:
            self._window.set_session_title(name, self._dialogs.cwd)

    def show_tree(self) -> None:
        self._window.show_tree()

    def open_log(self, path: str) -> None:
        self._window.open_log(path)

    def show_model_picker(self) -> None:
        self._chat.footer.model_picker.showPopup()

    def show_thinking_picker(self) -> None:
        self._chat.footer.thinking_picker.showPopup()

    def show_shortcuts(self) -> object:
        return self._window.show_shortcuts()

    def show_sessions_browser(self) -> object:
        return self._dialogs.show_sessions_browser()

    def show_search(self) -> SearchQuery:
        return self._dialogs.show_search()

    def show_trust(self) -> object:
        return self._show_trust()

    def show_settings(self) -> object:
        return self._dialogs.show_settings()

    def close(self) -> bool:
        return self._window.close()
