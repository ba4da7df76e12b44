"""Accessible names for controls that were given none.

Panels should name their controls themselves (``setAccessibleName``, a ``QFormLayout`` row or a label
buddy). This is the safety net the main window applies when it is shown: a control a screen reader would
announce without a name gets one from what a sighted person sees next to it — a line edit's placeholder, a
spin box's prefix, the tab it sits on, or the dock it lives in.
"""

from __future__ import annotations

from PySide6.QtGui import QAccessible
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractItemView,
    QAbstractSlider,
    QAbstractSpinBox,
    QComboBox,
    QDockWidget,
    QLineEdit,
    QListView,
    QPlainTextEdit,
    QScrollBar,
    QTabBar,
    QTableView,
    QTabWidget,
    QTextEdit,
    QTreeView,
    QWidget,
)

INTERACTIVE = (
    QAbstractButton,
    QComboBox,
    QLineEdit,
    QAbstractSpinBox,
    QAbstractSlider,
    QAbstractItemView,
    QPlainTextEdit,
    QTextEdit,
)


def accessible_name(widget: QWidget) -> str:
    interface = QAccessible.queryAccessibleInterface(widget)
    return interface.text(QAccessible.Text.Name).strip() if interface is not None else ""


def is_inner_part(widget: QWidget) -> bool:
    """One of Qt's own sub-widgets of a control (a combo box's editor, a view's scroll bars...)."""
    if widget.objectName().startswith("qt_") or isinstance(widget, QScrollBar):
        return True
    parent = widget.parentWidget()
    while parent is not None:
        # a line edit's clear button, a tab bar's scroll arrows, a combo box's editor...
        if isinstance(parent, QComboBox | QAbstractSpinBox | QAbstractItemView | QLineEdit | QTabBar):
            return True
        parent = parent.parentWidget()
    return False


def interactive_controls(root: QWidget) -> list[QWidget]:
    """Controls a person operates under ``root`` (shown or on a hidden page), Qt's inner parts excluded.
    Read-only text that cannot take the focus is not a control."""
    found = [root] if isinstance(root, INTERACTIVE) else []
    found += [w for w in root.findChildren(QWidget) if isinstance(w, INTERACTIVE) and not is_inner_part(w)]
    return [
        w
        for w in found
        if not (isinstance(w, QPlainTextEdit | QTextEdit) and w.isReadOnly() and not w.focusPolicy())
    ]


def _kind(widget: QWidget) -> str:
    if isinstance(widget, QTableView):
        return "table"
    if isinstance(widget, QTreeView):
        return "tree"
    if isinstance(widget, QListView):
        return "list"
    if isinstance(widget, QPlainTextEdit | QTextEdit):
        return "text"
    return ""


def _first_phrase(text: str) -> str:
    for stop in (" (", " — ", "…", "\n"):
        text = text.split(stop, 1)[0]
    return text.strip(" .:")


def fallback_name(widget: QWidget) -> str:
    """What a sighted person would call the control, from its surroundings ("" when nothing says)."""
    if isinstance(widget, QLineEdit) and widget.placeholderText():
        return _first_phrase(widget.placeholderText())
    if isinstance(widget, QAbstractSpinBox):
        prefix = getattr(widget, "prefix", lambda: "")()
        if prefix.strip():
            return prefix.strip(" :")
    kind = _kind(widget)
    parent = widget.parentWidget()
    while parent is not None:
        if isinstance(parent, QTabWidget):
            for index in range(parent.count()):
                page = parent.widget(index)
                if (
                    page is not None
                    and (page is widget or page.isAncestorOf(widget))
                    and parent.tabText(index)
                ):
                    title = parent.tabText(index).replace("&", "")
                    return title if page is widget or not kind else f"{title}: {kind}"
        if isinstance(parent, QDockWidget) and parent.windowTitle():
            return f"{parent.windowTitle()}: {kind}" if kind else parent.windowTitle()
        parent = parent.parentWidget()
    return ""


def name_unnamed_controls(root: QWidget) -> int:
    """Give every unnamed control under ``root`` its fallback name; returns how many were named."""
    named = 0
    for widget in interactive_controls(root):
        if accessible_name(widget):
            continue
        name = fallback_name(widget)
        if name:
            widget.setAccessibleName(name)
            named += 1
    return named
