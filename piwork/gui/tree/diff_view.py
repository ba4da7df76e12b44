"""A read-only view of an edit's diff as the edit tool recorded it: added lines green, removed red."""

from __future__ import annotations

import html

from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import QWidget

from piwork.gui.inert_text import InertTextBrowser

_COLOURS = {"+": "#1d7a32", "-": "#b42828"}


def diff_html(diff: str) -> str:
    lines = []
    for line in diff.splitlines():
        colour = _COLOURS.get(line[:1])
        text = html.escape(line) or "&nbsp;"
        lines.append(f'<span style="color:{colour}">{text}</span>' if colour else text)
    return "<pre style='margin:0'>" + "\n".join(lines) + "</pre>"


class DiffView(InertTextBrowser):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.setPlaceholderText("Select an edit to see its diff.")

    def show_diff(self, diff: str | None, note: str = "") -> None:
        if diff is None:
            self.setPlainText(note)
        else:
            self.setHtml(diff_html(diff))
