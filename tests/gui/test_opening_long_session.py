"""Opening a long session in the real window: the chat shows the leaf's last messages as soon as the file
is read, before the whole context is built (its rows kept once it is), and the composer takes input; the
chat shows before the session tree is laid out (in a worker); the tree arrives after with the leaf selected, as
it would have at once, and a search hit chosen meanwhile is selected once it is there. The file's totals
(every entry read) are counted off the GUI thread once the chat shows, and reach the footer."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QSettings
from pytestqt.qtbot import QtBot

import piwork.gui.tree.tree_panel as tree_panel_module
from piwork.core.paths import agent_dir
from piwork.core.session import SessionTree
from piwork.gui.chat.rows import RowKind
from piwork.gui.main_window import MainWindow
from piwork.gui.notifications import NotificationCenter
from piwork.gui.search.landing import select_in_tree
from piwork.gui.session_controller import SessionController
from piwork.gui.theme import load_theme
from piwork.gui.tree.tree_model import ENTRY_ID_ROLE
from tests.support.long_session import long_conversation, write_session_of

MESSAGES = 2_000


def _configure() -> None:
    adir = agent_dir()
    provider = {
        "baseUrl": "http://127.0.0.1:9",
        "api": "anthropic-messages",
        "apiKey": "test-key",
        "models": [{"id": "loopback-model", "contextWindow": 200000, "maxTokens": 4096}],
    }
    (adir / "models.json").write_text(json.dumps({"providers": {"loopback": provider}}))
    (adir / "settings.json").write_text(
        json.dumps({"defaultProvider": "loopback", "defaultModel": "loopback-model"})
    )


@pytest.fixture
def gate(monkeypatch: pytest.MonkeyPatch) -> Iterator[threading.Event]:
    """Holds the session tree's layout worker until set (as a slow machine would)."""
    release = threading.Event()
    build = tree_panel_module.build_display_tree

    def held(*args: Any, **kwargs: Any) -> Any:
        release.wait(30)
        return build(*args, **kwargs)

    monkeypatch.setattr(tree_panel_module, "build_display_tree", held)
    yield release
    release.set()


@pytest.fixture
def window(qtbot: QtBot, tmp_path: Path) -> MainWindow:
    _configure()
    shown = MainWindow(QSettings(str(tmp_path / "w.ini"), QSettings.Format.IniFormat), load_theme("light"))
    qtbot.addWidget(shown)
    shown.resize(1200, 800)
    shown.show()
    return shown


def _opened(
    qtbot: QtBot, window: MainWindow, tmp_path: Path, qloop: asyncio.AbstractEventLoop, cost: float = 0.0
) -> Iterator[tuple[SessionController, list[dict[str, Any]]]]:
    """A session of ``MESSAGES`` messages opened in the window; each reply billed ``cost``."""
    project = tmp_path / "project"
    project.mkdir()
    session = tmp_path / "long.jsonl"
    messages = long_conversation(MESSAGES)
    for message in messages:
        if message["role"] == "assistant" and cost:
            message["usage"] = {
                "input": 10,
                "output": 5,
                "cacheRead": 0,
                "cacheWrite": 0,
                "totalTokens": 15,
                "cost": {
                    "input": cost / 2,
                    "output": cost / 2,
                    "cacheRead": 0,
                    "cacheWrite": 0,
                    "total": cost,
                },
            }
    write_session_of(session, project, messages)
    notifications = NotificationCenter(window)
    ctl = SessionController(window, notifications, str(project), agent_dir(), approve=False, env={})
    ctl.spawn(ctl.open_session(str(session)))
    yield ctl, messages
    notifications.close_all()
    done = qloop.create_task(ctl.shutdown())
    qtbot.waitUntil(done.done, timeout=10_000)


@pytest.fixture
def opened(
    qtbot: QtBot, window: MainWindow, tmp_path: Path, qloop: asyncio.AbstractEventLoop, gate: threading.Event
) -> Iterator[tuple[SessionController, list[dict[str, Any]]]]:
    yield from _opened(qtbot, window, tmp_path, qloop)


def _chat_shown(ctl: SessionController) -> bool:
    composer = ctl.chat.composer
    return (
        ctl.runtime is not None
        and ctl.chat.model.rowCount() > 0
        and composer.isEnabled()
        and not composer.isReadOnly()
    )


def test_the_chat_shows_before_the_tree_and_the_tree_arrives_on_the_leaf(
    qtbot: QtBot,
    window: MainWindow,
    opened: tuple[SessionController, list[dict[str, Any]]],
    gate: threading.Event,
) -> None:
    ctl, messages = opened
    qtbot.waitUntil(lambda: _chat_shown(ctl), timeout=20_000)
    panel = window.tree_panel
    assert panel.loading and panel.model is None  # still being laid out
    model = ctl.chat.model
    last = model.row_at(model.rowCount() - 1)
    assert last.kind is RowKind.TEXT and last.text == messages[-1]["content"][0]["text"]
    assert model.row_at(0).kind is RowKind.MORE  # the earlier rows behind "show earlier"
    ctl.chat.composer.set_text("typed while the tree is laid out")
    assert ctl.chat.composer.toPlainText() == "typed while the tree is laid out"
    # every row of the branch, the earlier ones built after the last ones
    qtbot.waitUntil(lambda: len(ctl.chat.presenter.message_rows()) >= MESSAGES // 2, timeout=20_000)
    assert ctl.runtime is not None
    leaf = ctl.runtime.store.tree.leaf_id
    gate.set()
    qtbot.waitUntil(lambda: panel.model is not None and not panel.loading, timeout=20_000)
    assert panel.view.currentIndex().data(ENTRY_ID_ROLE) == leaf
    assert panel.current_entry_id() == leaf
    assert panel.status.text() == ""


def test_a_search_hit_chosen_while_the_tree_is_laid_out_is_selected_after(
    qtbot: QtBot,
    window: MainWindow,
    opened: tuple[SessionController, list[dict[str, Any]]],
    gate: threading.Event,
) -> None:
    ctl, _messages = opened
    qtbot.waitUntil(lambda: _chat_shown(ctl), timeout=20_000)
    assert ctl.runtime is not None
    tree = ctl.runtime.store.tree
    target = next(r.id for r in tree.path() if r.type == "message" and r.role == "user" and r.seq > 100)
    assert window.tree_panel.loading
    select_in_tree(window, str(target))
    gate.set()
    qtbot.waitUntil(lambda: window.tree_panel.current_entry_id() == target, timeout=20_000)


def test_the_files_totals_reach_the_footer(
    qtbot: QtBot, window: MainWindow, tmp_path: Path, qloop: asyncio.AbstractEventLoop
) -> None:
    for ctl, messages in _opened(qtbot, window, tmp_path, qloop, cost=0.001):
        qtbot.waitUntil(lambda: _chat_shown(ctl), timeout=20_000)  # noqa: B023
        expected = sum(
            float(m.get("usage", {}).get("cost", {}).get("total", 0.0))
            for m in messages
            if m["role"] == "assistant"
        )
        assert expected > 0
        qtbot.waitUntil(
            lambda: abs(ctl.context_feed.billed.session_cost - expected) < 1e-9,  # noqa: B023
            timeout=20_000,
        )
        assert ctl.chat.footer.billed.session_cost == ctl.context_feed.billed.session_cost


@pytest.fixture
def context_gate(monkeypatch: pytest.MonkeyPatch) -> Iterator[threading.Event]:
    """Holds the building of the leaf's whole context until set (as a long file on a slow disk would)."""
    release = threading.Event()
    build = SessionTree.build_context

    def held(self: SessionTree, *args: Any, **kwargs: Any) -> Any:
        release.wait(30)
        return build(self, *args, **kwargs)

    monkeypatch.setattr(SessionTree, "build_context", held)
    yield release
    release.set()


def test_the_leafs_last_messages_show_while_the_session_opens_and_are_kept(
    qtbot: QtBot,
    window: MainWindow,
    tmp_path: Path,
    qloop: asyncio.AbstractEventLoop,
    context_gate: threading.Event,
) -> None:
    for ctl, messages in _opened(qtbot, window, tmp_path, qloop):
        model = ctl.chat.model
        qtbot.waitUntil(lambda: model.rowCount() > 0, timeout=20_000)  # noqa: B023
        assert ctl.runtime is None  # the context is still being built
        last = model.row_at(model.rowCount() - 1)
        assert last.text == messages[-1]["content"][0]["text"]
        composer = ctl.chat.composer
        composer.set_text("sent too early")
        composer.submit()
        qtbot.waitUntil(
            lambda: any(model.row_at(i).title == "No session" for i in range(model.rowCount())),  # noqa: B023
            timeout=5_000,
        )
        assert composer.toPlainText() == "sent too early"  # kept in the editor
        shown = [model.row_at(i) for i in range(1, model.rowCount()) if model.row_at(i).title != "No session"]
        context_gate.set()
        qtbot.waitUntil(lambda: ctl.runtime is not None, timeout=20_000)  # noqa: B023
        # the rows shown are kept (the same messages), the earlier ones follow behind "show earlier"
        assert [model.row_at(i) for i in range(1, model.rowCount())] == shown
        qtbot.waitUntil(lambda: model.total_rows() > len(shown) * 4, timeout=20_000)  # noqa: B023
        assert [model.row_at(i) for i in range(1, model.rowCount())] == shown
        presenter = ctl.chat.presenter
        assert ctl.session is not None
        session_messages = ctl.session.messages
        assert presenter.row_key_for_message(session_messages[-1]) == shown[-1].key
        assert presenter.row_key_for_message(session_messages[0]) == model.all_rows()[0].key


def test_the_rows_shown_while_opening_stay_without_being_laid_out_again(
    qtbot: QtBot,
    window: MainWindow,
    tmp_path: Path,
    qloop: asyncio.AbstractEventLoop,
    context_gate: threading.Event,
) -> None:
    for ctl, _messages in _opened(qtbot, window, tmp_path, qloop):
        model = ctl.chat.model
        qtbot.waitUntil(lambda: model.rowCount() > 0, timeout=20_000)  # noqa: B023
        resets: list[bool] = []
        model.modelReset.connect(lambda: resets.append(True))  # noqa: B023
        shown = [model.row_at(i) for i in range(model.rowCount())]
        context_gate.set()
        qtbot.waitUntil(lambda: ctl.runtime is not None, timeout=20_000)  # noqa: B023
        qtbot.waitUntil(lambda: model.total_rows() > len(shown) * 4, timeout=20_000)  # noqa: B023
        assert resets == []  # the same rows: nothing replaced, nothing laid out again
        assert [model.row_at(i) for i in range(model.rowCount())] == shown
