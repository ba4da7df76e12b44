"""The project folders opened lately, newest first, kept in the window's own settings (window.ini)."""

from __future__ import annotations

import json
import time

from PySide6.QtCore import QSettings

RECENT_KEY = "recent/projects"
MAX_RECENT = 12


def recent_projects(settings: QSettings) -> list[tuple[str, float]]:
    """(folder, when last opened in seconds since the epoch), newest first; an unreadable value is none."""
    raw = settings.value(RECENT_KEY, "")
    try:
        listed = json.loads(raw) if isinstance(raw, str) and raw else []
    except ValueError:
        return []
    out: list[tuple[str, float]] = []
    for item in listed if isinstance(listed, list) else []:
        if (
            isinstance(item, list)
            and len(item) == 2
            and isinstance(item[0], str)
            and isinstance(item[1], int | float)
        ):
            out.append((item[0], float(item[1])))
    return out


def remember_project(settings: QSettings, folder: str, when: float | None = None) -> None:
    """Put ``folder`` first (once), keeping at most ``MAX_RECENT``."""
    stamp = time.time() if when is None else when
    kept = [(path, at) for path, at in recent_projects(settings) if path != folder]
    settings.setValue(RECENT_KEY, json.dumps([[folder, stamp], *kept[: MAX_RECENT - 1]]))


def age_text(seconds: float) -> str:
    """How long ago, in the largest whole unit (``just now``, ``5 min ago``, ``3 h ago``, ``2 d ago``)."""
    if seconds < 60:
        return "just now"
    if seconds < 3600:
        return f"{int(seconds // 60)} min ago"
    if seconds < 86400:
        return f"{int(seconds // 3600)} h ago"
    return f"{int(seconds // 86400)} d ago"
