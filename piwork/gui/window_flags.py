"""The title-bar buttons of piwork's dialogs, in one place.

A dialog shows only what a dialog needs: its title and a close button (no minimise: it belongs to the
window above it; no maximise, which would only stretch a form). A big viewer (comparing branches,
lists of files, sessions or search results, the trust review) may also be maximised, where more room
shows more.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QWidget

_DIALOG = (
    Qt.WindowType.Dialog
    | Qt.WindowType.CustomizeWindowHint  # only the hints below, not the window manager's defaults
    | Qt.WindowType.WindowTitleHint
    | Qt.WindowType.WindowSystemMenuHint
    | Qt.WindowType.WindowCloseButtonHint
)


def dialog_buttons(widget: QWidget, *, maximize: bool = False) -> None:
    """Give ``widget`` (a dialog, not shown yet) a close button, and a maximise button for a viewer."""
    flags = _DIALOG | Qt.WindowType.WindowMaximizeButtonHint if maximize else _DIALOG
    widget.setWindowFlags(flags)
