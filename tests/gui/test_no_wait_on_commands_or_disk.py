"""The window never waits on a user's header command or on the disk when a session is let go.

A models.json header given as a ``!command`` runs a real shell command that waits on a FIFO until the test
writes the value (a password manager asking for its passphrase). A session file whose writer is busy is
a real writer lock held by another thread (a write still on its way to a slow disk). Meanwhile a 5 ms
timer keeps ticking on the GUI thread, and once the command answers or the disk is done the results
arrive: the header on the model and in the request, every line in the file, the file let go.
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings
from pytestqt.qtbot import QtBot

from piwork.core.paths import agent_dir
from piwork.core.session import Session
from piwork.gui.main_window import MainWindow
from piwork.gui.notifications import NotificationCenter
from piwork.gui.session_controller import SessionController
from piwork.gui.theme import load_theme
from tests.support import LoopbackServer, Text, Turn
from tests.support.heartbeat import keeps_running

TOKEN = "tok-from-the-password-manager"


class Gate:
    """A FIFO the header command reads its value from: ``cat`` waits until the test writes it."""

    def __init__(self, folder: Path) -> None:
        self.path = folder / "secret.fifo"
        self.started = folder / "command-started"
        os.mkfifo(self.path)
        self.answered = False

    @property
    def command(self) -> str:
        return f"!: > '{self.started}'; cat '{self.path}'"

    def waiting(self) -> bool:
        """The command has started (and reads the FIFO, or is about to)."""
        return self.started.exists() and not self.answered

    def _write(self, value: str) -> bool:
        try:  # opening for writing without blocking works only once the command has the FIFO open
            fd = os.open(self.path, os.O_WRONLY | os.O_NONBLOCK)
        except OSError:
            return False
        try:
            os.write(fd, f"{value}\n".encode())
        finally:
            os.close(fd)
        self.answered = True
        return True

    def answer(self, qtbot: QtBot, value: str) -> None:
        qtbot.waitUntil(lambda: self._write(value), timeout=5_000)
        self.started.unlink()
        self.answered = False


def _configure(server: LoopbackServer, gate: Gate, default: str) -> None:
    models = {
        "providers": {
            "loopback": {
                "baseUrl": server.url,
                "api": "anthropic-messages",
                "apiKey": "test-key",
                "models": [
                    {"id": "plain-model", "contextWindow": 200000, "maxTokens": 4096},
                    {
                        "id": "gated-model",
                        "contextWindow": 200000,
                        "maxTokens": 4096,
                        "headers": {"X-Token": gate.command},
                    },
                ],
            }
        }
    }
    (agent_dir() / "models.json").write_text(json.dumps(models))
    (agent_dir() / "settings.json").write_text(
        json.dumps({"defaultProvider": "loopback", "defaultModel": default})
    )


@pytest.fixture
def server() -> Iterator[LoopbackServer]:
    with LoopbackServer() as running:
        yield running


@pytest.fixture
def controller(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, tmp_path: Path, server: LoopbackServer
) -> Iterator[tuple[SessionController, Gate]]:
    """The window on the loopback server's plain model; its other model sends a header from a command."""
    gate = Gate(tmp_path)
    _configure(server, gate, "plain-model")
    ctl = _window(qtbot, tmp_path)
    ctl.spawn(ctl.open_session(None))
    qtbot.waitUntil(lambda: ctl.runtime is not None, timeout=10_000)
    yield ctl, gate
    if gate.waiting():  # a command still waiting for its value gets one
        gate.answer(qtbot, "late")
    _shut(qtbot, qloop, ctl)


def _window(qtbot: QtBot, tmp_path: Path) -> SessionController:
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    window = MainWindow(QSettings(str(tmp_path / "w.ini"), QSettings.Format.IniFormat), load_theme("light"))
    qtbot.addWidget(window)
    window.show()
    return SessionController(
        window, NotificationCenter(window), str(project), agent_dir(), approve=False, env={}
    )


def _shut(qtbot: QtBot, qloop: asyncio.AbstractEventLoop, ctl: SessionController) -> None:
    done = qloop.create_task(ctl.shutdown())
    qtbot.waitUntil(done.done, timeout=10_000)
    ctl.notifications.close_all()


# ---- a header given as a command ------------------------------------------------------------------


def test_picking_a_model_runs_its_header_command_in_a_worker(
    qtbot: QtBot, controller: tuple[SessionController, Gate], server: LoopbackServer
) -> None:
    ctl, gate = controller
    session = ctl.session
    assert session is not None and session.model is not None and session.model.id == "plain-model"
    ctl.model_choice.pick_model("loopback", "gated-model")
    qtbot.waitUntil(gate.waiting, timeout=5_000)  # the command runs, waiting for its value
    keeps_running(qtbot)  # ... and the window does not wait with it
    assert session.model.id == "plain-model"  # applied once the command has answered
    gate.answer(qtbot, TOKEN)
    qtbot.waitUntil(lambda: session.model is not None and session.model.id == "gated-model", timeout=5_000)
    assert session.model.headers == {"X-Token": TOKEN}
    assert tuple(ctl.chat.footer.model_picker.currentData()) == ("loopback", "gated-model")
    server.script(Turn([Text("answered")]))
    ctl.submit("hello")
    qtbot.waitUntil(lambda: bool(server.requests) and not ctl.chat.busy, timeout=10_000)
    assert server.requests[-1].headers["x-token"] == TOKEN
    # a command already run is not run again: picked at once
    ctl.model_choice.pick_model("loopback", "plain-model")
    ctl.model_choice.pick_model("loopback", "gated-model")
    assert session.model.headers == {"X-Token": TOKEN}


def test_a_later_pick_wins_over_a_header_command_still_running(
    qtbot: QtBot, controller: tuple[SessionController, Gate]
) -> None:
    ctl, gate = controller
    session = ctl.session
    assert session is not None
    ctl.model_choice.pick_model("loopback", "gated-model")
    qtbot.waitUntil(gate.waiting, timeout=5_000)
    # changed their mind while the password manager asked
    ctl.model_choice.pick_model("loopback", "plain-model")
    gate.answer(qtbot, TOKEN)
    qtbot.waitUntil(lambda: not ctl.tasks, timeout=5_000)
    assert session.model is not None and session.model.id == "plain-model"


def test_a_session_on_a_model_with_a_header_command_opens_without_the_window_waiting(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, tmp_path: Path, server: LoopbackServer
) -> None:
    gate = Gate(tmp_path)
    _configure(server, gate, "gated-model")
    ctl = _window(qtbot, tmp_path)
    try:
        ctl.spawn(ctl.open_session(None))
        qtbot.waitUntil(gate.waiting, timeout=5_000)
        keeps_running(qtbot)
        assert ctl.runtime is None
        gate.answer(qtbot, TOKEN)
        qtbot.waitUntil(lambda: ctl.runtime is not None, timeout=10_000)
        model = ctl.runtime.session.model  # type: ignore[union-attr]
        assert model is not None and model.id == "gated-model" and model.headers == {"X-Token": TOKEN}
    finally:
        _shut(qtbot, qloop, ctl)


# ---- letting a session file go ------------------------------------------------------------------


class BusyWriter:
    """Another thread holding the session file's writer lane, as a write on its way to a slow disk does."""

    def __init__(self, store: Session) -> None:
        self._lock = store._write_lock
        self._held = threading.Event()
        self._release = threading.Event()
        self._thread = threading.Thread(target=self._hold, daemon=True)
        self._thread.start()
        self._held.wait(5)

    def _hold(self) -> None:
        with self._lock:
            self._held.set()
            self._release.wait(30)

    def done(self) -> None:
        self._release.set()
        self._thread.join(5)


def _saved_session(qtbot: QtBot, ctl: SessionController, server: LoopbackServer) -> Session:
    server.script(Turn([Text("saved")]))
    ctl.submit("keep this")
    qtbot.waitUntil(
        lambda: ctl.runtime is not None and ctl.runtime.store.flushed and not ctl.chat.busy, timeout=10_000
    )
    store = ctl.runtime.store  # type: ignore[union-attr]
    with store.writing_later():  # a last line still queued for the writer lane
        store.tree.set_name("the last line")
    return store


def test_switching_sessions_writes_out_the_old_one_in_a_worker(
    qtbot: QtBot, controller: tuple[SessionController, Gate], server: LoopbackServer
) -> None:
    ctl, _gate = controller
    old = _saved_session(qtbot, ctl, server)
    busy = BusyWriter(old)
    try:
        ctl.spawn(ctl.open_session(None))
        keeps_running(qtbot)  # the old file's writer is busy, the window is not
        assert ctl.runtime is None  # the new session shows once the old file is written out
    finally:
        busy.done()
    qtbot.waitUntil(lambda: ctl.runtime is not None, timeout=10_000)
    assert ctl.runtime.store is not old  # type: ignore[union-attr]
    assert old._append_fd is None  # let go: another piwork may write it now
    assert "the last line" in Path(str(old.path)).read_text()


def test_quitting_waits_for_the_last_lines_without_holding_the_event_loop(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, tmp_path: Path, server: LoopbackServer
) -> None:
    _configure(server, Gate(tmp_path), "plain-model")
    ctl = _window(qtbot, tmp_path)
    ctl.spawn(ctl.open_session(None))
    qtbot.waitUntil(lambda: ctl.runtime is not None, timeout=10_000)
    old = _saved_session(qtbot, ctl, server)
    ctl.window.hide()  # quitting: the window is gone before the files are written out
    busy = BusyWriter(old)
    try:
        shutdown = qloop.create_task(ctl.shutdown())
        keeps_running(qtbot)
        assert not shutdown.done()  # quitting waits until the lines are on disk
    finally:
        busy.done()
    qtbot.waitUntil(shutdown.done, timeout=10_000)
    assert shutdown.exception() is None
    assert old._append_fd is None
    assert "the last line" in Path(str(old.path)).read_text()
    ctl.notifications.close_all()


def test_plain_appends_like_the_session_name_are_written_by_a_worker_in_order(
    qtbot: QtBot, controller: tuple[SessionController, Gate], server: LoopbackServer
) -> None:
    ctl, _gate = controller
    server.script(Turn([Text("saved")]))
    ctl.submit("keep this")
    qtbot.waitUntil(
        lambda: ctl.runtime is not None and ctl.runtime.store.flushed and not ctl.chat.busy, timeout=10_000
    )
    store = ctl.runtime.store  # type: ignore[union-attr]
    qtbot.waitUntil(lambda: not store.writes_pending, timeout=5_000)
    busy = BusyWriter(store)
    try:
        ctl.name_session("First name")  # plain calls: each appends an entry; the window does not wait
        ctl.name_session("Lane test")
        keeps_running(qtbot)
        assert store.tree.name == "Lane test"  # changed at once
        assert store.writes_pending  # ... and written once the writer is free
    finally:
        busy.done()
    qtbot.waitUntil(lambda: not store.writes_pending, timeout=5_000)
    lines = [json.loads(line) for line in Path(str(store.path)).read_text().splitlines()]
    assert [(line["type"], line.get("name")) for line in lines[-2:]] == [
        ("session_info", "First name"),
        ("session_info", "Lane test"),
    ]
