"""What a session or a reply says is shown, never fetched: a Markdown image or an HTML tag naming a FIFO or
/dev/zero loads nothing, in the chat (saved, streamed, long), the tree, the graph, tooltips and dialogs.

FIFOs here are tripwires (tests/support/tripwire.py): opening one would block the GUI thread for ever, so a
writer thread waits on it and records the open instead. /dev/zero is tried in a subprocess: reading it ends
in std::bad_alloc, which would take the test run down with it.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QEvent, QModelIndex, QSettings
from PySide6.QtGui import QHelpEvent
from PySide6.QtWidgets import QAbstractItemView, QApplication, QLabel, QToolTip
from pytestqt.qtbot import QtBot

from piwork.core.paths import agent_dir
from piwork.gui.chat.rows import RowKind
from piwork.gui.inert_text import InertTextBrowser, plain_tip
from piwork.gui.main_window import MainWindow
from piwork.gui.notifications import NotificationCenter
from piwork.gui.session_controller import SessionController
from piwork.gui.theme import load_theme
from piwork.gui.tree.compare_dialog import BranchSide
from tests.core.session.helpers import HEADER, assistant, user, write_session
from tests.support import LoopbackServer, Text, Turn
from tests.support.tripwire import Tripwire


def hostile(fifo: Path) -> str:
    """Markdown and raw HTML that each name ``fifo`` (and its relative form ``a/fifo``) as something to load."""
    return (
        f'<img src="{fifo}"> first line, as a tree title and a tooltip\n\n'
        f"An image: ![f]({fifo}) and a relative one: ![r](a/fifo)\n\n"
        f'<a href="file://{fifo}">a link</a> <style>p {{ color: red }}</style> <b>not bold</b>\n\n'
        f"<img src='a/fifo' width=10>"
    )


def long_hostile(fifo: Path) -> str:
    """Long enough for the sliced renderer, with the hostile text in the middle of it."""
    filler = "".join(f"Paragraph {i} of a long answer.\n\n" for i in range(400))
    return filler + hostile(fifo) + "\n\n" + filler


@pytest.fixture
def wires(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Tripwire]]:
    (tmp_path / "a").mkdir()
    monkeypatch.chdir(tmp_path)  # "a/fifo" resolves here, against the working directory
    made = [Tripwire(tmp_path / "fifo"), Tripwire(tmp_path / "a" / "fifo")]
    yield made
    for wire in made:
        wire.close()


def _untouched(wires: list[Tripwire]) -> bool:
    return not any(wire.tripped() for wire in wires)


@pytest.fixture
def server() -> Iterator[LoopbackServer]:
    with LoopbackServer() as running:
        yield running


def _controller(
    qtbot: QtBot, tmp_path: Path, server: LoopbackServer, session: str | None
) -> SessionController:
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
    (adir / "settings.json").write_text(
        json.dumps({"defaultProvider": "loopback", "defaultModel": "loopback-model"})
    )
    window = MainWindow(QSettings(str(tmp_path / "w.ini"), QSettings.Format.IniFormat), load_theme("light"))
    qtbot.addWidget(window)
    window.resize(1200, 800)
    window.show()
    notifications = NotificationCenter(window)
    ctl = SessionController(window, notifications, str(tmp_path), adir, approve=False, env={})
    ctl.spawn(ctl.open_session(session))
    qtbot.waitUntil(lambda: ctl.runtime is not None, timeout=10_000)
    return ctl


def _shut(qtbot: QtBot, ctl: SessionController) -> None:
    done = asyncio.ensure_future(ctl.shutdown())  # on the qasync loop the test runs on
    qtbot.waitUntil(done.done, timeout=10_000)


def _text_docs(qtbot: QtBot, ctl: SessionController) -> list[str]:
    """The chat's finished text rows as their documents read, once every row is laid out and rendered."""
    chat = ctl.window.chat
    delegate = chat.view.chat_delegate
    model = chat.model
    rows = [model.row_at(i) for i in range(model.rowCount())]
    texts = [r for r in rows if r.kind is RowKind.TEXT]
    for row in texts:  # scroll each into view so it is painted (and a long one rendered in slices)
        chat.view.scrollTo(model.index(rows.index(row), 0))
        chat.view.viewport().repaint()
        qtbot.waitUntil(
            lambda row=row: not delegate.documents.renderer.pending(row.key, row.revision), timeout=10_000
        )
        chat.view.viewport().repaint()
    ctl.window.grab()
    return [delegate._doc(row).toPlainText() for row in texts]


def _assert_shown_as_text(doc_text: str, fifo: Path) -> None:
    assert f"[image not loaded: {fifo}]" in doc_text
    assert "[image not loaded: a/fifo]" in doc_text
    assert f'<a href="file://{fifo}">a link</a>' in doc_text  # raw HTML reads as what it is
    assert "<style>p { color: red }</style>" in doc_text and "<b>not bold</b>" in doc_text


def _hover_every_row(view: QAbstractItemView) -> int:
    """Ask the view for the tooltip of each row it shows, as a mouse resting there does."""
    model = view.model()
    if model is None:
        return 0
    asked = 0
    pending = [QModelIndex()]
    while pending:
        parent = pending.pop()
        for row in range(min(model.rowCount(parent), 200)):
            index = model.index(row, 0, parent)
            pending.append(index)
            rect = view.visualRect(index)
            if rect.isEmpty():
                continue
            spot = rect.center()
            event = QHelpEvent(QEvent.Type.ToolTip, spot, view.viewport().mapToGlobal(spot))
            QApplication.sendEvent(view.viewport(), event)
            asked += 1
    QToolTip.hideText()
    return asked


@pytest.mark.gui_stall_allowed  # lays out, paints and hovers every row synchronously, on purpose
def test_a_saved_session_naming_a_fifo_loads_nothing_anywhere_in_the_window(
    qtbot: QtBot,
    qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    server: LoopbackServer,
    wires: list[Tripwire],
) -> None:
    fifo = wires[0].path
    prompts = agent_dir() / "prompts"  # a file name is text from outside too
    prompts.mkdir()
    (prompts / "<img src='fifo'>.md").write_text("---\ndescription: <img src='a/fifo'>\n---\nHello")
    session = write_session(
        tmp_path / "hostile.jsonl",
        [
            user("u1", None, hostile(fifo), 1),
            assistant("a1", "u1", hostile(fifo), 2),
            user("u2", "a1", "and the long one", 3),
            assistant("a2", "u2", long_hostile(fifo), 4),
        ],
        {**HEADER, "cwd": str(tmp_path)},
    )
    ctl = _controller(qtbot, tmp_path, server, str(session))
    window = ctl.window
    qtbot.waitUntil(lambda: ctl.window.chat.model.rowCount() >= 4, timeout=10_000)
    docs = _text_docs(qtbot, ctl)
    assert _untouched(wires)
    assert len(docs) == 2
    for text in docs:
        _assert_shown_as_text(text, fifo)
    window.docks["tree"].show()
    window.docks["resources"].show()
    qtbot.waitUntil(lambda: window.resource_panel.model.rowCount() > 0, timeout=10_000)
    window.resource_panel.view.expandAll()
    qtbot.waitUntil(lambda: window.tree_panel.model is not None and window.tree_panel.model.rowCount() > 0)
    window.tree_panel.view.expandAll()
    window.grab()
    hovered = sum(
        _hover_every_row(view) for view in window.findChildren(QAbstractItemView) if view.isVisible()
    )
    assert hovered >= 4
    for label in window.findChildren(QLabel):
        label.sizeHint()  # a label laying out rich text would load what its tags name
    assert _untouched(wires)
    _shut(qtbot, ctl)


@pytest.mark.gui_stall_allowed  # lays out, paints and hovers every row synchronously, on purpose
def test_a_streamed_reply_naming_a_fifo_loads_nothing(
    qtbot: QtBot,
    qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    server: LoopbackServer,
    wires: list[Tripwire],
) -> None:
    fifo = wires[0].path
    ctl = _controller(qtbot, tmp_path, server, None)
    server.script(Turn([Text(hostile(fifo))]), Turn([Text(long_hostile(fifo))]))
    ctl.submit("show me a picture")
    qtbot.waitUntil(lambda: not ctl.window.chat.busy and len(server.requests) == 1, timeout=15_000)
    ctl.submit("and a long one")
    qtbot.waitUntil(lambda: not ctl.window.chat.busy and len(server.requests) == 2, timeout=15_000)
    docs = _text_docs(qtbot, ctl)
    assert _untouched(wires)
    assert len(docs) == 2
    for text in docs:
        _assert_shown_as_text(text, fifo)
    assert _untouched(wires)
    _shut(qtbot, ctl)


def test_a_compare_side_shows_an_answer_naming_a_fifo_without_loading_it(
    qtbot: QtBot, wires: list[Tripwire]
) -> None:
    from piwork.core.session import BranchActivity
    from piwork.core.session.store import in_memory_session

    fifo = wires[0].path
    tree = in_memory_session().tree
    entry = tree.append_message({"role": "user", "content": hostile(fifo), "timestamp": 1})
    side = BranchSide(tree, entry, BranchActivity(last_answer=hostile(fifo)), "A")
    qtbot.addWidget(side)
    side.resize(600, 800)
    side.show()
    side.grab()
    assert _untouched(wires)
    assert isinstance(side.answer, InertTextBrowser)
    _assert_shown_as_text(side.answer.toPlainText(), fifo)


def test_tooltip_text_that_looks_like_html_is_shown_as_it_is(qtbot: QtBot, wires: list[Tripwire]) -> None:
    fifo = wires[0].path
    tip = plain_tip(f'<img src="{fifo}"> & more')
    label = QLabel(tip)  # a tooltip is a label with Qt's automatic text format
    qtbot.addWidget(label)
    label.show()
    label.grab()
    assert _untouched(wires)
    assert plain_tip("plain words") == "plain words"


DEV_ZERO_SCRIPT = textwrap.dedent(
    """
    import sys
    from PySide6.QtWidgets import QApplication
    from piwork.gui.chat.chat_panel import ChatPanel
    from piwork.gui.theme import load_theme

    app = QApplication([])
    panel = ChatPanel(load_theme("light"))
    panel.resize(800, 600)
    panel.show()
    short = "Look: ![z](/dev/zero) and ![l](zero.png)"
    long = "".join(f"Paragraph {i}.\\n\\n" for i in range(800)) + short
    messages = [
        {"role": "user", "content": "hi", "timestamp": 1},
        {"role": "assistant", "content": [{"type": "text", "text": short}], "stopReason": "stop", "timestamp": 2},
        {"role": "assistant", "content": [{"type": "text", "text": long}], "stopReason": "stop", "timestamp": 3},
    ]
    panel.presenter.show_messages(messages)
    delegate = panel.view.chat_delegate
    for row in range(panel.model.rowCount()):
        panel.view.scrollTo(panel.model.index(row, 0))
        panel.view.viewport().repaint()
    while delegate.documents.renderer._jobs:
        app.processEvents()
    panel.view.viewport().repaint()
    texts = [delegate._doc(panel.model.row_at(i)).toPlainText() for i in range(panel.model.rowCount())]
    assert sum("[image not loaded: /dev/zero]" in t for t in texts) == 2, texts
    print("rendered")
    """
)


def test_markdown_images_of_dev_zero_do_not_abort_the_window(tmp_path: Path) -> None:
    os.symlink("/dev/zero", tmp_path / "zero.png")
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    done = subprocess.run(
        [sys.executable, "-c", DEV_ZERO_SCRIPT],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "rendered" in done.stdout
