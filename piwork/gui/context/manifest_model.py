"""Manifest tab model: the ten context layers as rows (status icon, path, tokens, reason).

Every layer gets at least one row, so a layer with nothing loaded still says so ("—"); layers with several
files (context files, required paths, task files) get one row per file.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QObject, Qt
from PySide6.QtGui import QColor, QIcon, QPainter, QPixmap

from piwork.core.context import LAYERS, Layer, Manifest, ManifestEntry
from piwork.core.paths import named_path
from piwork.gui.flat_models import AnyIndex, FlatTableModel
from piwork.gui.inert_text import plain_tip

EntryRole = Qt.ItemDataRole.UserRole + 1
COLUMNS = ("Layer", "Status", "Path", "Tokens", "Reason")

STATUS_COLORS = {
    "included": "#2e7d32",
    "planned": "#1f5fc4",
    "omitted": "#808080",
    "stale": "#b45309",
    "over-cap": "#ea580c",
    "blocked-untrusted": "#c62828",
    "missing": "#9e9e9e",
}


def status_icon(status: str) -> QIcon:
    """A small coloured dot/shape per status, drawn once (no image files needed)."""
    cached = _ICONS.get(status)
    if cached is not None:
        return cached
    pixmap = QPixmap(12, 12)
    pixmap.fill(QColor(0, 0, 0, 0))
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    color = QColor(STATUS_COLORS.get(status, "#808080"))
    painter.setPen(color)
    painter.setBrush(
        color if status in ("included", "over-cap", "blocked-untrusted", "stale") else QColor(0, 0, 0, 0)
    )
    if status in ("over-cap", "blocked-untrusted"):
        painter.drawRect(2, 2, 8, 8)
    else:
        painter.drawEllipse(2, 2, 8, 8)
    painter.end()
    icon = QIcon(pixmap)
    _ICONS[status] = icon
    return icon


_ICONS: dict[str, QIcon] = {}


@dataclass(frozen=True)
class ManifestRow:
    layer: Layer
    entry: ManifestEntry | None  # None: nothing recorded for this layer


def manifest_rows(manifest: Manifest | None) -> list[ManifestRow]:
    rows: list[ManifestRow] = []
    for layer in LAYERS:
        entries = manifest.layer_entries(layer.number) if manifest is not None else []
        rows.extend(ManifestRow(layer, entry) for entry in entries)
        if not entries:
            rows.append(ManifestRow(layer, None))
    return rows


class ManifestModel(FlatTableModel):
    columns = COLUMNS
    column_tips = (
        "The context layer (1 nearest context files … 10 external docs); in a narrow dock only its number",
        "Whether the layer's file went into the task's context",
        "The file: relative to the project inside it, ~/… in your home folder",
        "Its tokens",
        "Why it is (not) included",
    )

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._rows: list[ManifestRow] = manifest_rows(None)
        self.manifest: Manifest | None = None
        self.cwd: str | None = None
        self.short_layers = False  # a narrow dock: the layer column shows only the number

    def set_short_layers(self, short: bool) -> None:
        if short != self.short_layers:
            self.short_layers = short
            if self._rows:
                self.dataChanged.emit(self.index(0, 0), self.index(len(self._rows) - 1, 0))

    def set_manifest(self, manifest: Manifest | None, cwd: str | None = None) -> None:
        with self.replacing_rows():
            self.manifest = manifest
            self.cwd = cwd
            self._rows = manifest_rows(manifest)

    def shown_rows(self) -> int:
        return len(self._rows)

    def row_at(self, position: int) -> ManifestRow | None:
        return self._rows[position] if 0 <= position < len(self._rows) else None

    def _path(self, entry: ManifestEntry) -> str:
        return named_path(entry.path, self.cwd)

    def data(self, index: AnyIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not self.is_shown(index):
            return None
        row = self.row_at(index.row())
        if row is None:
            return None
        entry, column = row.entry, index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            if column == 0:
                return (
                    str(row.layer.number) if self.short_layers else f"{row.layer.number}. {row.layer.title}"
                )
            if entry is None:
                return {1: "not recorded", 2: row.layer.source}.get(column, "")
            if column == 1:
                return entry.status
            if column == 2:
                return self._path(entry)
            if column == 3:
                return f"{entry.tokens:,}" if entry.tokens else "—"
            if column == 4:
                return entry.reason or ""
            return None
        if role == Qt.ItemDataRole.DecorationRole and column == 1 and entry is not None:
            return status_icon(entry.status)
        if role == Qt.ItemDataRole.ForegroundRole and entry is None and column > 0:
            return QColor("#808080")
        if role == Qt.ItemDataRole.TextAlignmentRole and column == 3:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.ToolTipRole:
            if entry is None:
                return plain_tip(
                    f"Layer {row.layer.number} ({row.layer.title}): nothing recorded for this task"
                )
            layer = f"Layer {row.layer.number} ({row.layer.title})"
            reason = f": {entry.reason}" if entry.reason else ""
            return plain_tip(f"{layer}\n{entry.path}\n{entry.status}{reason}")
        if role == EntryRole:
            return entry
        return None
