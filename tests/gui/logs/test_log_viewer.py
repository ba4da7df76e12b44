"""The log viewer with real widgets: cut outputs listed from session messages, full files opened
lazily (including a 1 GiB sparse log), search, go to line, send to chat, missing files."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QObject, Qt, QUrl, Slot
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import QPushButton
from pytestqt.qtbot import QtBot

from piwork.gui.logs import FullOutputView, LogViewerPanel
from piwork.gui.logs.lines_model import MATCH_ROLE, SPANS_ROLE
from piwork.gui.logs.sgr import SgrStyle
from tests.support.heartbeat import keeps_running
from tests.support.slow_disk import slow_file

# indexing and search run as asyncio tasks on the Qt loop
pytestmark = pytest.mark.usefixtures("qloop")


def _bash_session(log_path: str, total_lines: int) -> list[dict[str, Any]]:
    truncation = {
        "truncated": True, "truncatedBy": "lines", "totalLines": total_lines, "totalBytes": 30000,
        "outputLines": 2000, "outputBytes": 20000, "lastLinePartial": False, "firstLineExceedsLimit": False,
    }  # fmt: skip
    return [
        {"role": "user", "content": "build it", "timestamp": 1},
        {
            "role": "assistant",
            "content": [
                {"type": "toolCall", "id": "t1", "name": "bash", "arguments": {"command": "make all"}}
            ],
            "stopReason": "toolUse",
            "timestamp": 2,
        },
        {
            "role": "toolResult",
            "toolCallId": "t1",
            "toolName": "bash",
            "isError": False,
            "timestamp": 3,
            "content": [{"type": "text", "text": "line 1001\n...\n[Showing lines 1001-3000 of 3000]"}],
            "details": {"truncation": truncation, "fullOutputPath": log_path},
        },
    ]


def _open_panel(qtbot: QtBot) -> LogViewerPanel:
    panel = LogViewerPanel()
    qtbot.addWidget(panel)
    panel.resize(900, 600)
    panel.show()
    return panel


def test_truncated_output_listed_and_full_file_opened(qtbot: QtBot, tmp_path: Path) -> None:
    log = tmp_path / "bash-0123456789abcdef.log"
    log.write_bytes(b"".join(b"line %d \x1b[32mok\x1b[0m\n" % i for i in range(1, 3001)))
    panel = _open_panel(qtbot)
    panel.set_messages(_bash_session(str(log), 3000))
    assert panel.outputs.rowCount() == 1
    with qtbot.waitSignal(panel.full_output.index_finished, timeout=5000):
        panel.select_output(0)
    assert "make all" in panel.title_label.text()
    assert panel.cut_label.text() == "kept lines 1001–3000 of 3000, 19.5KB of 29.3KB (limit: lines)"
    assert panel.model_text.toPlainText().startswith("line 1001")
    model = panel.full_output.model
    assert model is not None and model.rowCount() == 3000
    first = model.index(0)
    assert first.data() == "line 1 ok"
    assert [s.style for s in first.data(SPANS_ROLE)][1] == SgrStyle(fg=2)

    panel.full_output.go_to_line(2500)
    assert panel.full_output.current_row() == 2499
    panel.full_output.view.selectionModel().select(
        model.index(2500), panel.full_output.view.selectionModel().SelectionFlag.Select
    )
    with qtbot.waitSignal(panel.send_to_chat) as sent:
        panel.full_output.send_selection()
    assert sent.args == [
        f"From `{log.name}`, lines 2500–2501 ({log}):\n```text\nline 2500 ok\nline 2501 ok\n```\n"
    ]
    panel.full_output.copy_path()
    from PySide6.QtGui import QGuiApplication

    assert QGuiApplication.clipboard().text() == str(log)


def test_opening_a_listed_log_selects_its_cut_output(qtbot: QtBot, tmp_path: Path) -> None:
    listed = tmp_path / "bash-0123456789abcdef.log"
    listed.write_bytes(b"".join(b"line %d\n" % i for i in range(1, 3001)))
    other = tmp_path / "other.log"
    other.write_text("not from this session\n")
    panel = _open_panel(qtbot)
    panel.set_messages(_bash_session(str(listed), 3000))
    assert panel.open_log(str(listed))  # what the chat's "truncated · open log" badge does
    assert panel.list_view.currentIndex().row() == 0
    assert "make all" in panel.title_label.text() and panel.cut_label.text().startswith("kept lines")
    assert panel.open_log(str(other))  # a log no message lists: named, nothing selected
    assert str(other) in panel.title_label.text() and panel.cut_label.text() == ""
    assert not panel.list_view.selectionModel().hasSelection()
    panel.shutdown()


def test_live_messages_are_appended(qtbot: QtBot, tmp_path: Path) -> None:
    panel = _open_panel(qtbot)
    messages = _bash_session(str(tmp_path / "x.log"), 3000)
    panel.set_messages(messages[:2])
    assert panel.outputs.rowCount() == 0
    panel.add_message(messages[2])
    assert panel.outputs.rowCount() == 1
    assert panel.outputs.items[0].title == "make all"


def test_missing_full_output_is_reported_not_shown_empty(qtbot: QtBot, tmp_path: Path) -> None:
    panel = _open_panel(qtbot)
    panel.set_messages(_bash_session(str(tmp_path / "deleted.log"), 3000))
    with qtbot.waitSignal(panel.full_output.opened) as opened:  # opened in a worker
        panel.select_output(0)
    assert opened.args == [False]
    assert "no longer exists" in panel.full_output.error_text
    assert panel.full_output.model is None
    assert not panel.full_output.search_field.isEnabled()


def test_a_fifo_where_the_full_output_should_be_is_refused_at_once(qtbot: QtBot, tmp_path: Path) -> None:
    """A session naming a FIFO (or a device) as a command's full output: the viewer says what it is and
    never waits on it (opening a FIFO for reading blocks until a writer comes)."""
    fifo = tmp_path / "trap.log"
    os.mkfifo(fifo)
    panel = _open_panel(qtbot)
    panel.set_messages(_bash_session(str(fifo), 3000))
    with qtbot.waitSignal(panel.full_output.opened, timeout=5000) as opened:
        panel.select_output(0)
    assert opened.args == [False]
    assert (
        "cannot be read" in panel.full_output.error_text
        and "not a regular file" in panel.full_output.error_text
    )
    assert panel.full_output.model is None


def test_search_highlights_and_steps_through_matches(qtbot: QtBot, tmp_path: Path) -> None:
    log = tmp_path / "out.log"
    log.write_text("".join(f"{'ERROR' if i % 100 == 0 else 'info'} event {i}\n" for i in range(5000)))
    view = FullOutputView()
    qtbot.addWidget(view)
    with qtbot.waitSignal(view.index_finished, timeout=5000):
        assert view.open_file(str(log))
    with qtbot.waitSignal(view.search_finished, timeout=5000) as done:
        view.search_field.setText("error")
    assert done.args == [50]
    assert view.matches[:3] == [0, 100, 200]
    assert view.current_row() == 0
    assert view.search_status.text() == "match 1 of 50"
    assert view.model is not None and view.model.index(100).data(MATCH_ROLE)
    view.next_match()
    assert view.current_row() == 100 and view.search_status.text() == "match 2 of 50"
    view.previous_match()
    view.previous_match()
    assert view.current_row() == 4900 and view.search_status.text() == "match 50 of 50"  # wraps around
    # Keys: Enter and F3 go forward, Shift+Enter and Shift+F3 back; the count stays.
    view.show()
    view.search_field.setFocus()
    qtbot.waitUntil(view.search_field.hasFocus)
    qtbot.keyClick(view.search_field, Qt.Key.Key_Return)
    assert view.current_row() == 0 and view.search_status.text() == "match 1 of 50"
    qtbot.keyClick(view.search_field, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    assert view.current_row() == 4900
    qtbot.keyClick(view.search_field, Qt.Key.Key_F3)
    qtbot.keyClick(view.search_field, Qt.Key.Key_F3)
    assert view.current_row() == 100 and view.search_status.text() == "match 2 of 50"
    qtbot.keyClick(view.search_field, Qt.Key.Key_F3, Qt.KeyboardModifier.ShiftModifier)
    assert view.current_row() == 0
    view.go_to_line(3)  # a line that is not a match: the count alone
    assert view.search_status.text() == "50 matches"
    qtbot.keyClick(view.search_field, Qt.Key.Key_Return)
    assert view.current_row() == 100 and view.search_status.text() == "match 2 of 50"
    with qtbot.waitSignal(view.search_finished, timeout=5000) as done:
        view.regex_box.setChecked(True)
        view.search_field.setText(r"event 4\d{3}$")
    assert done.args == [1000]
    view.search_field.setText("(")
    assert view.search_status.text().startswith("Invalid pattern")


@pytest.fixture
def sparse_gib_log(tmp_path: Path):  # type: ignore[no-untyped-def]
    path = tmp_path / "huge.log"
    with open(path, "wb") as handle:
        handle.write(b"".join(b"head %d\n" % i for i in range(1000)))
        handle.seek(1 << 30)
        handle.write(b"\n" + b"".join(b"tail %d\n" % i for i in range(1000)))
    yield path
    os.unlink(path)


def test_one_gib_log_opens_at_once_and_scrolls(qtbot: QtBot, sparse_gib_log: Path) -> None:
    view = FullOutputView()
    qtbot.addWidget(view)
    view.resize(800, 500)
    view.show()
    with qtbot.waitSignal(view.index_finished, timeout=60000):
        assert view.open_file(str(sparse_gib_log))
        # the first lines are readable while the rest is still being indexed
        qtbot.waitUntil(lambda: view.model is not None and view.model.rowCount() >= 1000, timeout=5000)
        assert view.model is not None and view.model.index(999).data() == "head 999"
    model = view.model
    assert model.rowCount() == 2001  # 1000 head lines, one gigabyte-long line of zero bytes, 1000 tail lines
    giant = model.index(1000).data()
    assert giant is not None and len(giant) == 4000  # only a prefix of the giant line is decoded
    assert model.index(2000).data() == "tail 999"
    view.go_to_line(2001)
    view.view.viewport().repaint()
    assert view.current_row() == 2000


def test_real_bash_results_and_the_session_log_folder(qtbot: QtBot, tmp_path: Path) -> None:
    """The engine's bash tool writes a full-output log and its sidecar; the panel lists results from
    the messages and, from the log folder, logs no shown message refers to."""
    import asyncio

    from piwork.core.tools.base import ToolContext
    from piwork.core.tools.bash import BashTool

    log_dir = tmp_path / "logs" / "session-1"
    ctx = ToolContext(cwd=str(tmp_path), log_dir=log_dir)
    loop = asyncio.get_event_loop()
    first = loop.create_task(BashTool().execute("call-1", {"command": "seq 1 5000"}, ctx))
    second = loop.create_task(
        BashTool().execute("call-2", {"command": "seq 1 3000 | sed 's/^/other /'"}, ctx)
    )
    qtbot.waitUntil(lambda: first.done() and second.done(), timeout=10_000)
    shown = first.result()
    assert shown.details is not None and shown.details["truncation"]["totalLines"] == 5000
    messages = [
        {"role": "assistant", "content": [{"type": "toolCall", "id": "call-1", "name": "bash",
                                           "arguments": {"command": "seq 1 5000"}}], "timestamp": 1},
        {"role": "toolResult", "toolCallId": "call-1", "toolName": "bash", "content": shown.content,
         "details": shown.details, "isError": False, "timestamp": 2},
    ]  # fmt: skip
    panel = _open_panel(qtbot)
    panel.set_messages(messages)
    listing = panel.set_log_dir(log_dir)  # the folder is read in a worker
    assert listing is not None
    qtbot.waitUntil(listing.done, timeout=10_000)
    items = panel.outputs.items
    assert [(i.title, i.limit_notes) for i in items] == [
        ("seq 1 5000", ()),
        ("seq 1 3000 | sed 's/^/other /'", ("from the session's log folder",)),
    ]
    assert items[0].cut_summary() == "kept lines 3001–5000 of 5000, 9.8KB of 23.3KB (limit: lines)"
    with qtbot.waitSignal(panel.full_output.index_finished, timeout=5000):
        panel.select_output(1)
    model = panel.full_output.model
    assert model is not None and model.rowCount() == 3000 and model.index(2999).data() == "other 3000"


def test_a_real_large_log_is_indexed_progressively(qtbot: QtBot, tmp_path: Path) -> None:
    block = b"".join(b"%06d \x1b[33mwarn\x1b[0m something happened here\n" % i for i in range(100_000))
    path = tmp_path / "big.log"
    with open(path, "wb") as handle:
        for _ in range(3):  # ~13 MB of real (non-sparse) data: several read chunks
            handle.write(block)
    view = FullOutputView()
    qtbot.addWidget(view)
    growth: list[int] = []
    with qtbot.waitSignal(view.index_finished, timeout=30000):
        with qtbot.waitSignal(view.opened):  # opened in a worker, then indexed progressively
            assert view.open_file(str(path))
        assert view.model is not None
        view.model.rowsInserted.connect(lambda *_a: growth.append(view.model.rowCount()))  # type: ignore[union-attr]
    assert len(growth) >= 2 and growth == sorted(growth)  # rows arrived in several batches
    assert view.model.rowCount() == 300_000
    assert view.model.index(299_999).data() == "099999 warn something happened here"
    # A new query cancels the running search; only the new query's matches are kept.
    view.regex_box.setChecked(True)
    view.search_field.setText("warn")
    with qtbot.waitSignal(view.search_finished, timeout=30000) as done:
        view.search_field.setText("^012345 ")
    assert done.args == [3] and view.matches == [12345, 112345, 212345]
    assert view.search_status.text() == "match 1 of 3"
    os.unlink(path)


def test_closing_a_log_stops_its_indexing_and_search_and_nothing_arrives_later(
    qtbot: QtBot, tmp_path: Path
) -> None:
    block = b"".join(b"%06d plain line of a long build log\n" % i for i in range(100_000))
    path = tmp_path / "long.log"
    with open(path, "wb") as handle:
        for _ in range(4):  # ~16 MB of real data: many read chunks
            handle.write(block)
    view = FullOutputView()
    qtbot.addWidget(view)
    view.show()
    with qtbot.waitSignal(view.opened):  # opened in a worker
        assert view.open_file(str(path)) and view.indexing
    assert view.indexing
    rows: list[int] = []
    assert view.model is not None
    view.model.rowsInserted.connect(lambda *_a: rows.append(1))
    view.close_file()  # closed at once: the worker stops at its next chunk
    qtbot.waitUntil(lambda: not view.indexing, timeout=10_000)
    qtbot.wait(50)
    assert view.model is None and rows == [] and view.error_text == ""
    with qtbot.waitSignal(view.index_finished, timeout=30_000):
        assert view.open_file(str(path))
    view.search_field.setText("line")  # every line matches: the search streams for a while
    assert view.searching
    view.close_file()
    qtbot.waitUntil(lambda: not view.searching, timeout=10_000)
    qtbot.wait(50)  # what the worker handed over before it stopped is dropped, not shown
    assert view.matches == [] and view.search_status.text() == ""
    os.unlink(path)


def test_search_of_a_file_removed_after_opening_says_so(qtbot: QtBot, tmp_path: Path) -> None:
    log = tmp_path / "gone.log"
    log.write_text("".join(f"row {i}\n" for i in range(100)))
    view = FullOutputView()
    qtbot.addWidget(view)
    with qtbot.waitSignal(view.index_finished, timeout=5000):
        assert view.open_file(str(log))
    assert view.model is not None and view.model.index(99).data() == "row 99"  # still readable
    log.unlink()
    view.search_field.setText("row")
    assert view.search_status.text() == "Searching…"
    qtbot.waitUntil(lambda: "failed" in view.search_status.text(), timeout=5000)
    assert str(log) in view.search_status.text() and view.matches == []


def test_quoted_lines_keep_backticks_inside_a_longer_fence() -> None:
    from piwork.gui.logs.full_output_view import quote_lines

    quoted = quote_lines("/tmp/logs/x.log", 7, 7, "run ```cmd```")
    assert quoted == "From `x.log`, line 7 (/tmp/logs/x.log):\n````text\nrun ```cmd```\n````\n"


def test_send_selected_lines_fills_the_windows_composer(qtbot: QtBot, tmp_path: Path) -> None:
    from PySide6.QtCore import QSettings

    from piwork.gui.main_window import MainWindow
    from piwork.gui.theme import load_theme

    log = tmp_path / "bash-feed.log"
    log.write_text("".join(f"step {i}\n" for i in range(1, 51)))
    window = MainWindow(QSettings(str(tmp_path / "w.ini"), QSettings.Format.IniFormat), load_theme("light"))
    qtbot.addWidget(window)
    window.show()
    window.chat.composer.setPlainText("Why does this fail?")
    window.chat.composer.moveCursor(window.chat.composer.textCursor().MoveOperation.End)
    view = window.log_panel.full_output
    with qtbot.waitSignal(view.index_finished, timeout=5000):
        window.open_log(str(log))
    model = view.model
    assert model is not None
    selection = view.view.selectionModel()
    for row in (9, 10, 11):
        selection.select(model.index(row, 0), selection.SelectionFlag.Select)
    button = next(b for b in view.findChildren(QPushButton) if b.text() == "Send selected lines to chat")
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    assert window.chat.composer.toPlainText() == (
        f"Why does this fail?\nFrom `bash-feed.log`, lines 10–12 ({log}):\n```text\nstep 10\nstep 11\nstep 12\n```\n"
    )
    assert window.chat.composer.hasFocus() or not window.isActiveWindow()
    window.log_panel.shutdown()


def test_reset_forgets_the_previous_sessions_outputs(qtbot: QtBot, tmp_path: Path) -> None:
    log = tmp_path / "bash-0123456789abcdef.log"
    log.write_text("".join(f"line {i}\n" for i in range(1, 3001)))
    panel = _open_panel(qtbot)
    panel.set_messages(_bash_session(str(log), 3000))
    with qtbot.waitSignal(panel.full_output.index_finished, timeout=5000):
        panel.select_output(0)
    panel.full_output.search_field.setText("line 7")
    panel.reset()
    assert panel.outputs.rowCount() == 0
    assert panel.full_output.path is None and panel.full_output.model is None
    assert panel.model_text.toPlainText() == "" and panel.cut_label.text() == ""
    assert "make all" not in panel.title_label.text()
    assert panel.full_output.search_field.text() == ""


class _Opener(QObject):
    """A desktop handler for file: URLs, as a desktop registers one for the default editor."""

    def __init__(self) -> None:
        super().__init__()
        self.opened: list[str] = []

    @Slot(QUrl)
    def open(self, url: QUrl) -> None:
        self.opened.append(url.toLocalFile())


def test_open_in_editor_hands_the_file_over_or_says_why_it_could_not(qtbot: QtBot, tmp_path: Path) -> None:
    log = tmp_path / "out.log"
    log.write_text("one\ntwo\n")
    view = FullOutputView()
    qtbot.addWidget(view)
    with qtbot.waitSignal(view.index_finished, timeout=5000):
        assert view.open_file(str(log))
    # without any application for files (the offscreen platform has none) the viewer says so
    assert not view.open_in_editor()
    assert "No application opened" in view.notice_text and str(log) in view.notice_text
    opener = _Opener()
    QDesktopServices.setUrlHandler("file", opener, "open")
    try:
        assert view.open_in_editor() and opener.opened == [str(log)]
        log.unlink()
        assert not view.open_in_editor() and "no longer there" in view.notice_text
        assert opener.opened == [str(log)]
    finally:
        QDesktopServices.unsetUrlHandler("file")


def test_the_line_box_follows_the_current_match_and_row(qtbot: QtBot, tmp_path: Path) -> None:
    log = tmp_path / "out.log"
    log.write_text("".join(f"event {i}\n" for i in range(5000)))
    view = FullOutputView()
    qtbot.addWidget(view)
    with qtbot.waitSignal(view.index_finished, timeout=5000):
        assert view.open_file(str(log))
    with qtbot.waitSignal(view.search_finished, timeout=5000):
        view.search_field.setText("4999")
    assert view.current_row() == 4999
    assert view.goto_field.text() == "Line 5000"
    with qtbot.waitSignal(view.search_finished, timeout=5000):
        view.search_field.setText("event 12")
    assert view.goto_field.value() == 13
    view.next_match()  # "event 120"
    assert view.goto_field.value() == 121
    view.view.setCurrentIndex(view.view.model().index(41, 0))  # a click on a row
    assert view.goto_field.value() == 42
    view.go_to_line(99999)  # past the end: the last line, and the box says so
    assert view.current_row() == 4999 and view.goto_field.value() == 5000


def test_a_log_is_opened_in_a_worker_and_a_newer_one_wins(
    qtbot: QtBot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The log is on a slow disk: opening it waits until the test lets it through (a disk that does not
    answer). Meanwhile the view says so, a 5 ms timer keeps ticking, and asking for another, real log
    shows that one; the first, once it is opened, is closed and never shown."""
    slow = tmp_path / "slow.log"
    slow.write_bytes(b"")
    gate = slow_file(monkeypatch, slow)
    real = tmp_path / "real.log"
    real.write_bytes(b"".join(b"line %d\n" % i for i in range(1, 5001)))
    view = FullOutputView()
    qtbot.addWidget(view)
    view.show()
    assert view.open_file(str(slow)) and view.opening and view.indexing
    assert view.model is None and view._status.text() == f"Opening {slow}…"
    keeps_running(qtbot)
    assert view.opening and view.model is None

    with qtbot.waitSignal(view.index_finished, timeout=10_000):
        assert view.open_file(str(real))
    assert view.path == str(real) and view.model is not None and view.model.rowCount() == 5000
    assert view.model.index(4999).data() == "line 5000"
    gate.open()
    qtbot.waitUntil(lambda: not view.opening)
    assert view.path == str(real) and view.model.rowCount() == 5000 and view.error_text == ""
    assert not gate.read_on_gui_thread()

    gate.close()
    with qtbot.waitSignal(view.opened) as opened:  # the slow log alone: an empty log, once let through
        assert view.open_file(str(slow))
        qtbot.waitUntil(gate.asked.is_set)
        gate.open()
    assert opened.args == [True] and view.model is not None and view.model.rowCount() == 0
    view.close_file()
