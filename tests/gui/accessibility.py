"""What the accessibility test demands of a window, in one place (used by test_accessibility.py).

An *interactive control* is a widget a person operates: a button (push, tool, check, radio), a combo box, a
line edit, a spin box, a slider, an item view (list, tree, table) or a text editor that takes the focus
(``piwork.gui.accessibility.interactive_controls``). Each one needs an **accessible name**: what a screen
reader announces. Qt derives it from the control's own text (a button's label) or from a label whose buddy
it is (``QFormLayout`` rows, ``QLabel.setBuddy``); anything else needs ``setAccessibleName("…")``. Qt's own
inner parts (a combo box's editor, scroll bars, ``qt_*`` widgets) are not counted.
"""

from __future__ import annotations

from PySide6.QtGui import QAccessible
from PySide6.QtWidgets import QWidget

from piwork.gui.accessibility import accessible_name, interactive_controls

__all__ = [
    "accessible_description",
    "accessible_name",
    "describe",
    "interactive_controls",
    "unnamed_controls",
]


def accessible_description(widget: QWidget) -> str:
    """What a screen reader says the control does (Qt falls back to the tooltip)."""
    interface = QAccessible.queryAccessibleInterface(widget)
    return interface.text(QAccessible.Text.Description).strip() if interface is not None else ""


def describe(widget: QWidget) -> str:
    """Where a control is, for a failure message: class, object name, text, tooltip and named parents."""
    chain = []
    parent = widget.parentWidget()
    while parent is not None and len(chain) < 4:
        if parent.objectName() and not parent.objectName().startswith("qt_"):
            chain.append(parent.objectName())
        parent = parent.parentWidget()
    where = " < ".join(chain) or "?"
    text = getattr(widget, "text", None)
    shown = f" text={text()!r}" if callable(text) and isinstance(text(), str) and text() else ""
    tip = f" tooltip={widget.toolTip()[:40]!r}" if widget.toolTip() else ""
    return f"{type(widget).__name__} {widget.objectName()!r}{shown}{tip} in {where}"


def unnamed_controls(top: QWidget) -> list[str]:
    return [describe(w) for w in interactive_controls(top) if not accessible_name(w)]
