"""A person's message is shown as Markdown, as answers are, with the same inert renderer: emphasis and code
render, lines typed apart stay apart, and nothing in it is loaded or taken for HTML."""

from __future__ import annotations

from PySide6.QtGui import QFont, QTextDocument
from pytestqt.qtbot import QtBot

from piwork.gui.chat.chat_panel import ChatPanel
from piwork.gui.inert_text import InertTextDocument
from piwork.gui.theme import load_theme

PROMPT = (
    "Make the **build** faster; it runs `make all`.\n"
    "Second line, typed apart.\n\n"
    "```sh\nmake all\n```\n\n"
    "Keep <details> and List<String> as text; ![shot](/dev/zero) is not loaded."
)


def _fragments(doc: QTextDocument) -> list[tuple[str, bool, bool]]:
    """(text, bold, monospace) of every fragment."""
    out = []
    block = doc.begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            fragment = it.fragment()
            fmt = fragment.charFormat()
            out.append((fragment.text(), fmt.fontWeight() >= QFont.Weight.Bold, fmt.fontFixedPitch()))
            it += 1
        block = block.next()
    return out


def test_a_users_message_is_rendered_as_markdown(qtbot: QtBot) -> None:
    panel = ChatPanel(load_theme("light"))
    qtbot.addWidget(panel)
    panel.resize(900, 600)
    panel.show()
    panel.presenter.show_messages([{"role": "user", "content": PROMPT, "timestamp": 1}])
    row = panel.model.row_at(0)
    doc = panel.view.chat_delegate.body_document(row)
    assert isinstance(doc, InertTextDocument)  # the safe document: loads nothing a text names
    fragments = _fragments(doc)
    assert ("build", True, False) in fragments
    assert ("make all", False, True) in fragments  # inline code in the code font
    plain = doc.toPlainText()
    assert "**" not in plain and "`" not in plain
    lines = plain.splitlines()
    assert "Make the build faster; it runs make all." in lines and "Second line, typed apart." in lines
    assert "make all" in lines  # the fenced block, a block of its own
    assert "<details>" in plain and "List<String>" in plain  # no HTML: words to read
    assert "[image not loaded: /dev/zero]" in plain
    assert row.plain_text() == PROMPT  # copying the row gives what was typed
