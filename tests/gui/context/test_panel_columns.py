"""The Context panel's tables stay readable in a dock of the width the window gives it: the Source of an
X-ray row (what the part is) keeps room for a short label instead of shrinking to a few characters."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from piwork.core.context.xray import Xray, XrayPart
from piwork.gui.context.context_panel import ContextPanel
from piwork.gui.context.xray_model import XrayModel


@pytest.mark.parametrize(
    "width", [380, 285]
)  # the dock beside the tree and the chat: 1100 and 1000 px windows
def test_xray_source_column_keeps_room_in_a_narrow_dock(qtbot: QtBot, width: int) -> None:
    panel = ContextPanel()
    qtbot.addWidget(panel)
    panel.resize(width, 600)
    panel.show()
    qtbot.waitExposed(panel)
    parts = (
        XrayPart("tool_result", "bash seq 1 3000", 6070, 0.6),
        XrayPart("tool_result", "read notes.txt", 1600, 0.2),
        XrayPart("system", "system prompt: tools", 171, 0.1),
        XrayPart("compaction_summary", "summary", 100, 0.1),
    )
    view = panel.xray_view
    panel.set_xray(Xray(parts, 7941, "cl100k_base"), None)
    qtbot.waitUntil(lambda: 0 < view.viewport().width() < width)  # laid out in the panel's width
    panel.set_xray(Xray(parts, 7941, "cl100k_base"), None)  # a refresh replaces every row, as the feed does
    QApplication.processEvents()  # the view lays its columns out again after a reset
    label = view.fontMetrics().horizontalAdvance("read notes.txt")
    assert view.columnWidth(0) >= label, (view.columnWidth(0), label)
    # every column still fits the view: the numbers are not pushed out of sight
    used = sum(view.columnWidth(c) for c in range(4) if not view.isColumnHidden(c))
    assert used <= view.viewport().width() + 1
    assert not view.isColumnHidden(2) and not view.isColumnHidden(3)
    if view.isColumnHidden(1):  # too narrow for the Kind column: the tooltip still names the kind
        tip = panel.xray_model.index(0, 0).data(Qt.ItemDataRole.ToolTipRole)
        assert "tool result" in tip
    panel.resize(700, 600)  # wide again: the Kind column comes back
    qtbot.waitUntil(lambda: not view.isColumnHidden(1))


@pytest.mark.parametrize("width", [285, 400, 700])
def test_manifest_columns_stay_in_the_dock_and_the_path_takes_the_room(qtbot: QtBot, width: int) -> None:
    """Nothing falls off the dock: layer, status and tokens take what they hold, the path the rest; a
    narrow dock shows layer numbers only and leaves the reason to the row's tooltip."""
    from piwork.core.context.manifest import Manifest, ManifestEntry

    panel = ContextPanel()
    qtbot.addWidget(panel)
    panel.resize(width, 600)
    panel.show()
    qtbot.waitExposed(panel)
    panel.tabs.setCurrentIndex(1)
    entries = (
        ManifestEntry(1, "contextFile", "/repo/AGENTS.md", "included", 15),
        ManifestEntry(2, "profile", "/repo/.pi/piwork-profile.json", "included", 39),
        ManifestEntry(5, "snapshot", "/repo/.pi/project-context.md", "missing", reason="not found"),
    )
    panel.set_manifest(Manifest("task-1", "2026-01-01T00:00:00Z", "o200k_base", entries), "/repo")
    view, header = panel.manifest_view, panel.manifest_view.horizontalHeader()
    qtbot.waitUntil(lambda: 0 < view.viewport().width() < width)
    QApplication.processEvents()
    assert header.length() <= view.viewport().width() + 1  # every shown column is in view
    shown = [c for c in range(5) if not view.isColumnHidden(c)]
    assert view.columnWidth(2) == max(view.columnWidth(c) for c in shown)  # the path gets the room
    model = panel.manifest_model
    narrow = view.isColumnHidden(4)
    assert narrow == (width < 500)
    assert model.index(0, 0).data() == ("1" if narrow else "1. Nearest context files")
    missing = next(r for r in range(model.rowCount()) if model.index(r, 1).data() == "missing")
    assert "not found" in model.index(missing, 2).data(Qt.ItemDataRole.ToolTipRole)


def test_context_files_are_named_alike_inside_the_project_and_in_the_home_folder(tmp_path: Path) -> None:
    """One context file in the project, one in ~/.pi/agent: relative and ~/… (not relative and absolute)."""
    home = os.environ["HOME"]
    project = os.path.join(home, "work", "proj")
    parts = (
        XrayPart("context_file", os.path.join(project, "AGENTS.md"), 300, 0.5),
        XrayPart("context_file", os.path.join(home, ".pi", "agent", "AGENTS.md"), 200, 0.3),
        XrayPart("context_file", str(tmp_path / "elsewhere" / "AGENTS.md"), 100, 0.2),
    )
    model = XrayModel()
    model.set_project_dir(project)
    model.set_xray(Xray(parts, 600, "cl100k_base"))
    names = [model.index(row, 0).data() for row in range(model.rowCount())]
    outside = str(tmp_path / "elsewhere" / "AGENTS.md")
    expected = outside if not outside.startswith(home + os.sep) else "~/" + os.path.relpath(outside, home)
    assert names == ["AGENTS.md", "~/.pi/agent/AGENTS.md", expected]
