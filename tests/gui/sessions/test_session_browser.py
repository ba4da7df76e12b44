"""Session browser over real session files: listing off the GUI thread, search, filters, open, rename, delete."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from pytestqt.qtbot import QtBot

from piwork.core.paths import agent_dir
from piwork.core.session.listing import session_info
from piwork.core.session.store import create_session
from piwork.gui.sessions.session_browser import SessionBrowser

pytestmark = pytest.mark.usefixtures("qloop")  # the listing runs as an asyncio task on the Qt loop


def _write_session(cwd: Path, prompt: str, reply: str, name: str | None = None) -> Path:
    session = create_session(str(cwd), agent_dir=agent_dir())
    session.tree.append_message(
        {"role": "user", "content": [{"type": "text", "text": prompt}], "timestamp": 1}
    )
    session.tree.append_message(
        {
            "role": "assistant",
            "content": [{"type": "text", "text": reply}],
            "api": "anthropic-messages",
            "provider": "anthropic",
            "model": "m",
            "usage": {
                "input": 1,
                "output": 1,
                "cacheRead": 0,
                "cacheWrite": 0,
                "totalTokens": 2,
                "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
            },
            "stopReason": "stop",
            "timestamp": 2,
        }
    )
    if name:
        session.tree.set_name(name)
    assert session.path is not None
    path = session.path
    session.close()
    return path


@pytest.fixture
def projects(tmp_path: Path) -> tuple[Path, Path, list[Path]]:
    here, there = tmp_path / "here", tmp_path / "there"
    here.mkdir()
    there.mkdir()
    files = [
        _write_session(here, "fix the parser bug", "done with the parser"),
        _write_session(here, "write the release notes", "notes written", name="Release"),
        _write_session(there, "refactor the http client", "refactored"),
    ]
    return here, there, files


def _at_once(answer: Callable[..., Any]) -> Callable[..., Awaitable[Any]]:
    """A question the browser awaits, answered at once by ``answer``."""

    async def ask(*args: Any) -> Any:
        return answer(*args)

    return ask


def _browser(qtbot: QtBot, cwd: Path, **kwargs: Any) -> SessionBrowser:
    questions = {key: _at_once(kwargs.pop(key)) for key in ("confirm", "ask_name") if key in kwargs}
    browser = SessionBrowser(str(cwd), agent_dir(), **kwargs, **questions)
    qtbot.addWidget(browser)
    with qtbot.waitSignal(browser.listing.finished, timeout=10_000):
        browser.refresh()
    return browser


def test_lists_this_project_then_all_projects(qtbot: QtBot, projects: tuple[Path, Path, list[Path]]) -> None:
    here, _there, _files = projects
    browser = _browser(qtbot, here)
    assert browser.proxy.rowCount() == 2
    assert "2 sessions" in browser.status.text()
    with qtbot.waitSignal(browser.listing.finished, timeout=10_000):
        browser.scope.setCurrentIndex(1)
    assert browser.proxy.rowCount() == 3


def test_search_and_named_only(qtbot: QtBot, projects: tuple[Path, Path, list[Path]]) -> None:
    here, _there, _files = projects
    browser = _browser(qtbot, here)
    browser.search.setText("PARSER bug")
    assert browser.proxy.rowCount() == 1
    browser.search.setText("parser release")
    assert browser.proxy.rowCount() == 0
    browser.search.clear()
    browser.named_only.setChecked(True)
    assert browser.proxy.rowCount() == 1
    assert browser.proxy.index(0, 0).data() == "Release"


def test_open_emits_the_path(qtbot: QtBot, projects: tuple[Path, Path, list[Path]]) -> None:
    here, _there, files = projects
    browser = _browser(qtbot, here)
    assert browser.select_path(str(files[0]))
    with qtbot.waitSignal(browser.sessionChosen) as chosen:
        browser.open_button.click()
    assert chosen.args == [str(files[0])]


def test_rename_appends_a_session_info_entry(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, projects: tuple[Path, Path, list[Path]]
) -> None:
    here, _there, files = projects
    browser = _browser(qtbot, here, ask_name=lambda current: "Parser work")
    assert browser.select_path(str(files[0]))
    before = files[0].read_text()
    with qtbot.waitSignal(browser.renamed, timeout=10_000):
        browser.rename_selected()
    after = files[0].read_text()
    assert after.startswith(before)  # appended, never rewritten
    info = session_info(files[0])
    assert info is not None and info.name == "Parser work"
    browser.search.setText("")
    browser.named_only.setChecked(True)
    assert browser.proxy.rowCount() == 2


def test_delete_asks_first_and_then_removes(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, projects: tuple[Path, Path, list[Path]]
) -> None:
    here, _there, files = projects
    answers = iter([False, True, True])
    browser = _browser(qtbot, here, confirm=lambda _title, _question: next(answers))
    assert browser.select_path(str(files[0]))
    with qtbot.waitSignal(browser.deleted, timeout=10_000):
        browser.delete_selected()  # refused
    assert files[0].exists() and browser.proxy.rowCount() == 2
    with qtbot.waitSignal(browser.deleted, timeout=10_000):
        browser.delete_selected()  # accepted: trash, or permanent delete after the second question
    assert not files[0].exists()
    assert browser.proxy.rowCount() == 1


def test_unreadable_files_are_skipped(qtbot: QtBot, projects: tuple[Path, Path, list[Path]]) -> None:
    here, _there, files = projects
    junk = files[0].parent / "junk.jsonl"
    junk.write_bytes(b"\xff\xfe not json\n")
    os.utime(junk)
    browser = _browser(qtbot, here)
    assert browser.proxy.rowCount() == 2


def _many_sessions(cwd: Path, count: int) -> None:
    first = _write_session(cwd, "the first question", "the first answer")
    body = first.read_bytes()
    for n in range(count):  # real files, each a full session with its own name
        (first.parent / f"2024-01-01T00-00-{n:05d}_copy{n}.jsonl").write_bytes(body)


def test_a_newer_listing_supersedes_the_running_one(
    qtbot: QtBot, projects: tuple[Path, Path, list[Path]]
) -> None:
    here, _there, _files = projects
    _many_sessions(here, 400)
    browser = SessionBrowser(str(here), agent_dir())
    qtbot.addWidget(browser)
    delivered: list[int] = []
    browser.listing.finished.connect(lambda infos: delivered.append(len(infos)))
    browser.refresh()  # this project (403 files), superseded at once by every project
    browser.scope.setCurrentIndex(1)
    qtbot.waitUntil(lambda: not browser.listing.running, timeout=30_000)
    assert delivered == [404]  # only the newest listing reported
    assert "404 sessions" in browser.status.text()


def test_closing_the_browser_stops_its_listing(qtbot: QtBot, projects: tuple[Path, Path, list[Path]]) -> None:
    here, _there, _files = projects
    _many_sessions(here, 400)
    browser = SessionBrowser(str(here), agent_dir())
    qtbot.addWidget(browser)
    heard: list[object] = []
    browser.listing.finished.connect(heard.append)
    browser.listing.progress.connect(lambda done, _total: heard.append(done))
    browser.show()
    browser.refresh()
    browser.reject()  # closed while listing
    qtbot.waitUntil(lambda: not browser.listing.running, timeout=30_000)
    assert heard == [] and browser.status.text() == "Reading sessions…"


def test_enter_in_a_delete_confirmation_keeps_the_file(qtbot: QtBot) -> None:
    """Deleting asks first, and a reflexive Enter answers No: only a deliberate Yes deletes."""
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QMessageBox

    from piwork.gui.dialogs import yes_no_box

    box = yes_no_box(None, "Delete Permanently?", "There is no trash here. Delete this file for good?")
    qtbot.addWidget(box)
    box.show()
    qtbot.waitExposed(box)
    qtbot.keyClick(box, Qt.Key.Key_Return)
    assert box.clickedButton() is box.button(QMessageBox.StandardButton.No)


def test_rename_starts_from_the_title_the_list_shows_selected(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, projects: tuple[Path, Path, list[Path]]
) -> None:
    """An unnamed session's rename field holds its shown title, selected, so typing replaces it."""
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication, QInputDialog, QLineEdit

    here, _there, files = projects
    browser = _browser(qtbot, here)  # the real dialog
    browser.show()
    assert browser.select_path(str(files[0]))
    seen: list[tuple[str, str]] = []

    def answer() -> None:
        dialog = QApplication.activeModalWidget()
        if not isinstance(dialog, QInputDialog):
            QTimer.singleShot(20, answer)
            return
        field = dialog.findChild(QLineEdit)
        seen.append((field.text(), field.selectedText()))
        qtbot.keyClicks(field, "Parser work")
        dialog.accept()

    QTimer.singleShot(0, answer)
    with qtbot.waitSignal(browser.renamed, timeout=10_000):
        browser.rename_selected()
    assert seen == [("fix the parser bug", "fix the parser bug")]
    info = session_info(files[0])
    assert info is not None and info.name == "Parser work"

    # Accepting the shown title unchanged writes nothing.
    before = files[0].read_text()
    unchanged = _browser(qtbot, here, ask_name=lambda current: current)
    assert unchanged.select_path(str(files[0]))
    with qtbot.assertNotEmitted(unchanged.renamed, wait=200):
        unchanged.rename_selected()
    assert files[0].read_text() == before
