"""The Context panel's tables stay readable in a dock of the width the window gives it: the Source of an
X-ray row (what the part is) keeps room for a short label instead of shrinking to a few characters."""

from __future__ import annotations

from pytestqt.qtbot import QtBot

from piwork.core.context.xray import Xray, XrayPart
from piwork.gui.context.context_panel import ContextPanel


def test_xray_source_column_keeps_room_in_a_narrow_dock(qtbot: QtBot) -> None:
    panel = ContextPanel()
    qtbot.addWidget(panel)
    panel.resize(380, 600)  # the dock's width beside the session tree and the chat in a 1100 px window
    panel.show()
    qtbot.waitExposed(panel)
    parts = (
        XrayPart("tool_result", "bash seq 1 3000", 6070, 0.6),
        XrayPart("tool_result", "read notes.txt", 1600, 0.2),
        XrayPart("system", "system prompt: tools", 171, 0.1),
        XrayPart("compaction_summary", "summary", 100, 0.1),
    )
    panel.xray_model.set_xray(Xray(parts, 7941, "cl100k_base"))
    view = panel.xray_view
    label = view.fontMetrics().horizontalAdvance("read notes.txt")
    assert view.columnWidth(0) >= label, (view.columnWidth(0), label)
    # every column still fits the view: the numbers are not pushed out of sight
    used = sum(view.columnWidth(c) for c in range(4))
    assert used <= view.viewport().width() + 1
