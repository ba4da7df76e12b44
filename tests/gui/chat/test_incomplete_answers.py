"""An answer that ended before the model finished it says so on the answer itself: the output limit, a stop
by the person, a stream that broke off. The output limit and a stop need no card of their own (the note
is on the answer, and its menu offers Retry); a failure keeps its card, which says why."""

from __future__ import annotations

import json

from pytestqt.qtbot import QtBot

from piwork.gui.chat.answer_meta import CUT_NOTE, LIMIT_NOTE, STOPPED_NOTE
from piwork.gui.chat.conversation import prepare_conversation
from piwork.gui.chat.rows import FAILED_TITLE, ChatRow, RowKind
from piwork.gui.session_controller import SessionController
from tests.gui.test_errors_you_can_follow import make, server  # noqa: F401  (fixtures)
from tests.support import Failure, LoopbackServer, Text, Turn


def _rows(ctl: SessionController) -> list[ChatRow]:
    model = ctl.chat.model
    return [model.row_at(i) for i in range(model.rowCount())]


def _answer_rows(ctl: SessionController) -> list[ChatRow]:
    return [r for r in _rows(ctl) if r.kind in (RowKind.TEXT, RowKind.THINKING, RowKind.TOOL)]


def test_an_answer_cut_by_the_output_limit_is_marked(
    qtbot: QtBot,
    make: object,  # noqa: F811
    server: LoopbackServer,  # noqa: F811
) -> None:
    ctl = make({"maxRetries": 0})  # type: ignore[operator]
    server.script(Turn([Text("The guide, part one: first profile the build, then")], stop="length"))
    ctl.submit("write the guide")
    qtbot.waitUntil(lambda: bool(_answer_rows(ctl)) and not ctl.chat.busy, timeout=10_000)
    (answer,) = _answer_rows(ctl)
    assert answer.mark is not None and answer.mark.note == LIMIT_NOTE
    assert "continue" in answer.mark.hint
    assert [r.kind for r in _rows(ctl)] == [RowKind.USER, RowKind.TEXT]  # no separate "truncated" card
    # the note takes a line under the answer
    view = ctl.chat.view
    geo = view.chat_delegate.geometry(answer, view.visualRect(ctl.chat.model.index(1)))
    assert geo.mark.height() > 0 and geo.mark.top() > geo.body.bottom()
    # read back from the session file, the same
    path = ctl.runtime.store.path  # type: ignore[union-attr]
    assert path is not None
    saved = [json.loads(line) for line in path.read_text().splitlines()]
    reopened = prepare_conversation([e["message"] for e in saved if e.get("type") == "message"])
    marks = [r.mark.note for r in reopened.rows if r.mark is not None]
    assert marks == [LIMIT_NOTE] and len(reopened.rows) == 2


def test_a_stopped_answer_is_marked_and_offers_retry(
    qtbot: QtBot,
    make: object,  # noqa: F811
    server: LoopbackServer,  # noqa: F811
) -> None:
    ctl = make({"maxRetries": 0})  # type: ignore[operator]
    words = " ".join(f"w{i}" for i in range(400))
    server.script(Turn([Text(words)], drip=0.02))
    ctl.submit("talk a lot")
    qtbot.waitUntil(lambda: any(r.kind is RowKind.TEXT and r.text for r in _rows(ctl)), timeout=10_000)
    ctl.chat.send_button.click()  # Stop
    qtbot.waitUntil(lambda: not ctl.chat.busy, timeout=10_000)
    rows = _rows(ctl)
    assert [r.kind for r in rows] == [RowKind.USER, RowKind.TEXT]  # the note, not a "Stopped" card too
    answer = rows[1]
    assert answer.mark is not None and answer.mark.note == STOPPED_NOTE
    assert 0 < len(answer.text) < len(words)
    # the answer's menu offers Retry (the Stopped card used to)
    server.script(Turn([Text("Short now.")]))
    task = ctl.reply_again.request("retry", answer.key)
    assert task is not None
    qtbot.waitUntil(lambda: any(r.text == "Short now." for r in _rows(ctl)), timeout=10_000)


def test_a_stream_that_broke_off_is_marked_under_its_failure_card(
    qtbot: QtBot,
    make: object,  # noqa: F811
    server: LoopbackServer,  # noqa: F811
) -> None:
    ctl = make({"maxRetries": 0})  # type: ignore[operator]
    server.script(Turn([Text("Here is the first half of it, and the rest would")], failure=Failure.cut(6)))
    ctl.submit("explain")
    qtbot.waitUntil(lambda: any(r.title == FAILED_TITLE for r in _rows(ctl)), timeout=10_000)
    qtbot.waitUntil(lambda: not ctl.chat.busy, timeout=10_000)
    rows = _rows(ctl)
    answer = next(r for r in rows if r.kind is RowKind.TEXT)
    assert answer.text.startswith("Here is")
    assert answer.mark is not None and answer.mark.note == CUT_NOTE
    assert rows[-1].kind is RowKind.ERROR and rows[-1].title == FAILED_TITLE  # why it failed, once


def test_a_stop_before_anything_came_keeps_its_card() -> None:
    stopped = {
        "role": "assistant",
        "content": [],
        "stopReason": "aborted",
        "errorMessage": "Stopped by you.",
        "model": "m",
        "timestamp": 1,
    }
    rows = prepare_conversation([stopped]).rows
    assert [(r.kind, r.title) for r in rows] == [(RowKind.NOTICE, "Stopped")]  # nothing to mark
