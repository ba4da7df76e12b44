"""The views follow the session in the real window driven by the real engine: the log viewer resets when
another session opens, the composer's placeholder follows the agent, fork/clone/name say what they did,
and the chat scrolls to the bottom on send with a "jump to latest" button when scrolled up."""

from __future__ import annotations

from pathlib import Path

from pytestqt.qtbot import QtBot

from piwork.gui.session_controller import SessionController
from tests.gui.test_session_controller import _rows, controller, server  # noqa: F401  (fixtures)
from tests.support import LoopbackServer, Text, Turn


def _answer(qtbot: QtBot, ctl: SessionController, server: LoopbackServer, text: str, reply: str) -> None:  # noqa: F811
    server.script(Turn([Text(reply)]))
    before = len(_rows(ctl))
    ctl.submit(text)
    qtbot.waitUntil(lambda: not ctl.chat.busy and len(_rows(ctl)) >= before + 2, timeout=10_000)


def test_opening_another_session_resets_the_log_viewer(
    qtbot: QtBot,
    controller: SessionController,  # noqa: F811
    tmp_path: Path,
) -> None:
    log = tmp_path / "bash-previous.log"
    log.write_text("old output\n" * 20)
    window = controller.window
    with qtbot.waitSignal(window.log_panel.full_output.index_finished, timeout=5000):
        window.open_log(str(log))
    first = controller.runtime
    window.action_map["new_session"].trigger()
    qtbot.waitUntil(lambda: controller.runtime not in (None, first), timeout=10_000)
    assert window.log_panel.full_output.path is None
    assert str(log) not in window.log_panel.title_label.text()
