"""A one-line label that may be narrower than its text: it draws the longest of its shorter forms that fits
(say the figures without the words around them), else the shortest elided ("…"), and keeps the whole text
in its tooltip and accessible description, so a narrow window loses nothing."""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QPainter, QPaintEvent
from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget

from piwork.gui.inert_text import plain_tip

MIN_CHARS = 8


class ElidedLabel(QLabel):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)
        self._tip = ""
        self._shorter: list[str] = []  # forms to fall back on, longest first
        self._reserve = ""  # a text as wide as it usually gets: the width asked for stays put

    def setToolTip(self, tip: str) -> None:
        self._tip = tip
        self._update_tip()

    def setText(self, text: str, shorter: list[str] | None = None) -> None:
        self._shorter = list(shorter or [])
        super().setText(text)
        self.setAccessibleDescription(text)
        self._update_tip()

    def _update_tip(self) -> None:
        text = self.text()
        full = f"{text}\n{self._tip}" if self._tip and self.is_elided() else (self._tip or "")
        super().setToolTip(plain_tip(full))

    def is_elided(self) -> bool:
        return self.fontMetrics().horizontalAdvance(self.text()) > self.contentsRect().width()

    def shown_text(self) -> str:
        """What is drawn: the text, else the longest shorter form that fits, else the shortest elided."""
        metrics, width = self.fontMetrics(), self.contentsRect().width()
        forms = [self.text(), *self._shorter]
        for form in forms:
            if metrics.horizontalAdvance(form) <= width:
                return form
        return metrics.elidedText(forms[-1], Qt.TextElideMode.ElideRight, width)

    def reserve_width_of(self, sample: str) -> None:
        """Ask for at least ``sample``'s width, so the widgets beside it keep their place as the text
        changes (a narrow window still shrinks it: the minimum stays small)."""
        self._reserve = sample
        self.updateGeometry()

    def sizeHint(self) -> QSize:
        hint = super().sizeHint()
        if not self._reserve:
            return hint
        margins = self.contentsMargins()
        wanted = self.fontMetrics().horizontalAdvance(self._reserve) + margins.left() + margins.right()
        return QSize(max(hint.width(), wanted), hint.height())

    def minimumSizeHint(self) -> QSize:
        hint = super().minimumSizeHint()
        return QSize(min(hint.width(), self.fontMetrics().averageCharWidth() * MIN_CHARS), hint.height())

    def resizeEvent(self, event: object) -> None:
        super().resizeEvent(event)  # type: ignore[arg-type]
        self._update_tip()

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        rect = self.contentsRect()
        text = self.shown_text()
        painter.setPen(self.palette().color(self.foregroundRole()))
        painter.drawText(rect, int(self.alignment() | Qt.AlignmentFlag.AlignVCenter), text)
