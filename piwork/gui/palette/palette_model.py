"""Palette entries and the filtered, ranked list the palette shows."""

from __future__ import annotations

import html
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, Qt

from piwork.gui.flat_models import FlatListModel
from piwork.gui.inert_text import plain_tip
from piwork.gui.palette.fuzzy import fuzzy_match, words_match

AnyIndex = QModelIndex | QPersistentModelIndex
KindRole = Qt.ItemDataRole.UserRole + 2
ShortcutRole = Qt.ItemDataRole.UserRole + 3
DetailRole = Qt.ItemDataRole.UserRole + 4  # the description as plain text (the delegate elides it to fit)
MatchRole = Qt.ItemDataRole.UserRole + 5  # positions of the title's matched characters
# Ties are broken by kind: what the window does first, then commands, then the rest.
KIND_ORDER = ("action", "command", "skill", "prompt", "session", "model")


@dataclass(frozen=True)
class PaletteItem:
    kind: str  # one of KIND_ORDER
    title: str
    detail: str = ""
    shortcut: str = ""
    run: Callable[[], Any] | None = None
    key: str = ""  # identifies the item across refreshes (defaults to kind + title)
    usable: bool = True  # False: listed (with why in its detail) after everything that can be used

    @property
    def search_text(self) -> str:
        return self.title if not self.detail else f"{self.title} {self.detail}"


def highlight_html(text: str, positions: list[int]) -> str:
    marked = set(positions)
    return "".join(f"<b>{html.escape(c)}</b>" if i in marked else html.escape(c) for i, c in enumerate(text))


class PaletteModel(FlatListModel):
    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self.items: list[PaletteItem] = []
        self.query = ""
        self.shown: list[tuple[PaletteItem, list[int]]] = []

    def add_items(self, items: list[PaletteItem]) -> None:
        keys = {i.key or i.kind + i.title for i in self.items}
        self.items.extend(i for i in items if (i.key or i.kind + i.title) not in keys)
        self.set_query(self.query)

    def replace_items(self, kind: str, items: list[PaletteItem]) -> None:
        """Swap every item of ``kind`` for ``items`` (e.g. models once their keys are known)."""
        self.items = [i for i in self.items if i.kind != kind] + list(items)
        self.set_query(self.query)

    def shown_rows(self) -> int:
        return len(self.shown)

    def set_query(self, query: str) -> None:
        with self.replacing_rows():
            self._rank(query)

    def _rank(self, query: str) -> None:
        self.query = query
        ranked: list[tuple[bool, int, int, int, PaletteItem, list[int]]] = []
        for order, item in enumerate(self.items):
            match = fuzzy_match(query, item.title)
            positions = match[1] if match else []
            if match is None and item.detail and words_match(query, item.search_text):
                found = fuzzy_match(query, item.search_text)  # found in the detail: nothing to mark
                match = (found[0] - 10, []) if found is not None else None
            if match is None:
                continue
            kind = KIND_ORDER.index(item.kind) if item.kind in KIND_ORDER else len(KIND_ORDER)
            score = -match[0] if query.strip() else 0
            ranked.append((not item.usable, score, kind, order, item, positions))
        ranked.sort(key=lambda r: r[:4])
        self.shown = [(r[4], r[5]) for r in ranked]

    def item_at(self, row: int) -> PaletteItem | None:
        return self.shown[row][0] if 0 <= row < len(self.shown) else None

    def data(self, index: AnyIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not self.is_shown(index):
            return None
        item, positions = self.shown[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            return item.title
        if role == KindRole:
            return item.kind
        if role == ShortcutRole:
            return item.shortcut
        if role == DetailRole:
            return item.detail
        if role == MatchRole:
            return positions
        if role in (Qt.ItemDataRole.ToolTipRole, Qt.ItemDataRole.AccessibleDescriptionRole):
            # the whole description, also when the row shows it cut short
            return plain_tip(f"{item.title} — {item.detail}" if item.detail else item.title)
        return None
