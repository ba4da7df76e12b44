"""Palette rows whose description is longer than the row: cut with "…" where the row ends, the whole
text in the row's tooltip and accessible description."""

from __future__ import annotations

import re

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from piwork.gui.palette.palette_dialog import PaletteDelegate, PaletteDialog, html_document
from piwork.gui.palette.palette_model import PaletteItem

LONG = (
    "Reviews every migration script in the repository, checks that each rollback path works end to end "
    "and writes a report of what it found before anything ships"
)


def _visible_text(html_text: str) -> str:
    return re.sub(r"<[^>]+>", "", html_text).replace("&nbsp;", " ")


def _dialog(qtbot: QtBot, items: list[PaletteItem]) -> PaletteDialog:
    dialog = PaletteDialog(items)
    qtbot.addWidget(dialog)
    dialog.resize(520, 300)
    dialog.show()
    qtbot.waitExposed(dialog)
    return dialog


def test_long_description_ends_in_an_ellipsis_within_the_row(qtbot: QtBot) -> None:
    dialog = _dialog(
        qtbot, [PaletteItem("skill", "/skill:migrations", LONG), PaletteItem("action", "Quit", "Bye")]
    )
    model = dialog.model
    long_row = next(r for r in range(model.rowCount()) if model.item_at(r).detail == LONG)  # type: ignore[union-attr]
    index = model.index(long_row)
    font = dialog.list.font()
    width = dialog.list.visualRect(index).width() - 120

    fitted = PaletteDelegate.fitted_html(index, font, width)
    shown = _visible_text(fitted)
    assert shown.startswith("/skill:migrations  Reviews every")
    assert shown.endswith("…") and LONG not in shown
    assert html_document(font, fitted).idealWidth() <= width

    short = PaletteDelegate.fitted_html(model.index(1 - long_row), font, width)
    assert "…" not in short and _visible_text(short) == "Quit  Bye"

    for role in (Qt.ItemDataRole.ToolTipRole, Qt.ItemDataRole.AccessibleDescriptionRole):
        assert index.data(role) == f"/skill:migrations — {LONG}"
    dialog.list.grab()  # the rows paint with the fitted text


def test_a_title_wider_than_the_row_is_cut_too_and_keeps_its_matches(qtbot: QtBot) -> None:
    dialog = _dialog(qtbot, [PaletteItem("command", "/" + "very-long-command-name-" * 6, LONG)])
    dialog.query.setText("/very")
    index = dialog.model.index(0)
    fitted = PaletteDelegate.fitted_html(index, dialog.list.font(), 200)
    assert fitted.startswith("<b>/</b><b>v</b><b>e</b><b>r</b><b>y</b>")
    assert _visible_text(fitted).endswith("…") and "Reviews" not in fitted
