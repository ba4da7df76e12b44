"""The label and colour a user gives a session's tab, remembered per session file (in window.ini), so the
session's tab wears them again whenever it opens."""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass

from PySide6.QtCore import QSettings

GROUP = "tabLabels"

# The colours offered in the tab's Colour menu: (name shown, colour).
COLOURS: tuple[tuple[str, str], ...] = (
    ("Red", "#d64545"),
    ("Orange", "#e08a1e"),
    ("Yellow", "#d4b106"),
    ("Green", "#3a9a4a"),
    ("Blue", "#2f6fd6"),
    ("Purple", "#8a4fd1"),
    ("Grey", "#8a8a8a"),
)


@dataclass(frozen=True)
class TabLabel:
    label: str = ""
    colour: str = ""  # "#rrggbb", or "" for none


def _key(session_file: str) -> str:
    digest = hashlib.sha1(os.path.realpath(session_file).encode("utf-8")).hexdigest()[:20]
    return f"{GROUP}/{digest}"


def load_label(settings: QSettings, session_file: str) -> TabLabel:
    raw = settings.value(_key(session_file))
    if not isinstance(raw, str):
        return TabLabel()
    try:
        data = json.loads(raw)
    except ValueError:
        return TabLabel()
    if not isinstance(data, dict):
        return TabLabel()
    label, colour = data.get("label"), data.get("colour")
    return TabLabel(label if isinstance(label, str) else "", colour if isinstance(colour, str) else "")


def save_label(settings: QSettings, session_file: str, label: TabLabel) -> None:
    if not label.label and not label.colour:
        settings.remove(_key(session_file))
    else:
        settings.setValue(_key(session_file), json.dumps({"label": label.label, "colour": label.colour}))
    settings.sync()
