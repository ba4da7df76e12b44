"""A tool call that got no result and never will reads as such on its card, never as a call still waiting:
a call in a reply that was stopped or failed never ran (its reply is left out of every request, as Pi 1.6
leaves it), and a call the session holds no result for (the agent ended while it ran) has "no result
recorded" (the model is told it has none). Only a session another program writes may still be running the
calls it ends with: those stay pending until their results come. Read from real session files, and shown
the same way live when a reply is stopped while it writes a call."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from PySide6.QtCore import QSettings
from pytestqt.qtbot import QtBot

from piwork.core.paths import agent_dir
from piwork.core.session import open_session
from piwork.core.session.reader import read_session_file
from piwork.gui.chat.conversation import (
    adopt_preview,
    prepare_earlier,
    prepare_preview,
    prepare_session_conversation,
)
from piwork.gui.chat.rows import ChatRow, RowKind
from piwork.gui.chat.tool_card import ToolCard
from piwork.gui.chat.tool_views import view_for
from piwork.gui.main_window import MainWindow
from piwork.gui.notifications import NotificationCenter
from piwork.gui.session_controller import SessionController
from piwork.gui.theme import load_theme
from tests.core.session.helpers import HEADER, stamp, write_session
from tests.gui.test_session_owner import controller  # noqa: F401  (a fixture)
from tests.support import LoopbackServer, Text, ToolCall, Turn
from tests.support.pi_like_writer import PiLikeWriter

USAGE = {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2}


def _entry(entry_id: str, parent: str | None, second: int, message: dict[str, Any]) -> dict[str, Any]:
    message = {"timestamp": 1733234400000 + second * 1000, **message}
    return {
        "type": "message",
        "id": entry_id,
        "parentId": parent,
        "timestamp": stamp(second),
        "message": message,
    }


def _prompt(entry_id: str, parent: str | None, second: int, text: str) -> dict[str, Any]:
    return _entry(entry_id, parent, second, {"role": "user", "content": text})


def _reply(
    entry_id: str,
    parent: str,
    second: int,
    calls: list[tuple[str, str, dict[str, Any]]],
    stop: str,
    **extra: Any,
) -> dict[str, Any]:
    content: list[dict[str, Any]] = [{"type": "text", "text": "Let me look."}]
    content += [{"type": "toolCall", "id": cid, "name": name, "arguments": args} for cid, name, args in calls]
    message = {
        "role": "assistant",
        "content": content,
        "api": "anthropic-messages",
        "provider": "anthropic",
        "model": "claude-sonnet-4-5",
        "usage": USAGE,
        "stopReason": stop,
        **extra,
    }
    return _entry(entry_id, parent, second, message)


def _result(entry_id: str, parent: str, second: int, call_id: str, name: str, text: str) -> dict[str, Any]:
    message = {
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": name,
        "content": [{"type": "text", "text": text}],
        "isError": False,
    }
    return _entry(entry_id, parent, second, message)


def _stopped_session(tmp_path: Path) -> Path:
    """A read answered, then a reply stopped after it wrote a bash call, then a reply that failed after a
    write call, then a prompt and a reply calling ls whose result the session never got (its agent ended)."""
    entries = [
        _prompt("u1", None, 1, "what is here?"),
        _reply("a1", "u1", 2, [("c_read", "read", {"path": "README.md"})], "toolUse"),
        _result("r1", "a1", 3, "c_read", "read", "# Project"),
        _reply(
            "a2", "r1", 4, [("c_bash", "bash", {"command": "make test"})], "aborted", errorMessage="aborted"
        ),
        _prompt("u2", "a2", 5, "write the notes"),
        _reply(
            "a3",
            "u2",
            6,
            [("c_write", "write", {"path": "notes.md", "content": "x"})],
            "error",
            errorMessage="Connection error.",
        ),
        _prompt("u3", "a3", 7, "list the folder"),
        _reply("a4", "u3", 8, [("c_ls", "ls", {"path": "."})], "toolUse"),
    ]
    return write_session(tmp_path / "stopped.jsonl", entries, {**HEADER, "cwd": str(tmp_path)})


def _opened(path: Path, read_only_reason: str | None = None) -> SimpleNamespace:
    """The session file as the window's session holds it: its tree and the messages the model sees."""
    store = open_session(path, writable=False)
    return SimpleNamespace(
        tree=store.tree, messages=store.tree.build_context().messages, read_only_reason=read_only_reason
    )


def _badges(card: ToolCard) -> list[str]:
    return [badge.text for badge in view_for(card.name).badges(card)]


def _body(card: ToolCard, expanded: bool = True) -> str:
    return view_for(card.name).body(card, expanded)


def test_a_saved_call_of_a_stopped_or_failed_reply_reads_not_run(tmp_path: Path) -> None:
    conversation = prepare_session_conversation(_opened(_stopped_session(tmp_path)))
    cards = conversation.cards
    assert cards["c_read"].status == "done" and _badges(cards["c_read"]) == []
    stopped, failed = cards["c_bash"], cards["c_write"]
    # the stop the live chat shows (■), and why it never ran: never a pending ○
    assert stopped.status == "aborted" and failed.status == "aborted"
    assert _badges(stopped) == ["not run · reply stopped"]
    assert _badges(failed) == ["not run · reply failed"]  # an approval card's default view says the same
    assert "Not run — the reply was stopped" in _body(stopped)
    assert "Not run — the reply ended with an error" in _body(failed)
    assert "make test" in _body(stopped)  # the arguments are still there on the open card
    copied = view_for(stopped.name).copy_text(stopped)
    assert copied.startswith("bash make test") and "Not run — the reply was stopped" in copied


def test_a_saved_call_with_no_result_reads_no_result_recorded(tmp_path: Path) -> None:
    conversation = prepare_session_conversation(_opened(_stopped_session(tmp_path)))
    missing = conversation.cards["c_ls"]
    assert missing.status == "aborted"
    assert _badges(missing) == ["no result recorded"]
    assert "No result recorded" in _body(missing, expanded=False)
    assert "the model is told it has none" in _body(missing, expanded=False)


def test_a_call_left_without_result_before_the_next_prompt_reads_no_result_recorded(tmp_path: Path) -> None:
    entries = [
        _prompt("u1", None, 1, "run it"),
        _reply("a1", "u1", 2, [("c1", "bash", {"command": "sleep 600"})], "toolUse"),
        _prompt("u2", "a1", 3, "what happened?"),  # the agent was killed; the person went on
        _entry(
            "a2",
            "u2",
            4,
            {
                "role": "assistant",
                "content": [{"type": "text", "text": "It ended."}],
                "stopReason": "stop",
                "usage": USAGE,
            },
        ),
    ]
    path = write_session(tmp_path / "killed.jsonl", entries, {**HEADER, "cwd": str(tmp_path)})
    for read_only in (None, "Pi is writing this session"):  # it cannot be running: the session went on
        card = prepare_session_conversation(_opened(path, read_only)).cards["c1"]
        assert card.status == "aborted" and _badges(card) == ["no result recorded"]


def test_a_session_another_program_writes_keeps_the_calls_it_ends_with_pending(tmp_path: Path) -> None:
    session = _opened(_stopped_session(tmp_path), "Pi is writing this session")
    conversation = prepare_session_conversation(session)
    running = conversation.cards["c_ls"]
    assert running.status == "pending" and _badges(running) == []  # Pi may be running it now
    assert conversation.cards["c_bash"].status == "aborted"  # a stopped reply's call never runs
    assert _badges(conversation.cards["c_bash"]) == ["not run · reply stopped"]


def test_a_preview_ending_on_a_call_is_not_adopted_so_the_session_decides(tmp_path: Path) -> None:
    """The rows shown while a session opens are built before anyone knows who writes the file: when the
    branch ends on a call without a result, they are built again once the session says."""
    session = _opened(_stopped_session(tmp_path))
    messages = session.messages
    preview = prepare_preview(messages[-2:])
    assert preview.cards["c_ls"].status == "aborted"
    assert adopt_preview(preview, messages) is None
    answered = prepare_preview(messages[:3])  # ends on the read's result: kept
    assert adopt_preview(answered, messages[:3]) is not None


def test_the_earlier_rows_of_a_long_branch_mark_their_calls_too(tmp_path: Path) -> None:
    entries: list[dict[str, Any]] = []
    parent: str | None = None
    for i in range(30):
        entries.append(_prompt(f"u{i}", parent, 2 * i, f"step {i}"))
        stop = "aborted" if i == 0 else "stop"
        calls = [(f"c{i}", "read", {"path": f"f{i}"})] if i == 0 else []
        entries.append(_reply(f"a{i}", f"u{i}", 2 * i + 1, calls, stop))
        parent = f"a{i}"
    path = write_session(tmp_path / "long.jsonl", entries, {**HEADER, "cwd": str(tmp_path)})
    session = _opened(path, "Pi is writing this session")
    tail = prepare_session_conversation(session, tail=10)
    assert tail.earlier and "c0" not in tail.cards
    first = prepare_earlier(tail).cards["c0"]
    assert first.status == "aborted" and _badges(first) == ["not run · reply stopped"]


# ---- in the window ---------------------------------------------------------------------------------


@pytest.fixture
def server() -> Iterator[LoopbackServer]:
    with LoopbackServer() as running:
        yield running


def _window_on(qtbot: QtBot, tmp_path: Path, server: LoopbackServer, path: Path | None) -> SessionController:
    adir = agent_dir()
    provider = {
        "baseUrl": server.url,
        "api": "anthropic-messages",
        "apiKey": "test-key",
        "models": [{"id": "loopback-model", "contextWindow": 200000, "maxTokens": 4096}],
    }
    (adir / "models.json").write_text(json.dumps({"providers": {"loopback": provider}}))
    settings = {"defaultProvider": "loopback", "defaultModel": "loopback-model", "retry": {"maxRetries": 0}}
    (adir / "settings.json").write_text(json.dumps(settings))
    window = MainWindow(QSettings(str(tmp_path / "w.ini"), QSettings.Format.IniFormat), load_theme("light"))
    qtbot.addWidget(window)
    window.resize(1000, 700)
    window.show()
    ctl = SessionController(window, NotificationCenter(window), str(tmp_path), adir, approve=False, env={})
    ctl.spawn(ctl.open_session(str(path) if path is not None else None))
    qtbot.waitUntil(lambda: ctl.runtime is not None, timeout=20_000)
    return ctl


def _shutdown(qtbot: QtBot, qloop: asyncio.AbstractEventLoop, ctl: SessionController) -> None:
    ctl.notifications.close_all()
    done = qloop.create_task(ctl.shutdown())
    qtbot.waitUntil(done.done, timeout=10_000)


def _tool_rows(ctl: SessionController) -> list[ChatRow]:
    model = ctl.chat.model
    return [row for row in (model.row_at(i) for i in range(model.rowCount())) if row.kind is RowKind.TOOL]


def test_an_opened_session_shows_its_unrun_calls_as_not_run(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, tmp_path: Path, server: LoopbackServer
) -> None:
    ctl = _window_on(qtbot, tmp_path, server, _stopped_session(tmp_path))
    try:
        qtbot.waitUntil(lambda: len(_tool_rows(ctl)) == 4, timeout=10_000)
        cards = {row.tool.call_id: row.tool for row in _tool_rows(ctl) if row.tool is not None}
        assert {cid: (card.status, tuple(_badges(card))) for cid, card in cards.items()} == {
            "c_read": ("done", ()),
            "c_bash": ("aborted", ("not run · reply stopped",)),
            "c_write": ("aborted", ("not run · reply failed",)),
            "c_ls": ("aborted", ("no result recorded",)),
        }
        # the badge takes room in the header, before the summary's end, and is painted
        view = ctl.chat.view
        row = next(r for r in _tool_rows(ctl) if r.tool is not None and r.tool.call_id == "c_bash")
        position = next(i for i in range(ctl.chat.model.rowCount()) if ctl.chat.model.row_at(i) is row)
        geo = view.chat_delegate.geometry(row, view.visualRect(ctl.chat.model.index(position)))
        assert [badge.text for _rect, badge in geo.badges] == ["not run · reply stopped"]
        assert geo.badges[0][0].width() > 0 and geo.badges[0][0].right() < geo.header.right()
        assert not view.grab().isNull()
    finally:
        _shutdown(qtbot, qloop, ctl)


def test_a_call_stopped_live_reads_as_it_will_when_reopened(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, tmp_path: Path, server: LoopbackServer
) -> None:
    ctl = _window_on(qtbot, tmp_path, server, None)
    try:
        call = ToolCall("bash", {"command": "echo " + "x" * 400}, id="toolu_live")
        server.script(Turn([Text("Running it."), call], drip=0.05))
        ctl.submit("run the command")
        qtbot.waitUntil(lambda: bool(_tool_rows(ctl)), timeout=10_000)
        ctl.chat.send_button.click()  # Stop, while the call's arguments stream
        qtbot.waitUntil(lambda: not ctl.chat.busy, timeout=10_000)
        (row,) = _tool_rows(ctl)
        assert row.tool is not None
        live = (row.tool.status, _badges(row.tool), _body(row.tool))
        assert live[:2] == ("aborted", ["not run · reply stopped"])
        path = ctl.runtime.store.path  # type: ignore[union-attr]
        assert path is not None
        saved = [json.loads(line) for line in path.read_text().splitlines()]
        assert [e["message"].get("stopReason") for e in saved if e.get("type") == "message"][-1] == "aborted"
    finally:
        _shutdown(qtbot, qloop, ctl)
    reopened = prepare_session_conversation(_opened(path))
    card = reopened.cards[row.tool.call_id]
    assert (card.status, _badges(card)) == live[:2]
    assert "Not run — the reply was stopped" in live[2] and _body(card).endswith(live[2].split("\n")[-1])


def test_a_call_pi_is_running_in_a_session_it_writes_stays_pending_until_its_result(
    qtbot: QtBot,
    controller: SessionController,  # noqa: F811
    server: LoopbackServer,
) -> None:
    server.script(Turn([Text("first answer")]))
    controller.submit("first question")
    qtbot.waitUntil(
        lambda: not controller.chat.busy and controller.chat.model.rowCount() == 2, timeout=10_000
    )
    assert controller.runtime is not None and controller.runtime.store.path is not None
    path = controller.runtime.store.path
    with PiLikeWriter(Path(controller.cwd)) as pi:
        pi.append(path, _prompt("pi1", str(read_session_file(path).records[-1].id), 30, "run the tests"))
        pi.append(path, _reply("pi2", "pi1", 31, [("c_pi", "bash", {"command": "make test"})], "toolUse"))
        qtbot.waitUntil(lambda: bool(_tool_rows(controller)), timeout=10_000)
        (row,) = _tool_rows(controller)
        assert row.tool is not None
        assert controller.runtime.store.read_only
        assert row.tool.status == "pending" and _badges(row.tool) == []  # Pi is running it
        pi.append(path, _result("pi3", "pi2", 32, "c_pi", "bash", "42 passed"))
        qtbot.waitUntil(
            lambda: [r.tool.status for r in _tool_rows(controller) if r.tool is not None] == ["done"],
            timeout=10_000,
        )
