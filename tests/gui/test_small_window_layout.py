"""A 1000x700 window with every panel open: opening docks does not grow the window, controls outside the
scrollable panels are not cut below their minimum size, controls do not move when the chat's state changes,
and the resource panel speaks in words rather than the engine's state identifiers."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, QSettings, Qt
from PySide6.QtWidgets import QAbstractButton, QComboBox, QLineEdit, QScrollArea, QWidget
from pytestqt.qtbot import QtBot

from piwork.gui.context.reading import BilledFigures
from piwork.gui.main_window import DOCK_MIN_SIZE, MainWindow
from piwork.gui.resources.rows_model import COLUMN_TIPS, COLUMNS
from piwork.gui.theme import load_theme

SIZE = (1000, 700)


def _window(qtbot: QtBot, tmp_path: Path) -> MainWindow:
    window = MainWindow(QSettings(str(tmp_path / "w.ini"), QSettings.Format.IniFormat), load_theme("light"))
    qtbot.addWidget(window)
    window.resize(*SIZE)
    window.show()
    qtbot.waitExposed(window)
    return window


def _in_scroll_area(widget: QWidget) -> bool:
    parent = widget.parentWidget()
    while parent is not None:
        if isinstance(parent, QScrollArea):
            return True
        parent = parent.parentWidget()
    return False


def test_every_panel_open_fits_1000_by_700(qtbot: QtBot, tmp_path: Path) -> None:
    window = _window(qtbot, tmp_path)
    for dock in window.docks.values():
        dock.show()
    qtbot.wait(50)  # the dock layout settles on the next pass of the event loop
    assert (window.width(), window.height()) == SIZE
    assert window.minimumSizeHint().width() <= SIZE[0] and window.minimumSizeHint().height() <= SIZE[1]
    for dock in window.docks.values():
        assert dock.isVisible() and dock.width() >= 150 and dock.height() >= 100, dock.objectName()
    cut = []
    for widget in window.findChildren(QWidget):
        if not isinstance(widget, QAbstractButton | QComboBox | QLineEdit) or not widget.isVisible():
            continue
        if _in_scroll_area(widget):
            continue  # a dock narrower than its panel scrolls: nothing is lost
        if widget.width() < widget.minimumSizeHint().width():
            cut.append(
                f"{type(widget).__name__} {widget.objectName() or getattr(widget, 'text', lambda: '')()}"
            )
        top_left = widget.mapTo(window, QPoint(0, 0))
        if top_left.x() + widget.width() > window.width() or top_left.y() + widget.height() > window.height():
            cut.append(f"{type(widget).__name__} {widget.objectName()} outside the window")
    assert cut == []


def test_no_panel_scrolls_sideways_with_every_panel_open(qtbot: QtBot, tmp_path: Path) -> None:
    """Toolbars and button rows wrap, labels wrap or elide: each dock's panel fits the dock's width, even
    the tree dock at its narrowest, so no control (the graph's Compare…) sits behind a sideways scroll."""
    window = _window(qtbot, tmp_path)
    for dock in window.docks.values():
        dock.show()
    window.tree_panel.views.setCurrentWidget(window.tree_panel.graph)  # the page with Files… and Compare…
    window.resizeDocks([window.docks["tree"]], [DOCK_MIN_SIZE.width()], Qt.Orientation.Horizontal)

    def sideways() -> list[str]:
        wide = []
        for dock_id, dock in window.docks.items():
            holder = dock.widget()
            assert isinstance(holder, QScrollArea)
            panel = holder.widget()
            room = holder.viewport().width()
            if panel.minimumSizeHint().width() > room or holder.horizontalScrollBar().isVisible():
                wide.append(f"{dock_id}: wants {panel.minimumSizeHint().width()} px, has {room}")
        return wide

    qtbot.waitUntil(lambda: sideways() == [], timeout=5000)
    tree_holder = window.docks["tree"].widget()
    assert isinstance(tree_holder, QScrollArea)
    assert tree_holder.viewport().width() <= DOCK_MIN_SIZE.width() + 20  # the tree dock really is narrow
    for button in (window.tree_panel.compare_button, window.tree_panel.files_button):
        right = button.mapTo(tree_holder.viewport(), QPoint(button.width(), 0)).x()
        assert button.isVisible() and right <= tree_holder.viewport().width(), button.text()


def test_controls_stay_put_when_the_chat_changes_state(qtbot: QtBot, tmp_path: Path) -> None:
    window = _window(qtbot, tmp_path)
    chat = window.chat
    watched = [chat.send_button, chat.footer.model_picker, chat.footer.thinking_picker, chat.composer]

    def positions() -> list[tuple[int, int, int, int]]:
        out = []
        for widget in watched:
            corner = widget.mapTo(window, QPoint(0, 0))
            out.append((corner.x(), corner.y(), widget.width(), widget.height()))
        return out

    before = positions()
    chat.set_busy(True)
    chat.show_waiting("Waiting for the model… 12 s (Esc stops)")
    chat.show_queue(["also check the tests"], ["then write the changelog"])
    chat.footer.set_billed(BilledFigures(session_tokens=123_456_789, session_cost=1234.5678))
    qtbot.wait(20)
    assert positions() == before
    assert chat.waiting_label.isVisible() and chat.queue_label.isVisible()
    assert "when the agent is done: then write the changelog" in chat.queue_label.text()
    assert (
        chat.waiting_label.geometry().bottom() < chat.queue_label.geometry().top()
    )  # stacked, not overlapping
    chat.set_busy(False)
    chat.show_waiting("")
    qtbot.wait(20)
    assert positions() == before


def test_resource_columns_explain_themselves() -> None:
    assert dict(zip(COLUMNS, COLUMN_TIPS, strict=True))["Rank"].startswith("Precedence: lower numbers win")


def test_tree_filter_speaks_in_words(qtbot: QtBot, tmp_path: Path) -> None:
    window = _window(qtbot, tmp_path)
    box = window.tree_panel.filter_box
    words = [box.itemText(i) for i in range(box.count())]
    assert "Conversation" in words and "Everything" in words
    assert not {"no-tools", "user-only", "labeled-only"} & set(words)
    window.tree_panel.set_filter_mode("no-tools")
    assert box.currentText() == "Without tool results" and window.tree_panel.filter_mode() == "no-tools"


def test_tree_rows_name_record_kinds_in_words() -> None:
    from piwork.core.session.tree import tree_from_values
    from piwork.gui.tree.display_tree import entry_title
    from tests.gui.tree.sessions import SessionBuilder

    builder = SessionBuilder()
    builder.user("go")
    change = builder.model_change()
    failed = builder._next(
        "message",
        message={
            "role": "assistant",
            "content": [],
            "stopReason": "error",
            "errorMessage": '503 {"error": {"message": "busy"}}',
        },
    )
    tree = tree_from_values(builder.entries)
    titles = {r.id: entry_title(r, tree) for r in tree.records}
    assert titles[change].startswith("[model]") and "model_change" not in titles[change]
    assert titles[failed] == "assistant: ✗ failed — 503 Service Unavailable · busy"


@pytest.mark.usefixtures("qloop")  # the full output is indexed by an asyncio task
def test_log_buttons_stay_on_screen_with_every_panel_open(qtbot: QtBot, tmp_path: Path) -> None:
    """With all four panels open the bottom dock is short: the full output's Copy path / Open in editor row
    still shows without scrolling, also with a cut output selected (its summary line shown)."""
    from PySide6.QtWidgets import QPushButton

    from tests.gui.logs.test_log_viewer import _bash_session

    log = tmp_path / "bash-0123456789abcdef.log"
    log.write_text("".join(f"line {i}\n" for i in range(1, 3001)))
    window = _window(qtbot, tmp_path)
    for dock in window.docks.values():
        dock.show()
    panel = window.log_panel
    panel.set_messages(_bash_session(str(log), 3000))
    with qtbot.waitSignal(panel.full_output.index_finished, timeout=5000):
        panel.select_output(0)
    holder = window.docks["logs"].widget()
    assert isinstance(holder, QScrollArea)
    buttons = {b.text(): b for b in panel.full_output.findChildren(QPushButton)}

    def row_shown() -> bool:
        room = holder.viewport().height()
        for name in ("Copy path", "Open in editor"):
            button = buttons[name]
            bottom = button.mapTo(holder.viewport(), QPoint(0, button.height())).y()
            if not button.isVisible() or bottom > room:
                return False
        return not holder.verticalScrollBar().isVisible()

    qtbot.waitUntil(row_shown, timeout=5000)
    assert panel.cut_label.isVisible()
