"""The Manifest tab's columns are measured when the tab shows: a session opening behind the X-ray tab does
not pay for measuring rows nobody sees, and the tab still opens with its paths readable."""

from __future__ import annotations

from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from piwork.core.context.manifest import Manifest, ManifestEntry
from piwork.gui.context.context_panel import ContextPanel


def test_a_manifest_set_behind_another_tab_is_fitted_when_its_tab_shows(qtbot: QtBot) -> None:
    panel = ContextPanel()
    qtbot.addWidget(panel)
    panel.resize(400, 600)
    panel.show()
    qtbot.waitExposed(panel)
    assert panel.tabs.currentIndex() == 0  # the X-ray
    view = panel.manifest_view
    status = view.columnWidth(1)  # measured to its words only once the tab shows
    needed = view.fontMetrics().horizontalAdvance(".pi/piwork-profile.json")
    entries = (
        ManifestEntry(1, "contextFile", "/repo/AGENTS.md", "included", 15),
        ManifestEntry(2, "profile", "/repo/.pi/piwork-profile.json", "included", 39),
    )
    panel.set_manifest(Manifest("task-1", "2026-01-01T00:00:00Z", "o200k_base", entries), "/repo")
    QApplication.processEvents()
    assert view.columnWidth(1) == status  # not measured while hidden

    panel.tabs.setCurrentIndex(1)
    QApplication.processEvents()
    assert view.columnWidth(1) != status and view.columnWidth(2) >= needed  # fitted: the path has the room
