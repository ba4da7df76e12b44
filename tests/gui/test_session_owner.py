"""One writer per session file, in the window: another process writing the open session (a Pi appending to
it, another piwork holding its writer lock) makes it read-only here with a bar naming the writer; the chat
follows what it appends; the user forks the session or takes it over once the writer stops. Each other
writer is a real second process; the model is the loopback server."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings
from pytestqt.qtbot import QtBot

from piwork.core.paths import agent_dir
from piwork.core.session.format import serialize
from piwork.core.session.reader import read_session_file
from piwork.core.session.store import SessionReadOnly
from piwork.gui.chat.owner_banner import TAKE_OVER_TEXT, TAKE_OVER_WHEN_STOPPED_TEXT
from piwork.gui.main_window import MainWindow
from piwork.gui.notifications import NotificationCenter
from piwork.gui.session_controller import SessionController
from piwork.gui.theme import load_theme
from tests.core.session.helpers import assistant, user
from tests.gui.test_session_controller import _configure
from tests.support import LoopbackServer, Text, Turn
from tests.support.pi_like_writer import PiLikeWriter
from tests.support.pi_rpc import CLI, RealPi
from tests.support.piwork_holder import PiworkHolder
from tests.support.reference import MISSING_REASON, reference_installed

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs Linux /proc")


@pytest.fixture
def server() -> Iterator[LoopbackServer]:
    with LoopbackServer() as running:
        yield running


@pytest.fixture
def controller(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, server: LoopbackServer, tmp_path: Path
) -> Iterator[SessionController]:
    _configure(server)
    project = tmp_path / "project"
    project.mkdir()
    window = MainWindow(QSettings(str(tmp_path / "w.ini"), QSettings.Format.IniFormat), load_theme("light"))
    window.resize(1000, 700)
    qtbot.addWidget(window)
    window.show()
    notifications = NotificationCenter(window)
    ctl = SessionController(window, notifications, str(project), agent_dir(), approve=False, env={})
    ctl.spawn(ctl.open_session(None))
    qtbot.waitUntil(lambda: ctl.runtime is not None, timeout=10_000)
    yield ctl
    done = qloop.create_task(ctl.shutdown())
    qtbot.waitUntil(done.done, timeout=10_000)
    notifications.close_all()


def _texts(ctl: SessionController) -> list[str]:
    model = ctl.chat.model
    return [model.row_at(i).plain_text() for i in range(model.rowCount())]


def _saved_session(qtbot: QtBot, ctl: SessionController, server: LoopbackServer) -> Path:
    server.script(Turn([Text("first answer")]))
    ctl.submit("first question")
    qtbot.waitUntil(lambda: not ctl.chat.busy and len(_texts(ctl)) == 2, timeout=10_000)
    assert ctl.runtime is not None and ctl.runtime.store.path is not None
    return ctl.runtime.store.path


def _last_id(path: Path) -> str:
    return str(read_session_file(path).records[-1].id)


def test_a_pi_appending_makes_it_read_only_followed_live_then_taken_over_once_it_stops(
    qtbot: QtBot, controller: SessionController, server: LoopbackServer
) -> None:
    path = _saved_session(qtbot, controller, server)
    banner = controller.chat.owner_banner
    with PiLikeWriter(Path(controller.cwd)) as pi:
        last = _last_id(path)
        pi.append(path, user("pi1", last, "asked in pi", 30))
        qtbot.waitUntil(banner.isVisible, timeout=10_000)
        assert banner.text.text().startswith(f"Pi (pid {pi.pid}) is writing this session")
        store = controller.runtime.store  # type: ignore[union-attr]
        assert store.read_only and f"Pi (pid {pi.pid})" in controller.chat.composer.placeholderText()
        qtbot.waitUntil(lambda: "asked in pi" in _texts(controller), timeout=10_000)
        pi.append(path, assistant("pi2", "pi1", "answered in pi", 31))
        qtbot.waitUntil(lambda: "answered in pi" in _texts(controller), timeout=10_000)
        assert banner.take_over_button.text() == TAKE_OVER_WHEN_STOPPED_TEXT
        assert _last_id(path) == "pi2"  # piwork wrote nothing meanwhile
    qtbot.waitUntil(lambda: "has stopped writing" in banner.text.text(), timeout=10_000)
    assert banner.take_over_button.text() == TAKE_OVER_TEXT and store.read_only
    banner.take_over_button.click()
    qtbot.waitUntil(lambda: not store.read_only and not banner.isVisible(), timeout=10_000)
    server.script(Turn([Text("second answer")]))
    controller.submit("back in piwork")
    qtbot.waitUntil(lambda: "second answer" in path.read_text(), timeout=10_000)
    qtbot.waitUntil(lambda: not controller.chat.busy, timeout=10_000)
    sent = [m["content"] for m in server.requests[-1].body["messages"]]
    assert any("answered in pi" in json.dumps(c) for c in sent)  # the context followed Pi's entries
    records = read_session_file(path).records
    new_user = next(r for r in records if r.parent_id == "pi2")
    assert new_user.role == "user"  # continued from Pi's last entry


def test_a_session_another_piwork_holds_follows_its_appends_and_is_taken_over_when_it_lets_go(
    qtbot: QtBot, controller: SessionController, server: LoopbackServer
) -> None:
    path = _saved_session(qtbot, controller, server)
    controller.spawn(controller.open_session(None))  # let the file go, so another piwork can take it
    qtbot.waitUntil(lambda: controller.runtime is not None and controller.runtime.store.path != path)
    with PiworkHolder(path) as holder:
        controller.spawn(controller.open_session(str(path)))
        banner = controller.chat.owner_banner
        qtbot.waitUntil(banner.isVisible, timeout=10_000)
        assert (
            f"(pid {holder.pid}) is writing this session, so it is open read-only here. What"
            in banner.text.text()
        )
        assert banner.take_over_button.text() == TAKE_OVER_WHEN_STOPPED_TEXT
        holder.append("typed in the other window")
        qtbot.waitUntil(lambda: "typed in the other window" in _texts(controller), timeout=10_000)
        banner.take_over_button.click()  # take over as soon as it lets go
        assert banner.waiting_to_take_over
        holder.let_go()
        store = controller.runtime.store  # type: ignore[union-attr]
        qtbot.waitUntil(lambda: not store.read_only, timeout=10_000)
    assert not banner.isVisible()
    assert any("written here again" in text for text in _texts(controller))
    store.tree.append_message({"role": "user", "content": "mine again", "timestamp": 9})
    qtbot.waitUntil(lambda: "mine again" in path.read_text(), timeout=10_000)


def test_appends_from_an_unknown_program_are_followed_and_the_user_takes_over_when_they_choose(
    qtbot: QtBot, controller: SessionController, server: LoopbackServer
) -> None:
    path = _saved_session(qtbot, controller, server)
    banner = controller.chat.owner_banner
    with open(path, "a", encoding="utf-8") as other:  # no Pi runs: nothing tells when it stops
        other.write(serialize(user("ext1", _last_id(path), "appended by a script", 30)))
    qtbot.waitUntil(banner.isVisible, timeout=10_000)
    assert banner.text.text().startswith("Another program is writing this session")
    assert banner.take_over_button.text() == TAKE_OVER_TEXT and not banner.take_over_button.isCheckable()
    qtbot.waitUntil(lambda: "appended by a script" in _texts(controller), timeout=10_000)
    store = controller.runtime.store  # type: ignore[union-attr]
    banner.take_over_button.click()
    qtbot.waitUntil(lambda: not store.read_only and not banner.isVisible(), timeout=10_000)
    store.tree.append_message({"role": "user", "content": "mine again", "timestamp": 9})
    qtbot.waitUntil(lambda: "mine again" in path.read_text(), timeout=10_000)
    assert read_session_file(path).records[-1].parent_id == "ext1"


def test_an_append_that_finds_pi_first_stops_and_the_bar_and_chat_follow(
    qtbot: QtBot, controller: SessionController, server: LoopbackServer
) -> None:
    path = _saved_session(qtbot, controller, server)
    store = controller.runtime.store  # type: ignore[union-attr]
    with PiLikeWriter(Path(controller.cwd)) as pi:
        pi.append(path, user("pi1", _last_id(path), "asked in pi", 30))
        with pytest.raises(SessionReadOnly):  # before the window has seen the change
            store.tree.append_message({"role": "user", "content": "from piwork", "timestamp": 31})
        banner = controller.chat.owner_banner
        qtbot.waitUntil(banner.isVisible, timeout=10_000)
        assert banner.text.text().startswith(f"Pi (pid {pi.pid}) is writing this session")
        qtbot.waitUntil(lambda: "asked in pi" in _texts(controller), timeout=10_000)
    assert _last_id(path) == "pi1"


def test_fork_goes_on_in_a_new_file_and_leaves_the_writers_file_alone(
    qtbot: QtBot, controller: SessionController, server: LoopbackServer
) -> None:
    path = _saved_session(qtbot, controller, server)
    banner = controller.chat.owner_banner
    with PiLikeWriter(Path(controller.cwd)) as pi:
        pi.append(path, user("pi1", _last_id(path), "asked in pi", 30))
        qtbot.waitUntil(lambda: "asked in pi" in _texts(controller), timeout=10_000)
        before = path.read_bytes()
        banner.fork_button.click()
        qtbot.waitUntil(
            lambda: controller.runtime is not None and controller.runtime.store.path != path, timeout=10_000
        )
        forked = controller.runtime.store  # type: ignore[union-attr]
        assert not forked.read_only and not banner.isVisible()
        assert forked.header is not None and forked.header.get("parentSession") == str(path)
        qtbot.waitUntil(lambda: "asked in pi" in _texts(controller), timeout=10_000)
        assert any(text.startswith("Forked") for text in _texts(controller))
        server.script(Turn([Text("in the fork")]))
        controller.submit("go on here")
        qtbot.waitUntil(
            lambda: not controller.chat.busy and "in the fork" in _texts(controller), timeout=10_000
        )
        assert (
            path.read_bytes() == before
            and forked.path is not None
            and "go on here" in forked.path.read_text()
        )


@pytest.mark.oracle
@pytest.mark.skipif(not reference_installed(CLI), reason=MISSING_REASON)
def test_the_real_pi_writing_the_open_session_is_named_followed_and_taken_over_after_it_quits(
    qtbot: QtBot, controller: SessionController, server: LoopbackServer, tmp_path: Path
) -> None:
    path = _saved_session(qtbot, controller, server)
    banner = controller.chat.owner_banner
    pi_agent = tmp_path / "pi-home" / "agent"
    pi_agent.mkdir(parents=True)
    with RealPi(Path(controller.cwd), path, pi_agent) as pi:
        pi.name_session("named in pi")
        qtbot.waitUntil(banner.isVisible, timeout=10_000)
        assert banner.text.text().startswith(f"Pi (pid {pi.pid}) is writing this session")
        store = controller.runtime.store  # type: ignore[union-attr]
        qtbot.waitUntil(lambda: "named in pi" in controller.window.windowTitle(), timeout=10_000)
    qtbot.waitUntil(lambda: "has stopped writing" in banner.text.text(), timeout=10_000)
    written_by_pi = path.read_bytes()
    banner.take_over_button.click()
    qtbot.waitUntil(lambda: not store.read_only, timeout=10_000)
    assert path.read_bytes() == written_by_pi  # taking over writes nothing by itself
