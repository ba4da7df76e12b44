"""A session whose model is known without the keyring opens at once, while the keyring still waits.

The keyring is a real backend waiting at a gate (an unlock prompt). When the model comes from the
settings' default, from the session file, or is a server on this machine, choosing it needs no key, so the
session opens and says "checking" where the key is still unknown; once the keyring answers, the chat says
what it said. A message sent meanwhile goes out once the key is known, with that key, and the keyring is
never asked from the GUI thread.
"""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings
from pytestqt.qtbot import QtBot

from piwork.core.llm import CredentialStore
from piwork.core.paths import agent_dir
from piwork.gui.chat.empty_state import CHECKING, CHOOSE, READY
from piwork.gui.main_window import MainWindow
from piwork.gui.notifications import NotificationCenter
from piwork.gui.session_controller import SessionController
from piwork.gui.theme import load_theme
from tests.support import LoopbackServer, Text, Turn
from tests.support.blocking_keyring import BlockingKeyring
from tests.support.heartbeat import keeps_running

KEY = "sk-remote-KEYRING-ONLY-77aa"


def _remote_url(server: LoopbackServer) -> str:
    """The loopback server under this machine's name: a server that is not "local" to piwork, so its key
    is needed, yet reachable offline."""
    name = socket.gethostname()
    try:
        address = socket.gethostbyname(name)
    except OSError:
        address = ""
    if address != "127.0.0.1":
        pytest.skip("this machine's name does not resolve to 127.0.0.1")
    return f"http://{name}:{server.port}"


def _configure(server: LoopbackServer, default: str | None) -> None:
    models = {
        "providers": {
            "remote": {
                "baseUrl": _remote_url(server),
                "api": "anthropic-messages",
                "models": [{"id": "remote-model", "contextWindow": 200000, "maxTokens": 4096}],
            },
            "local": {
                "baseUrl": server.url,
                "api": "anthropic-messages",
                "models": [{"id": "local-model", "contextWindow": 200000, "maxTokens": 4096}],
            },
        }
    }
    (agent_dir() / "models.json").write_text(json.dumps(models))
    settings = (
        {"defaultProvider": default.split("/")[0], "defaultModel": default.split("/")[1]} if default else {}
    )
    (agent_dir() / "settings.json").write_text(json.dumps(settings))


@pytest.fixture
def server() -> Iterator[LoopbackServer]:
    with LoopbackServer() as running:
        yield running


class Opened:
    def __init__(self, qtbot: QtBot, qloop: asyncio.AbstractEventLoop, tmp_path: Path) -> None:
        self.qtbot, self.qloop, self.tmp_path = qtbot, qloop, tmp_path
        self.made: list[tuple[SessionController, BlockingKeyring]] = []

    def window(self, keys: dict[str, str]) -> tuple[SessionController, BlockingKeyring]:
        backend = BlockingKeyring(keys)
        project = self.tmp_path / "project"
        project.mkdir(exist_ok=True)
        main = MainWindow(
            QSettings(str(self.tmp_path / f"w{len(self.made)}.ini"), QSettings.Format.IniFormat),
            load_theme("light"),
        )
        self.qtbot.addWidget(main)
        main.show()
        ctl = SessionController(
            main,
            NotificationCenter(main),
            str(project),
            agent_dir(),
            approve=False,
            env={},
            credentials=CredentialStore(backend, env={}),
        )
        self.made.append((ctl, backend))
        return ctl, backend

    def close(self, ctl: SessionController, backend: BlockingKeyring) -> None:
        backend.open()
        done = self.qloop.create_task(ctl.shutdown())
        self.qtbot.waitUntil(done.done, timeout=10_000)
        ctl.notifications.close_all()
        assert backend.calls_on_gui_thread == []  # every question to the keyring came from a worker


@pytest.fixture
def opened(qtbot: QtBot, qloop: asyncio.AbstractEventLoop, tmp_path: Path) -> Iterator[Opened]:
    made = Opened(qtbot, qloop, tmp_path)
    yield made
    for ctl, backend in made.made:
        made.close(ctl, backend)
    made.made.clear()


def test_the_settings_default_opens_while_the_keyring_waits_and_a_message_goes_once_it_answers(
    qtbot: QtBot, opened: Opened, server: LoopbackServer
) -> None:
    _configure(server, "remote/remote-model")
    ctl, backend = opened.window({"remote": KEY})
    ctl.spawn(ctl.open_session(None))
    qtbot.waitUntil(lambda: ctl.runtime is not None, timeout=10_000)
    assert not backend.gate.is_set() and backend.waiting > 0  # opened while the keyring still waits
    session = ctl.runtime.session  # type: ignore[union-attr]
    assert session.model is not None and session.model.id == "remote-model"
    assert ctl.chat.model_state == CHECKING  # not "no API key": the keyring has not answered
    server.script(Turn([Text("answered with the keyring's key")]))
    ctl.send_prompt("hello")  # e.g. a command that sends a prompt
    keeps_running(qtbot)
    assert server.requests == []  # it waits for the key, the window does not
    backend.open()
    qtbot.waitUntil(lambda: bool(server.requests), timeout=10_000)
    assert server.requests[-1].headers["x-api-key"] == KEY
    qtbot.waitUntil(lambda: ctl.chat.model_state == READY and not ctl.chat.busy, timeout=10_000)


def test_a_session_that_records_its_model_opens_and_then_says_it_has_no_key(
    qtbot: QtBot, opened: Opened, server: LoopbackServer
) -> None:
    _configure(server, "remote/remote-model")
    first, first_backend = opened.window({"remote": KEY})
    first_backend.open()
    first.spawn(first.open_session(None))
    qtbot.waitUntil(lambda: first.runtime is not None, timeout=10_000)
    server.script(Turn([Text("saved")]))
    first.submit("keep this")
    qtbot.waitUntil(lambda: first.runtime.store.flushed and not first.chat.busy, timeout=10_000)  # type: ignore[union-attr]
    path = str(first.runtime.store.path)  # type: ignore[union-attr]
    opened.close(first, first_backend)
    opened.made.remove((first, first_backend))

    _configure(server, None)  # no default any more: the model comes from the session file
    ctl, backend = opened.window({})  # and the keyring no longer holds the key
    ctl.spawn(ctl.open_session(path))
    qtbot.waitUntil(lambda: ctl.runtime is not None, timeout=10_000)
    assert not backend.gate.is_set()
    assert ctl.runtime.session.model.id == "remote-model"  # type: ignore[union-attr]
    assert ctl.chat.model_state == CHECKING
    keeps_running(qtbot)
    backend.open()
    # no key for it: the chat offers the model that needs none
    qtbot.waitUntil(lambda: ctl.chat.model_state == CHOOSE, timeout=10_000)


def test_a_default_model_on_this_machine_is_ready_before_the_keyring_answers(
    qtbot: QtBot, opened: Opened, server: LoopbackServer
) -> None:
    _configure(server, "local/local-model")
    ctl, backend = opened.window({})
    ctl.spawn(ctl.open_session(None))
    qtbot.waitUntil(lambda: ctl.runtime is not None, timeout=10_000)
    assert not backend.gate.is_set()
    assert ctl.chat.model_state == READY  # a local server needs no key
    server.script(Turn([Text("local answer")]))
    ctl.submit("hello")  # taken at once; the request asks the keyring (in a worker) for a key it may hold
    qtbot.waitUntil(lambda: ctl.chat.model.rowCount() >= 1, timeout=10_000)
    keeps_running(qtbot)
    backend.open()
    qtbot.waitUntil(lambda: bool(server.requests) and not ctl.chat.busy, timeout=10_000)
    assert "x-api-key" not in server.requests[-1].headers or not server.requests[-1].headers["x-api-key"]
