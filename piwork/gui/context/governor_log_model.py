"""Governor log model: one row per provider call where the governor did something, each expandable to
the tool results it elided (tool, argument, tokens, reason). Built on the two-level ``GroupedRows`` base
(nested_models.py): decisions are the groups, their elided results the members."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import QAbstractItemModel, QObject, Qt

from piwork.core.context import ElidedItem, GovernorDecision
from piwork.gui.flat_models import AnyIndex
from piwork.gui.inert_text import plain_tip
from piwork.gui.nested_models import GroupedRows

DecisionRole = Qt.ItemDataRole.UserRole + 1
ElidedRole = Qt.ItemDataRole.UserRole + 2
COLUMNS = ("Time", "Turn", "Decision", "Triggers", "Before", "After", "Savings", "Required", "Elided")
NUMBER_COLUMNS = range(4, 8)


def _clock(time_ms: int) -> str:
    return time.strftime("%H:%M:%S", time.localtime(time_ms / 1000))


def decision_cells(decision: GovernorDecision) -> tuple[str, ...]:
    elided = len(decision.elided)
    return (
        _clock(decision.time_ms),
        str(decision.turn),
        decision.decision + (f": {decision.detail}" if decision.detail else ""),
        ", ".join(decision.triggers) or "—",
        f"{decision.occupancy_before:,}",
        f"{decision.occupancy_after:,}",
        f"{decision.savings:,}",
        f"{decision.required:,}",
        f"{elided}" + (f" (+{decision.sticky} kept)" if decision.sticky else ""),
    )


def elided_text(item: ElidedItem) -> str:
    return f"{item.tool} {item.argument} — {item.tokens:,} tokens — {item.reason}"


def export_json(decisions: Sequence[GovernorDecision]) -> str:
    """The log as JSON: metadata only (paths/commands, counts, reasons), never tool output."""
    return json.dumps(
        {"version": 1, "decisions": [d.to_json() for d in decisions]}, indent=2, ensure_ascii=False
    )


class GovernorLogModel(GroupedRows, QAbstractItemModel):
    columns = COLUMNS

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._decisions: list[GovernorDecision] = []

    @property
    def decisions(self) -> list[GovernorDecision]:
        return list(self._decisions)

    def set_decisions(self, decisions: Sequence[GovernorDecision]) -> None:
        with self.replacing_rows():
            self._decisions = list(decisions)

    def add_decision(self, decision: GovernorDecision) -> None:
        with self.appending_groups(1):
            self._decisions.append(decision)

    def decision_at(self, index: AnyIndex) -> GovernorDecision | None:
        if not index.isValid():
            return None
        group = self.group_of(index)
        if group is None:
            return self._decisions[index.row()] if index.row() < len(self._decisions) else None
        return self._decisions[group]

    def elided_at(self, index: AnyIndex) -> ElidedItem | None:
        group = self.group_of(index)
        if group is None:
            return None
        decision = self._decisions[group]
        return decision.elided[index.row()] if index.row() < len(decision.elided) else None

    # ---- Qt model API ----------------------------------------------------------------------------

    def group_count(self) -> int:
        return len(self._decisions)

    def member_count(self, group: int) -> int:
        return len(self._decisions[group].elided)

    def data(self, index: AnyIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        column = index.column()
        item = self.elided_at(index)
        if not self.is_group(index):
            if item is None:
                return None
            if role == Qt.ItemDataRole.DisplayRole and column == 0:
                return elided_text(item)
            if role == Qt.ItemDataRole.ToolTipRole:
                return plain_tip(
                    f"{elided_text(item)}\nDouble-click (or “Show original”) to open the original result"
                )
            if role == ElidedRole:
                return item
            return None
        decision = self.decision_at(index)
        if decision is None:
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return decision_cells(decision)[column] if 0 <= column < len(COLUMNS) else None
        if role == Qt.ItemDataRole.TextAlignmentRole and column in NUMBER_COLUMNS:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.ToolTipRole:
            return plain_tip(
                f"{decision.decision}: {decision.detail or '—'}\n"
                f"occupancy {decision.occupancy_before:,} → {decision.occupancy_after:,} "
                f"({decision.tokenizer}); savings {decision.savings:,} of {decision.required:,} required"
            )
        if role == DecisionRole:
            return decision
        return None
