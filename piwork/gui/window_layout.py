"""What the window remembers of its layout besides Qt's own state (which tab of each tabbed panel was
current), and how wide side docks open: never so wide that the conversation, or another dock, becomes
unreadably narrow."""

from __future__ import annotations

import json

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QTabWidget

TABS_KEY = "mainWindow/tabs"  # window.ini: {panel id: current tab index}

CHAT_MIN_WIDTH = 480  # the conversation keeps at least this much (a line of prose stays readable)
SIDE_MIN_WIDTH = 200  # a side dock is never fitted narrower than this
SIDE_PREFERRED = {"left": 300, "right": 380}  # what a side dock opens at when there is room


def side_widths(window_width: int, left: bool, right: bool) -> tuple[int, int]:
    """The widths of the open left and right docks (0 for a side with none) in a window ``window_width``
    wide: their preferred widths when the conversation keeps ``CHAT_MIN_WIDTH``, else shrunk in
    proportion, down to ``SIDE_MIN_WIDTH`` each."""
    wanted = {"left": SIDE_PREFERRED["left"] if left else 0, "right": SIDE_PREFERRED["right"] if right else 0}
    total = wanted["left"] + wanted["right"]
    budget = window_width - CHAT_MIN_WIDTH
    if total == 0 or total <= budget:
        return wanted["left"], wanted["right"]
    scale = max(budget, 0) / total
    fit = {side: max(SIDE_MIN_WIDTH, int(width * scale)) if width else 0 for side, width in wanted.items()}
    return fit["left"], fit["right"]


def _saved(settings: QSettings) -> dict[str, object]:
    raw = settings.value(TABS_KEY, "")
    try:
        saved = json.loads(raw) if isinstance(raw, str) and raw else {}
    except ValueError:
        return {}
    return saved if isinstance(saved, dict) else {}


def save_tabs(settings: QSettings, tabs: dict[str, QTabWidget]) -> None:
    """Each panel's current tab; a panel not made in this run (a dock never opened) keeps the one saved."""
    kept = {name: index for name, index in _saved(settings).items() if name not in tabs}
    settings.setValue(
        TABS_KEY, json.dumps(kept | {name: widget.currentIndex() for name, widget in tabs.items()})
    )


def restore_tabs(settings: QSettings, tabs: dict[str, QTabWidget]) -> None:
    """Bring back each panel's current tab; an unreadable value or an index out of range is ignored."""
    saved = _saved(settings)
    for name, widget in tabs.items():
        index = saved.get(name)
        if isinstance(index, int) and not isinstance(index, bool) and 0 <= index < widget.count():
            widget.setCurrentIndex(index)
