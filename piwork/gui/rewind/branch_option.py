"""RestoreOption: the branch dialog's "Also restore the files to this point".

It looks at the files as soon as the dialog opens (a dry run in a worker, through :class:`FileRewind`):
meanwhile the box is disabled and says so; then it says how many files would change, or why nothing can
be restored (no checkpoint for that point, checkpoints off, nothing different). Checking the box lists
the files, grouped as added, modified and removed, before anything happens.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from PySide6.QtWidgets import QCheckBox, QVBoxLayout, QWidget

from piwork.gui.background import BackgroundTasks
from piwork.gui.inert_text import plain_label
from piwork.gui.rewind.plan_list import PlanList
from piwork.gui.rewind.restore_dialog import outside_text
from piwork.gui.rewind.work import Look, would_change

if TYPE_CHECKING:
    from piwork.gui.rewind.flow import FileRewind

LOOKING = "Looking at the project's files…"
ASKED_LATER = " You will be asked before they are overwritten."


class RestoreOption(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.box = QCheckBox("Also restore the files to this point")
        self.box.setEnabled(False)
        self.box.setAccessibleDescription(
            "Put the project's files back as they were at the entry you move to (it can be undone)"
        )
        self.status = plain_label(LOOKING)
        self.status.setWordWrap(True)
        self.status.setIndent(22)  # under the box's text, past its indicator
        self.warning = plain_label()
        self.warning.setWordWrap(True)
        self.warning.setIndent(22)
        self.warning.setObjectName("restoreWarning")
        self.warning.hide()
        self.files = PlanList()
        self.files.hide()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 6, 0, 0)
        layout.setSpacing(2)
        layout.addWidget(self.box)
        layout.addWidget(self.status)
        layout.addWidget(self.warning)
        layout.addWidget(self.files)
        self.look: Look | None = None
        self._tasks = BackgroundTasks()
        self.box.toggled.connect(self._show_files)

    @property
    def wanted(self) -> bool:
        """The user asked for the files to be restored (and there is something to restore)."""
        plan = self.look.plan if self.look is not None else None
        return self.box.isChecked() and plan is not None and not plan.empty

    @property
    def looking(self) -> bool:
        return self._tasks.running

    def start(self, rewind: FileRewind, entry_id: str) -> asyncio.Task[Any]:
        return self._tasks.spawn(self._look(rewind, entry_id))

    async def _look(self, rewind: FileRewind, entry_id: str) -> None:
        self.show_look(await rewind.look(entry_id))

    def show_look(self, look: Look) -> None:
        self.look = look
        plan = look.plan
        if plan is None:
            self.box.setEnabled(False)
            self.status.setText(look.reason or "")
        else:
            self.box.setEnabled(not plan.empty)
            self.status.setText(would_change(plan))
            self.files.show_plan(plan)
            if plan.outside and not plan.empty:
                self.warning.setText(outside_text(plan.outside) + ASKED_LATER)
        self._show_files(self.box.isChecked())

    def _show_files(self, checked: bool) -> None:
        plan = self.look.plan if self.look is not None else None
        shown = checked and plan is not None and not plan.empty
        self.files.setVisible(shown)
        self.warning.setVisible(shown and bool(plan and plan.outside))
        window = self.window()
        if window is not self:
            window.adjustSize()

    def stop(self) -> None:
        self._tasks.cancel_all()
