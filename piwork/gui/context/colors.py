"""Colours the context views paint with, picked per palette so both read well.

Marks keep fixed meanings everywhere (bar, plot, legend): pressure amber, ceiling orange, compaction
threshold red; the pricing zone is hatched. Segment colours are distinct hues of similar weight.
"""

from __future__ import annotations

from PySide6.QtGui import QColor, QPalette

# (light palette, dark palette)
_MARKS = {
    "pressure": ("#d97706", "#fbbf24"),
    "ceiling": ("#ea580c", "#fb923c"),
    "compaction": ("#dc2626", "#f87171"),
    "pricing": ("#7c3aed", "#c4b5fd"),
}
_SEGMENTS = {
    "systemPrompt": ("#64748b", "#94a3b8"),
    "tools": ("#8b5cf6", "#a78bfa"),
    "bundle": ("#0d9488", "#2dd4bf"),
    "messages": ("#2563eb", "#60a5fa"),
}
_SERIES = {
    "occupancy": ("#2563eb", "#60a5fa"),
    "billed": ("#16a34a", "#4ade80"),
}


def is_dark(palette: QPalette) -> bool:
    return palette.color(QPalette.ColorRole.Window).lightness() < 128


def _pick(table: dict[str, tuple[str, str]], key: str, palette: QPalette) -> QColor:
    light, dark = table[key]
    return QColor(dark if is_dark(palette) else light)


def mark_color(key: str, palette: QPalette) -> QColor:
    return _pick(_MARKS, key, palette)


def segment_color(key: str, palette: QPalette) -> QColor:
    return _pick(_SEGMENTS, key, palette)


def series_color(key: str, palette: QPalette) -> QColor:
    return _pick(_SERIES, key, palette)
