"""``!cmd`` and ``!!cmd`` typed in the composer: a real shell command runs in a worker, its output streams
into a card in the chat, it is written to the session file as Pi writes it, and the next request to the
(loopback) provider carries its output, or, for ``!!``, does not."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from piwork.gui.chat.chat_panel import user_command
from piwork.gui.chat.rows import ChatRow, RowKind
from piwork.gui.session_controller import SessionController
from tests.gui.test_session_controller import controller, server  # noqa: F401  (fixtures)
from tests.support import LoopbackServer, Text, Turn


def _shell_rows(ctl: SessionController) -> list[ChatRow]:
    model = ctl.chat.model
    rows = [model.row_at(i) for i in range(model.rowCount())]
    return [r for r in rows if r.kind is RowKind.TOOL and r.title.startswith("user shell")]


def _saved(ctl: SessionController) -> list[dict[str, Any]]:
    path = ctl.runtime.store.path  # type: ignore[union-attr]
    assert path is not None
    return [json.loads(line) for line in path.read_text().splitlines()]


def _roles(ctl: SessionController) -> list[str]:
    return [e["message"]["role"] for e in _saved(ctl) if e.get("type") == "message"]


def _saved_shell(ctl: SessionController) -> dict[str, Any]:
    return next(
        e["message"]
        for e in _saved(ctl)
        if e.get("type") == "message" and e["message"]["role"] == "bashExecution"
    )


def _type(ctl: SessionController, text: str) -> None:
    ctl.chat.composer.set_text(text)
    ctl.chat.composer.submit()


def _request_text(loopback: LoopbackServer) -> str:
    return json.dumps(loopback.requests[-1].body)


def test_the_bang_forms_are_read_from_the_editor() -> None:
    assert user_command("!ls -la") == ("ls -la", False)
    assert user_command("  !! git status ") == ("git status", True)
    assert user_command("!") is None and user_command("!!  ") is None and user_command("hi !x") is None


def test_output_streams_into_the_chat_and_reaches_the_model_with_the_next_message(
    qtbot: QtBot,
    controller: SessionController,  # noqa: F811
    server: LoopbackServer,  # noqa: F811
    tmp_path: Path,
) -> None:
    gate = tmp_path / "go"
    # "first" comes out at once; the command waits for the test's go-ahead before "second" and its end
    _type(controller, f"!printf 'first\\n'; while [ ! -e {gate} ]; do sleep 0.05; done; printf 'second\\n'")
    qtbot.waitUntil(lambda: bool(_shell_rows(controller)), timeout=5000)
    card = _shell_rows(controller)[0].tool
    assert card is not None
    qtbot.waitUntil(lambda: "first" in card.result_text, timeout=10_000)
    assert card.status == "running" and "second" not in card.result_text  # streamed, still running
    assert controller.chat.composer.isEnabled()  # the window answers while the command runs
    gate.touch()
    qtbot.waitUntil(lambda: card.status == "done", timeout=10_000)
    assert card.result_text == "first\nsecond\n"
    assert _shell_rows(controller)[0].title == "user shell"
    qtbot.waitUntil(lambda: any(m.get("role") == "bashExecution" for m in controller.session.messages))  # type: ignore[union-attr]

    server.script(Turn([Text("It printed first and second.")]))
    _type(controller, "what did it print?")
    qtbot.waitUntil(lambda: len(server.requests) == 1 and not controller.chat.busy, timeout=10_000)
    sent = _request_text(server)
    assert "Ran `printf" in sent and "first\\nsecond" in sent
    assert _roles(controller) == ["bashExecution", "user", "assistant"]
    assert len(_shell_rows(controller)) == 1  # the card it streamed into, not a second one once recorded
    shell = _saved_shell(controller)
    assert shell["output"] == "first\nsecond\n" and shell["exitCode"] == 0 and shell["cancelled"] is False
    assert "excludeFromContext" not in shell


def test_double_bang_is_shown_and_saved_but_never_sent(
    qtbot: QtBot,
    controller: SessionController,  # noqa: F811
    server: LoopbackServer,  # noqa: F811
) -> None:
    _type(controller, "!!echo kept-from-the-model; exit 3")
    qtbot.waitUntil(lambda: bool(_shell_rows(controller)), timeout=5000)
    row = _shell_rows(controller)[0]
    assert row.tool is not None and row.title == "user shell, not sent to the model"
    qtbot.waitUntil(lambda: row.tool is not None and row.tool.status == "error", timeout=10_000)  # exit 3
    server.script(Turn([Text("ok")]))
    _type(controller, "hello")
    qtbot.waitUntil(lambda: len(server.requests) == 1 and not controller.chat.busy, timeout=10_000)
    assert "kept-from-the-model" not in _request_text(server)
    shell = _saved_shell(controller)
    assert shell["excludeFromContext"] is True and shell["exitCode"] == 3
    assert shell["output"] == "kept-from-the-model\n"


def test_a_command_ended_while_the_agent_works_is_saved_after_the_run(
    qtbot: QtBot,
    controller: SessionController,  # noqa: F811
    server: LoopbackServer,  # noqa: F811
) -> None:
    server.script(Turn([Text("a slow reply " * 80)], drip=0.05))  # streams for 8 s or more
    _type(controller, "take your time")
    qtbot.waitUntil(lambda: controller.chat.busy, timeout=5000)
    _type(controller, "!echo meanwhile")
    qtbot.waitUntil(lambda: bool(_shell_rows(controller)), timeout=5000)
    card = _shell_rows(controller)[0].tool
    assert card is not None
    qtbot.waitUntil(lambda: card.status == "done", timeout=10_000)
    assert controller.chat.busy  # the reply is still streaming: the command waits to be recorded
    assert "bashExecution" not in _roles(controller)
    qtbot.waitUntil(lambda: not controller.chat.busy, timeout=30_000)
    qtbot.waitUntil(lambda: "bashExecution" in _roles(controller), timeout=5000)
    assert _roles(controller) == ["user", "assistant", "bashExecution"]
    assert len(_shell_rows(controller)) == 1


def test_escape_stops_a_running_command(
    qtbot: QtBot,
    controller: SessionController,  # noqa: F811
) -> None:
    threads_before = threading.active_count()
    _type(controller, "!echo started; sleep 30")
    qtbot.waitUntil(lambda: bool(_shell_rows(controller)), timeout=5000)
    card = _shell_rows(controller)[0].tool
    assert card is not None
    qtbot.waitUntil(lambda: "started" in card.result_text, timeout=10_000)
    assert threading.active_count() > threads_before  # it runs in a worker thread, not on the window's
    _type(controller, "!echo second")  # one at a time: the second waits in the editor
    assert controller.chat.composer.toPlainText() == "!echo second"
    qtbot.keyClick(controller.chat.composer, Qt.Key.Key_Escape)
    qtbot.waitUntil(lambda: card.status == "error", timeout=10_000)
    session = controller.session
    assert session is not None
    # recorded (a new session's file is written with its first reply, as Pi writes it)
    qtbot.waitUntil(lambda: any(m.get("role") == "bashExecution" for m in session.messages), timeout=5000)
    shell = next(m for m in session.messages if m.get("role") == "bashExecution")
    assert shell["cancelled"] is True and "exitCode" not in shell and shell["output"].startswith("started")
