"""FlowLayout: one row when there is room (the room left going to what expands), more rows when not."""

from __future__ import annotations

from PySide6.QtWidgets import QLineEdit, QPushButton, QWidget
from pytestqt.qtbot import QtBot

from piwork.gui.flow_layout import FlowLayout


def test_items_wrap_onto_rows_as_the_width_shrinks(qtbot: QtBot) -> None:
    holder = QWidget()
    qtbot.addWidget(holder)
    layout = FlowLayout(holder, spacing=4)
    layout.setContentsMargins(0, 0, 0, 0)
    field = QLineEdit()
    buttons = [QPushButton(text) for text in ("Files…", "Compare…", "Send selected lines to chat")]
    layout.addWidget(field, 1)
    for button in buttons:
        layout.addWidget(button)
    layout.addStretch()
    holder.show()

    wide = sum(b.sizeHint().width() for b in buttons) + field.sizeHint().width() + 400
    holder.resize(wide, layout.heightForWidth(wide))
    qtbot.waitUntil(lambda: field.width() > field.sizeHint().width())
    tops = {w.geometry().top() for w in (field, *buttons)}
    assert len(tops) == 1  # one row
    assert field.width() >= field.sizeHint().width() + 190  # the field and the stretch share the room left

    narrow = layout.minimumSize().width()
    assert narrow == max(max(w.minimumSizeHint().width(), w.minimumWidth()) for w in (field, *buttons))
    holder.resize(narrow, layout.heightForWidth(narrow))
    # the field; Files… and Compare… side by side; the widest button alone
    qtbot.waitUntil(lambda: len({w.geometry().top() for w in (field, *buttons)}) == 3)
    assert buttons[0].geometry().top() == buttons[1].geometry().top()
    for widget in (field, *buttons):
        assert widget.geometry().right() < narrow  # nothing past the right edge
    assert layout.heightForWidth(narrow) >= 3 * buttons[0].sizeHint().height()
