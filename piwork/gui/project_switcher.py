"""The project switcher: a compact button in the status bar naming the open project's folder, whose menu
lists the projects opened lately and Open Folder…; picking one opens it as File → Open Recent does."""

from __future__ import annotations

import os
import time

from PySide6.QtCore import QSettings, Qt, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu, QStyle, QToolButton, QWidget

from piwork.gui.inert_text import plain_tip
from piwork.gui.recent_projects import age_text, recent_projects

WAITING_HINT = "You can switch to another project once piwork has started."


def project_name(folder: str) -> str:
    """What a project is called in the title and the switcher: its folder's name (``/`` for the root)."""
    return os.path.basename(os.path.normpath(folder)) or folder


class ProjectSwitcher(QToolButton):
    projectChosen = Signal(str)  # a folder picked in the menu

    def __init__(self, ui_state: QSettings, open_folder: QAction, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("projectSwitcher")
        self.ui_state = ui_state
        self.folder = ""
        self.setIcon(self.style().standardIcon(QStyle.StandardPixmap.SP_DirIcon))
        self.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.setAutoRaise(True)
        self.setFocusPolicy(Qt.FocusPolicy.TabFocus)
        self.setAccessibleName("Project")
        self.menu_ = QMenu(self)
        self.menu_.setObjectName("projectSwitcherMenu")
        self.menu_.aboutToShow.connect(self.fill_menu)
        self.setMenu(self.menu_)
        self._open_folder = open_folder
        self._waiting = False
        self.set_folder("")

    def set_folder(self, folder: str) -> None:
        self.folder = folder
        name = project_name(folder) if folder else "No project"
        self.setText(name.replace("&", "&&"))  # a literal ampersand, not a mnemonic
        self.setAccessibleDescription(f"Open project: {folder}" if folder else "No project open")
        hint = WAITING_HINT if self._waiting else "Click to switch to another project."
        self.setToolTip(plain_tip(f"{folder}\n\n{hint}"))

    def set_waiting(self, waiting: bool) -> None:
        """Disabled while the window's session parts are not made yet, its tooltip saying why. Disabled
        rather than keeping the pick for later (as a drop is kept): its menu offers what File → Open Recent
        and Open Folder do, which are disabled meanwhile, and a greyed button says so before it is clicked,
        where a drag from another application learns nothing until it is dropped."""
        self._waiting = waiting
        self.setEnabled(not waiting)
        self.set_folder(self.folder)

    def fill_menu(self) -> None:
        menu = self.menu_
        menu.clear()
        now = time.time()
        others = [(path, when) for path, when in recent_projects(self.ui_state) if path != self.folder]
        if others:
            menu.addSection("Recent Projects")
        names = [project_name(path) for path, _when in others]
        for folder, when in others:
            name = project_name(folder)
            if names.count(name) > 1:  # two projects of one name: say where each is
                name = f"{name} — {os.path.dirname(os.path.normpath(folder))}"
            label = name.replace("&", "&&")
            action = menu.addAction(f"{label}    ({age_text(now - when)})")
            action.setToolTip(folder)
            action.setStatusTip(folder)
            action.triggered.connect(lambda _checked=False, f=folder: self.projectChosen.emit(f))
        if not others:
            menu.addAction("No other project opened yet").setEnabled(False)
        menu.addSeparator()
        menu.addAction(self._open_folder)
