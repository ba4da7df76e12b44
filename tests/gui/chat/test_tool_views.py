"""A tool's view decides its card's summary line, body, badges and what they do; the default view serves
every tool without one and reads the argument each tool declares."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from PySide6.QtCore import QTimer
from PySide6.QtGui import QContextMenuEvent
from PySide6.QtWidgets import QApplication, QMenu
from pytestqt.qtbot import QtBot

from piwork.core.messages import output_line_count
from piwork.gui.chat.chat_panel import ChatPanel
from piwork.gui.chat.rows import apply_tool_result
from piwork.gui.chat.tool_card import ToolCard
from piwork.gui.chat.tool_views import (
    DEFAULT_VIEW,
    Badge,
    CardAction,
    ToolView,
    register_view,
    unregister_view,
    view_for,
)
from piwork.gui.chat.tool_views.view import PREVIEW_LINES
from piwork.gui.theme import load_theme


class ProposalView(ToolView):
    """A card for a made-up tool that proposes a change: its own summary, body and two badges."""

    def summary(self, card: ToolCard) -> str:
        return f"change to {card.args.get('target', '?')}"

    def body(self, card: ToolCard, expanded: bool) -> str:
        return "--- old\n+++ new" + (f"\n{card.result_text}" if expanded else "")

    def badges(self, card: ToolCard) -> tuple[Badge, ...]:
        return (Badge("awaiting review"), *super().badges(card))


@pytest.fixture
def proposal_view() -> Iterator[ProposalView]:
    view = ProposalView()
    register_view("propose_change", view)
    yield view
    unregister_view("propose_change")


def _messages(name: str, args: dict[str, Any], details: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    call = {"type": "toolCall", "id": "c1", "name": name, "arguments": args}
    result: dict[str, Any] = {
        "role": "toolResult",
        "toolCallId": "c1",
        "toolName": name,
        "isError": False,
        "content": [{"type": "text", "text": "accepted"}],
        "timestamp": 2,
    }
    if details is not None:
        result["details"] = details
    return [{"role": "assistant", "content": [call], "stopReason": "toolUse", "timestamp": 1}, result]


def test_a_registered_view_draws_its_own_card(qtbot: QtBot, proposal_view: ProposalView) -> None:
    panel = ChatPanel(load_theme("light"))
    qtbot.addWidget(panel)
    panel.resize(900, 500)
    panel.show()
    qtbot.waitExposed(panel)
    details = {"fullOutputPath": "/tmp/proposal.log"}
    panel.presenter.show_messages(_messages("propose_change", {"target": "app.py"}, details))
    row = panel.model.row_at(0)
    assert row.tool is not None and view_for("propose_change") is proposal_view
    view = panel.view
    view.doItemsLayout()
    rect = view.visualRect(panel.model.index(0))
    delegate = view.chat_delegate
    assert delegate.documents.document(row, 600).toPlainText() == "--- old\n+++ new"
    assert row.plain_text() == "propose_change change to app.py\naccepted"
    geo = delegate.geometry(row, rect)
    assert [badge.text for _, badge in geo.badges] == ["awaiting review", "truncated · open log"]
    first, second = (r for r, _ in geo.badges)
    assert second.right() < first.left()  # laid out right to left, apart
    with qtbot.waitSignal(view.openLogRequested) as opened:
        assert view.click_row(0, second.center() - rect.topLeft())
    assert opened.args == ["/tmp/proposal.log"] and row.collapsed
    assert view.click_row(0, first.center() - rect.topLeft())  # a badge without an action is header
    assert not row.collapsed
    assert delegate.documents.document(row, 600).toPlainText() == "--- old\n+++ new\naccepted"
    assert panel.model.data(panel.model.index(0), 3) == "change to app.py"  # ToolTipRole


def test_the_context_menu_offers_the_views_actions(qtbot: QtBot) -> None:
    panel = ChatPanel(load_theme("light"))
    qtbot.addWidget(panel)
    panel.resize(900, 500)
    panel.show()
    qtbot.waitExposed(panel)
    panel.presenter.show_messages(_messages("bash", {"command": "make"}, {"fullOutputPath": "/tmp/make.log"}))
    view = panel.view
    view.doItemsLayout()
    offered: list[str] = []

    def choose() -> None:
        menu = QApplication.activePopupWidget()
        assert isinstance(menu, QMenu)
        offered.extend(action.text() for action in menu.actions() if action.text())
        next(a for a in menu.actions() if a.text() == "Open full output log").trigger()
        menu.close()

    QTimer.singleShot(50, choose)
    pos = view.visualRect(panel.model.index(0)).center()
    with qtbot.waitSignal(view.openLogRequested) as opened:
        view.contextMenuEvent(QContextMenuEvent(QContextMenuEvent.Reason.Mouse, pos, view.mapToGlobal(pos)))
    assert opened.args == ["/tmp/make.log"]
    assert "Open full output log" in offered


def test_the_default_view_summarises_by_the_declared_argument() -> None:
    assert view_for("grep") is DEFAULT_VIEW
    assert DEFAULT_VIEW.summary(ToolCard("c", "bash", {"command": "make\ntest"})) == "make"
    assert DEFAULT_VIEW.summary(ToolCard("c", "read", {"path": "a.py", "offset": 3})) == "a.py"
    assert DEFAULT_VIEW.summary(ToolCard("c", "find", {"pattern": "*.py"})) == "*.py"
    assert DEFAULT_VIEW.summary(ToolCard("c", "fetch", {"url": "https://x"})) == "https://x"
    assert DEFAULT_VIEW.summary(ToolCard("c", "mystery", {"n": 1})) == '{"n": 1}'
    card = ToolCard("c", "edit", {"path": "a.py"}, result_text="done", truncated=True)
    assert DEFAULT_VIEW.badges(card) == (Badge("truncated · open log", CardAction.OPEN_LOG),)
    assert DEFAULT_VIEW.title(card, "", collapsed=True) == "▸ edit"
    assert DEFAULT_VIEW.body(card, expanded=True) == '{\n  "path": "a.py"\n}\n\ndone'
    assert DEFAULT_VIEW.actions(card) == ()
    card.full_output_path = "/tmp/edit.log"
    assert DEFAULT_VIEW.actions(card) == (("Open full output log", CardAction.OPEN_LOG),)


def test_a_cards_hidden_lines_add_up_to_the_engines_line_count() -> None:
    """Shown lines plus "… N more lines" is the count the HTML export gives (output_line_count), also
    for progress output whose lines hold carriage returns and for a result ending with a newline."""
    text = "".join(f"step {n}: 10%\r50%\r100%\n" for n in range(20))
    message = {"role": "toolResult", "toolCallId": "c", "toolName": "bash",
               "content": [{"type": "text", "text": text}], "isError": False}  # fmt: skip
    card = ToolCard("c", "bash", {"command": "make"})
    apply_tool_result(card, message)
    preview = ToolView().preview(card, expanded=False).split("\n")
    shown, more = preview[:-1], preview[-1]
    assert len(shown) == PREVIEW_LINES and shown[0] == "100%"  # the last state of a redrawn line
    assert more.startswith(f"… {output_line_count(message) - PREVIEW_LINES} more lines")
