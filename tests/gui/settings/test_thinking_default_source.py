"""Where the default thinking level comes from is said where it is shown: the settings dialog edits the
global default and says when this project's .pi/settings.json sets another one (which wins), and the
footer's picker shows the level the next request really uses, its tooltip naming the default's file."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import keyring.backends.null
import pytest
from PySide6.QtCore import QSettings
from pytestqt.qtbot import QtBot

from piwork.core.llm.credentials import CredentialStore
from piwork.core.llm.models import ModelRegistry
from piwork.core.llm.thinking import budget_for
from piwork.core.paths import agent_dir
from piwork.core.settings import Settings
from piwork.gui.key_status import KeyStatus
from piwork.gui.main_window import MainWindow
from piwork.gui.notifications import NotificationCenter
from piwork.gui.session_controller import SessionController
from piwork.gui.settings.settings_dialog import SettingsDialog
from piwork.gui.theme import load_theme
from tests.support import LoopbackServer, Text, Turn


def _files(project: Path, server_url: str | None = None) -> None:
    """Global settings say high, the project's say low (a thinking loopback model when given a server)."""
    adir = agent_dir()
    global_settings: dict[str, object] = {"defaultThinkingLevel": "high"}
    if server_url is not None:
        models = {"providers": {"loopback": {"baseUrl": server_url, "api": "anthropic-messages", "apiKey": "k",
                  "models": [{"id": "thinker", "reasoning": True, "contextWindow": 200000, "maxTokens": 32000}]}}}  # fmt: skip
        (adir / "models.json").write_text(json.dumps(models))
        global_settings |= {"defaultProvider": "loopback", "defaultModel": "thinker"}
    (adir / "settings.json").write_text(json.dumps(global_settings))
    (project / ".pi").mkdir(parents=True)
    (project / ".pi" / "settings.json").write_text(json.dumps({"defaultThinkingLevel": "low"}))


def _dialog(qtbot: QtBot, project: Path, trusted: bool) -> SettingsDialog:
    adir = agent_dir()
    settings = Settings.for_project(str(project), str(adir), project_trusted=trusted)
    registry = ModelRegistry(adir)
    keys = KeyStatus(CredentialStore(keyring.backends.null.Keyring(), env={}), registry.providers)
    dialog = SettingsDialog(settings, keys, registry, adir)
    qtbot.addWidget(dialog)
    qtbot.waitUntil(lambda: not dialog.providers_page.keys.checking and not dialog.providers_page.keys.busy)
    return dialog


def test_the_dialog_edits_the_global_default_and_names_the_project_file_that_wins(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, tmp_path: Path
) -> None:
    project = tmp_path / "project"
    _files(project)
    trusted = _dialog(qtbot, project, trusted=True)
    assert trusted.default_thinking.currentData() == "high"  # the global file's value: what Save writes
    note = trusted.thinking_source.text()
    assert "start at low, from this project's .pi/settings.json" in note and "wins over the global" in note
    untrusted = _dialog(qtbot, project, trusted=False)  # an untrusted project's settings are not read
    assert untrusted.default_thinking.currentData() == "high"
    assert "start at high, from the global settings (" in untrusted.thinking_source.text()
    assert "settings.json)" in untrusted.thinking_source.text()


@pytest.fixture
def server() -> Iterator[LoopbackServer]:
    with LoopbackServer() as running:
        yield running


def test_the_footer_shows_the_level_the_next_request_uses_and_where_the_default_comes_from(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, tmp_path: Path, server: LoopbackServer
) -> None:
    project = tmp_path / "project"
    _files(project, server.url)
    window = MainWindow(QSettings(str(tmp_path / "w.ini"), QSettings.Format.IniFormat), load_theme("light"))
    qtbot.addWidget(window)
    window.show()
    notifications = NotificationCenter(window)
    ctl = SessionController(window, notifications, str(project), agent_dir(), approve=True, env={})
    ctl.spawn(ctl.open_session(None))
    qtbot.waitUntil(lambda: ctl.runtime is not None and ctl.session is not None, timeout=10_000)
    picker = ctl.chat.footer.thinking_picker
    try:
        qtbot.waitUntil(lambda: picker.currentData() == "low", timeout=10_000)
        assert "New sessions here start at low, from this project's .pi/settings.json" in picker.toolTip()
        server.script(Turn([Text("Thought about it.")]))
        ctl.submit("think a little")
        qtbot.waitUntil(lambda: bool(server.requests) and not ctl.chat.busy, timeout=10_000)
        thinking = server.requests[-1].body["thinking"]
        assert thinking["type"] == "enabled" and thinking["budget_tokens"] == budget_for(picker.currentData())
    finally:
        done = qloop.create_task(ctl.shutdown())
        qtbot.waitUntil(done.done, timeout=10_000)
        notifications.close_all()
