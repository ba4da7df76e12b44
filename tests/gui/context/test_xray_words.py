"""The X-ray names piwork's own context messages in words, as the chat and the session tree do."""

from __future__ import annotations

from PySide6.QtCore import Qt

from piwork.core.context.xray import Xray, XrayPart
from piwork.gui.context.xray_model import XrayModel


def test_xray_names_piwork_messages_in_words() -> None:
    model = XrayModel()
    parts = (
        XrayPart("custom", "piwork.freshSummary", 310, 0.6),
        XrayPart("custom", "piwork.contextBundle", 81, 0.3),
        XrayPart("custom", "my-extension", 10, 0.1),
    )
    model.set_xray(Xray(parts, 401, "cl100k_base"))
    shown = [model.index(row, 0).data(Qt.ItemDataRole.DisplayRole) for row in range(3)]
    assert shown == ["handed-over summary", "task context", "my-extension"]
