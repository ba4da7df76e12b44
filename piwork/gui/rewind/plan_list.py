"""PlanList: the files a restore would change, grouped as added, modified and removed.

A file changed outside piwork since the last checkpoint is marked as such: a restore overwrites it, so
the user sees which of their own changes are at stake. A group lists at most ``GROUP_LIMIT`` paths and
says how many more (a tree of thousands of changed files stays cheap to lay out).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QTreeWidget, QTreeWidgetItem, QWidget

if TYPE_CHECKING:
    from piwork.core.checkpoints import RestorePlan

GROUP_LIMIT = 300
MIN_HEIGHT, MAX_HEIGHT = 48, 260
PATH_ROLE = Qt.ItemDataRole.UserRole  # a row's path; a group row's kind (``added``...)
OUTSIDE_MARK = "  — changed outside piwork"
GROUPS = (
    ("added", "Added", "not there now: written back"),
    ("modified", "Modified", "put back as they were"),
    ("removed", "Removed", "not there at this point: deleted"),
)


def _files(count: int) -> str:
    return f"{count:,} file" + ("" if count == 1 else "s")


class PlanList(QTreeWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setHeaderHidden(True)
        self.setRootIsDecorated(False)
        self.setUniformRowHeights(True)
        self.setColumnCount(1)
        self.setAccessibleName("Files that would change")
        self.setAccessibleDescription("The project's files a restore would add, modify or remove")
        self.setFixedHeight(MIN_HEIGHT)
        self.plan: RestorePlan | None = None

    def show_plan(self, plan: RestorePlan) -> None:
        self.plan = plan
        self.clear()
        outside = set(plan.outside)
        bold = QFont(self.font())
        bold.setBold(True)
        for key, word, meaning in GROUPS:
            paths: Sequence[str] = getattr(plan, key)
            if not paths:
                continue
            group = QTreeWidgetItem([f"{word} — {_files(len(paths))} ({meaning})"])
            group.setFont(0, bold)
            group.setData(0, PATH_ROLE, key)
            self.addTopLevelItem(group)
            for path in paths[:GROUP_LIMIT]:
                item = QTreeWidgetItem([path + (OUTSIDE_MARK if path in outside else "")])
                item.setData(0, PATH_ROLE, path)
                item.setToolTip(0, path)
                group.addChild(item)
            if len(paths) > GROUP_LIMIT:
                group.addChild(QTreeWidgetItem([f"… and {len(paths) - GROUP_LIMIT:,} more"]))
            group.setExpanded(True)
        self._fit()

    def _fit(self) -> None:
        """As tall as its rows, within ``MIN_HEIGHT`` and ``MAX_HEIGHT`` (more rows scroll)."""
        rows = self.topLevelItemCount() + sum(
            item.childCount() for item in map(self.topLevelItem, range(self.topLevelItemCount())) if item
        )
        row = max(self.sizeHintForRow(0), self.fontMetrics().height() + 2)
        wanted = rows * row + 2 * self.frameWidth() + 6
        self.setFixedHeight(max(MIN_HEIGHT, min(MAX_HEIGHT, wanted)))

    def listed(self) -> dict[str, list[str]]:
        """The paths shown, by group (``added``, ``modified``, ``removed``)."""
        shown: dict[str, list[str]] = {}
        for index in range(self.topLevelItemCount()):
            group = self.topLevelItem(index)
            if group is None:
                continue
            rows = [group.child(i) for i in range(group.childCount())]
            paths = [row.data(0, PATH_ROLE) for row in rows if row is not None]
            shown[str(group.data(0, PATH_ROLE))] = [str(p) for p in paths if p is not None]
        return shown
