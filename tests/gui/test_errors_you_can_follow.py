"""Failures read as one story: one card per failed prompt showing each retry as it happens and the outcome,
the provider's message instead of raw JSON, failed attempts marked in the session tree, "nothing to
compact" as information, and a silent model shown as a live "waiting for the model… N s"."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings, Qt
from pytestqt.qtbot import QtBot

from piwork.core.paths import agent_dir
from piwork.gui.chat.rows import ChatRow, RowKind
from piwork.gui.main_window import MainWindow
from piwork.gui.notifications import NotificationCenter
from piwork.gui.session_controller import SessionController
from piwork.gui.theme import load_theme
from piwork.gui.tree.display_tree import entry_title
from tests.support import Failure, LoopbackServer, Text, Turn

RATE_LIMIT = json.dumps(
    {
        "type": "error",
        "error": {"type": "rate_limit_error", "message": "Number of requests has exceeded your rate limit"},
    }
)


@pytest.fixture
def server() -> Iterator[LoopbackServer]:
    with LoopbackServer() as running:
        yield running


def _start(
    qtbot: QtBot, tmp_path: Path, server: LoopbackServer, retry: dict[str, int]
) -> tuple[SessionController, NotificationCenter]:
    adir = agent_dir()
    models = {
        "providers": {
            "loopback": {
                "baseUrl": server.url,
                "api": "anthropic-messages",
                "apiKey": "test-key",
                "models": [{"id": "loopback-model", "contextWindow": 200000, "maxTokens": 4096}],
            }
        }
    }
    (adir / "models.json").write_text(json.dumps(models))
    settings = {"defaultProvider": "loopback", "defaultModel": "loopback-model", "retry": retry}
    (adir / "settings.json").write_text(json.dumps(settings))
    project = tmp_path / "project"
    project.mkdir()
    window = MainWindow(QSettings(str(tmp_path / "w.ini"), QSettings.Format.IniFormat), load_theme("light"))
    qtbot.addWidget(window)
    window.show()
    notifications = NotificationCenter(window)
    ctl = SessionController(window, notifications, str(project), adir, approve=False, env={})
    ctl.spawn(ctl.open_session(None))
    qtbot.waitUntil(lambda: ctl.runtime is not None, timeout=10_000)
    return ctl, notifications


@pytest.fixture
def make(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, tmp_path: Path, server: LoopbackServer
) -> Iterator[object]:
    made: list[tuple[SessionController, NotificationCenter]] = []

    def factory(retry: dict[str, int]) -> SessionController:
        made.append(_start(qtbot, tmp_path, server, retry))
        return made[-1][0]

    yield factory
    for ctl, notifications in made:
        done = qloop.create_task(ctl.shutdown())
        qtbot.waitUntil(done.done, timeout=10_000)
        notifications.close_all()


def _rows(ctl: SessionController) -> list[ChatRow]:
    model = ctl.chat.model
    return [model.row_at(i) for i in range(model.rowCount())]


def _cards(ctl: SessionController) -> list[ChatRow]:
    return [r for r in _rows(ctl) if r.kind in (RowKind.ERROR, RowKind.NOTICE)]


def test_retries_show_on_one_card_that_counts_down_and_ends_with_the_outcome(
    qtbot: QtBot, make: object, server: LoopbackServer
) -> None:
    ctl = make({"maxRetries": 3, "baseDelayMs": 1500})  # type: ignore[operator]
    server.script(
        Turn(failure=Failure.http(429, RATE_LIMIT)),
        Turn(failure=Failure.http(503, '{"error": {"message": "upstream overloaded, try later"}}')),
        Turn([Text("Finally an answer.")]),
    )
    ctl.submit("hello")
    qtbot.waitUntil(
        lambda: any(c.title.startswith("Retrying — attempt 2 of 4 in") for c in _cards(ctl)), timeout=10_000
    )
    card = _cards(ctl)[0]
    first_title = card.title
    assert "Attempt 1 of 4 failed" in card.text
    assert (
        "limiting how often" in card.text and "Number of requests has exceeded your rate limit" in card.text
    )
    assert "{" not in card.text and "rate_limit_error" in card.text
    qtbot.waitUntil(lambda: card.title != first_title, timeout=5000)  # the wait counts down in place
    qtbot.waitUntil(lambda: not ctl.chat.busy, timeout=20_000)
    cards = _cards(ctl)
    assert cards == [card], [(c.title, c.text) for c in cards]
    assert card.kind is RowKind.NOTICE and card.title == "Recovered: attempt 3 of 4 succeeded"
    assert "Attempt 2 of 4 failed" in card.text and "upstream overloaded, try later" in card.text
    assert _rows(ctl)[-1].text == "Finally an answer."

    # The session tree names the failed attempts as failures, not "(no text)".
    tree = ctl.runtime.store.tree  # type: ignore[union-attr]
    titles = [entry_title(r, tree) for r in tree.records if r.type == "message" and r.role == "assistant"]
    assert [t.startswith("assistant: ✗ failed") for t in titles] == [True, True, False]
    assert "429 Too Many Requests" in titles[0] and "(no text)" not in " ".join(titles)
    index = _find(ctl.window.tree_panel.model, "✗ failed")
    assert index is not None
    assert index.data(Qt.ItemDataRole.ForegroundRole).color().red() > 150


def _find(model: object, needle: str) -> object:
    from PySide6.QtCore import QModelIndex

    pending = [QModelIndex()]
    while pending:
        parent = pending.pop()
        for row in range(model.rowCount(parent)):  # type: ignore[attr-defined]
            index = model.index(row, 0, parent)  # type: ignore[attr-defined]
            if needle in str(index.data()):
                return index
            pending.append(index)
    return None


def test_exhausted_retries_end_on_the_same_card(qtbot: QtBot, make: object, server: LoopbackServer) -> None:
    ctl = make({"maxRetries": 1, "baseDelayMs": 50})  # type: ignore[operator]
    overloaded = '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}'
    server.script(Turn(failure=Failure.http(529, overloaded)), Turn(failure=Failure.http(529, overloaded)))
    ctl.submit("hello")
    qtbot.waitUntil(lambda: server.pending == 0 and not ctl.chat.busy, timeout=20_000)
    cards = _cards(ctl)
    assert len(cards) == 1, [(c.title, c.text) for c in cards]
    card = cards[0]
    assert card.kind is RowKind.ERROR and card.title == "The reply failed after 2 attempts"
    assert card.text.count("failed — The provider is overloaded: 529 · Overloaded (overloaded_error)") == 2
    assert "overloaded" in card.hint


def test_a_single_failure_reads_the_providers_message(
    qtbot: QtBot, make: object, server: LoopbackServer
) -> None:
    ctl = make({"maxRetries": 0})  # type: ignore[operator]
    body = (
        '{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: must be positive"}}'
    )
    server.script(Turn(failure=Failure.http(400, body)))
    ctl.submit("hello")
    qtbot.waitUntil(lambda: bool(_cards(ctl)) and not ctl.chat.busy, timeout=10_000)
    (card,) = _cards(ctl)
    assert card.text == "400 Bad Request · max_tokens: must be positive (invalid_request_error)"


def test_nothing_to_compact_is_one_notice(qtbot: QtBot, make: object) -> None:
    ctl = make({})  # type: ignore[operator]
    ctl.chat.composer.setPlainText("/compact")
    ctl.chat.composer.submit()
    qtbot.waitUntil(lambda: any(c.title == "Nothing to compact" for c in _cards(ctl)), timeout=10_000)
    qtbot.waitUntil(lambda: not ctl.tasks or all(t.done() for t in ctl.tasks), timeout=10_000)
    qtbot.wait(50)  # let a second report, if any, arrive
    cards = _cards(ctl)
    assert [(c.kind, c.title) for c in cards] == [(RowKind.NOTICE, "Nothing to compact")]
    assert ctl.notifications.open_boxes == []


def test_a_silent_model_shows_a_live_waiting_indicator(
    qtbot: QtBot, make: object, server: LoopbackServer
) -> None:
    ctl = make({"maxRetries": 0})  # type: ignore[operator]
    server.script(Turn(failure=Failure.hang()))
    composer_pos = ctl.chat.composer.mapTo(ctl.window, ctl.chat.composer.rect().topLeft())
    ctl.submit("hello")
    label = ctl.chat.waiting_label
    qtbot.waitUntil(label.isVisible, timeout=10_000)
    first = re.search(r"Waiting for the model… (\d+) s", label.text())
    assert first is not None and int(first.group(1)) >= 2, label.text()

    def counted_on() -> bool:
        now = re.search(r"Waiting for the model… (\d+) s", label.text())
        return now is not None and int(now.group(1)) > int(first.group(1))

    qtbot.waitUntil(counted_on, timeout=5000)  # it counts the seconds live
    assert ctl.chat.composer.mapTo(ctl.window, ctl.chat.composer.rect().topLeft()) == composer_pos
    ctl.sending.stop()
    qtbot.waitUntil(lambda: not ctl.chat.busy, timeout=10_000)
    assert not label.isVisible()


def test_engine_notices_have_titles_in_words(qtbot: QtBot) -> None:
    from piwork.core.agent.events import ErrorNotice
    from piwork.gui.chat.chat_panel import ChatPanel

    panel = ChatPanel()
    qtbot.addWidget(panel)
    panel.presenter.handle(ErrorNotice("Retry-After of 300 s is over the limit", "retry"))
    panel.presenter.handle(ErrorNotice("disk full", "session file"))
    rows = [panel.model.row_at(i) for i in range(panel.model.rowCount())]
    assert [(r.kind, r.title) for r in rows] == [
        (RowKind.NOTICE, "Not retried"),
        (RowKind.ERROR, "Not saved to the session file"),
    ]


def test_a_failed_compaction_reads_the_providers_message(qtbot: QtBot) -> None:
    from piwork.core.agent.events import CompactionEnd, CompactionStart
    from piwork.gui.chat.chat_panel import ChatPanel

    panel = ChatPanel()
    qtbot.addWidget(panel)
    panel.presenter.handle(CompactionStart("manual"))
    body = '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}'
    panel.presenter.handle(CompactionEnd("manual", None, False, False, f"Compaction failed: 529 {body}"))
    row = panel.model.row_at(0)
    assert row.kind is RowKind.ERROR and row.text == "Compaction failed: 529 · Overloaded (overloaded_error)"
