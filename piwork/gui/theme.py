"""Light and dark palettes (from ``resources/palettes``), following the system colour scheme."""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication

from piwork.gui.assets import resource_path

log = logging.getLogger(__name__)

# Colours the chat view paints with that QPalette has no role for.
DEFAULT_ACCENTS = {
    "user": "#e8effc",
    "assistant": "#ffffff",
    "tool": "#f3f3f6",
    "error": "#fdecea",
    "notice": "#fff7e0",
    "thinking": "#6b6b73",
    "code": "#f4f4f7",
    "badge": "#b45309",
    "ok": "#2e7d32",
    "fail": "#c62828",
    "running": "#1f5fc4",
}


@dataclass(frozen=True)
class Theme:
    name: str
    dark: bool
    palette: QPalette
    accents: dict[str, QColor] = field(default_factory=dict)

    def accent(self, key: str) -> QColor:
        return self.accents.get(key) or QColor(DEFAULT_ACCENTS.get(key, "#808080"))


def load_theme(name: str) -> Theme:
    """Read ``resources/palettes/<name>.json``; a missing or broken file falls back to Qt's palette."""
    palette = QPalette(QApplication.palette()) if QApplication.instance() else QPalette()
    accents = {key: QColor(value) for key, value in DEFAULT_ACCENTS.items()}
    path = resource_path("palettes", f"{name}.json")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        log.warning("palette %s could not be read (%s); using Qt's default colours", path, err)
        data = {}
    for role_name, value in data.items():
        if role_name == "accent" and isinstance(value, dict):
            accents.update({k: QColor(v) for k, v in value.items() if isinstance(v, str)})
            continue
        role = getattr(QPalette.ColorRole, role_name, None)
        if role is not None and isinstance(value, str):
            palette.setColor(role, QColor(value))
            disabled = QColor(value)
            if role_name in ("Text", "WindowText", "ButtonText"):
                disabled.setAlpha(120)
            palette.setColor(QPalette.ColorGroup.Disabled, role, disabled)
    return Theme(name=name, dark=name == "dark", palette=palette, accents=accents)


def system_prefers_dark() -> bool:
    hints = QGuiApplication.styleHints()
    return hints.colorScheme() == Qt.ColorScheme.Dark


class ThemeManager(QObject):
    """Applies the palette matching the system scheme and re-applies it when the system switches."""

    changed = Signal(object)  # Theme

    def __init__(self, app: QApplication, forced: str | None = None) -> None:
        super().__init__(app)
        self._app = app
        self._forced = forced
        self.theme = self._pick()
        self._apply()
        QGuiApplication.styleHints().colorSchemeChanged.connect(self._on_scheme_changed)

    def _pick(self) -> Theme:
        name = self._forced or ("dark" if system_prefers_dark() else "light")
        return load_theme(name)

    def _apply(self) -> None:
        self._app.setPalette(self.theme.palette)

    def _on_scheme_changed(self, _scheme: Qt.ColorScheme) -> None:
        if self._forced:
            return
        self.theme = self._pick()
        self._apply()
        self.changed.emit(self.theme)

    def force(self, name: str | None) -> None:
        self._forced = name
        self.theme = self._pick()
        self._apply()
        self.changed.emit(self.theme)
