"""A bar above the composer while another program writes the open session file (a Pi, another piwork).

It says who, and offers what the user can do: fork the session into a new file of their own, or take the
file over — once its writer has stopped, or at once when nothing tells when it stops. "Take Over When It
Stops" is a toggle: checked, the file is taken over as soon as the writer is seen gone.
"""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QWidget

FORK_TEXT = "&Fork to a New Session"
TAKE_OVER_TEXT = "&Take Over"
TAKE_OVER_WHEN_STOPPED_TEXT = "&Take Over When It Stops"


class OwnerBanner(QFrame):
    forkRequested = Signal()
    takeOverRequested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("ownerBanner")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setAccessibleName("Another program writes this session")
        self.text = QLabel(self)
        self.text.setObjectName("ownerBannerText")
        self.text.setWordWrap(True)
        self.fork_button = QPushButton(FORK_TEXT, self)
        self.fork_button.setAutoDefault(False)
        self.fork_button.setAccessibleDescription("Go on in a copy of this session, up to its last entry")
        self.take_over_button = QPushButton(TAKE_OVER_TEXT, self)
        self.take_over_button.setAutoDefault(False)
        self.take_over_button.setAccessibleDescription("Write to this session here from now on")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(8, 4, 8, 4)
        layout.addWidget(self.text, 1)
        layout.addWidget(self.fork_button)
        layout.addWidget(self.take_over_button)
        self.fork_button.clicked.connect(self.forkRequested)
        self.take_over_button.clicked.connect(self._on_take_over)
        self.hide()

    @property
    def waiting_to_take_over(self) -> bool:
        """The user asked to take the file over once its writer stops."""
        return self.take_over_button.isCheckable() and self.take_over_button.isChecked()

    def show_writer(self, text: str, *, stop_seen: bool) -> None:
        """Another program writes the file (``text`` says who). ``stop_seen``: piwork can tell when it
        stops, so taking over waits for that; else the user takes over when they know it is done."""
        waiting = self.waiting_to_take_over
        self._set(text)
        self.take_over_button.setCheckable(stop_seen)
        self.take_over_button.setChecked(stop_seen and waiting)
        self.take_over_button.setText(TAKE_OVER_WHEN_STOPPED_TEXT if stop_seen else TAKE_OVER_TEXT)
        self.take_over_button.setAccessibleDescription(
            "Write to this session here as soon as the other program stops"
            if stop_seen
            else "Write to this session here from now on (only once the other program is done with it)"
        )

    def show_stopped(self, text: str) -> None:
        """The writer has stopped: the file can be taken over now."""
        self._set(text)
        self.take_over_button.setChecked(False)
        self.take_over_button.setCheckable(False)
        self.take_over_button.setText(TAKE_OVER_TEXT)
        self.take_over_button.setAccessibleDescription("Write to this session here from now on")

    def _set(self, text: str) -> None:
        self.text.setText(text)
        self.setAccessibleDescription(text)
        self.show()

    def _on_take_over(self) -> None:
        if not self.take_over_button.isCheckable():
            self.takeOverRequested.emit()
