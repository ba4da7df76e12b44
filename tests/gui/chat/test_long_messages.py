"""Long finished messages render as Markdown in slices without stalling; the plain text shows meanwhile."""

from __future__ import annotations

from typing import Any

from pytestqt.qtbot import QtBot

from piwork.core.agent import events as ev
from piwork.core.llm import types as lt
from piwork.gui.chat.chat_panel import ChatPanel
from piwork.gui.chat.render_jobs import split_markdown
from piwork.gui.theme import load_theme


def test_split_keeps_code_fences_whole() -> None:
    text = ("para " * 300 + "\n\n") * 3 + "```python\n" + "x = 1\n\n" * 500 + "```\n\nend"
    slices = split_markdown(text, size=1000)
    assert "".join(s + "\n" for s in slices).rstrip("\n") == text
    fenced = [s for s in slices if "```python" in s]
    assert len(fenced) == 1 and fenced[0].count("```") == 2


def test_long_reply_is_rendered_in_slices(qtbot: QtBot) -> None:
    panel = ChatPanel(load_theme("light"))
    qtbot.addWidget(panel)
    panel.resize(800, 600)
    panel.show()
    text = "".join(f"Paragraph {i} with **bold** text.\n\n```python\nprint({i})\n```\n\n" for i in range(400))
    message: dict[str, Any] = {"role": "assistant", "content": [{"type": "text", "text": ""}], "timestamp": 1}
    p = panel.presenter
    p.handle(ev.MessageStart(message))
    p.handle(ev.MessageUpdate(message, lt.TextStartEvent(0, message)))
    for chunk in text.split("\n\n"):
        p.handle(ev.MessageUpdate(message, lt.TextDeltaEvent(0, chunk + "\n\n", message)))
    message["content"][0]["text"] = text
    p.handle(ev.MessageUpdate(message, lt.TextEndEvent(0, text, message)))
    message["stopReason"] = "stop"
    delegate = panel.view.chat_delegate
    with qtbot.waitSignal(delegate.rowRendered, timeout=10_000):
        p.handle(ev.MessageEnd(message))
        panel.view.viewport().repaint()
    row = panel.model.row_at(0)
    doc = delegate._doc(row)
    assert "**" not in doc.toPlainText()  # Markdown, not the plain placeholder
    assert "print(399)" in doc.toPlainText()
    assert "color:#" in doc.toHtml()
