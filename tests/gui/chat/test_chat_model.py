"""The chat list model: Qt's model contract, the lazy window over long conversations, Markdown rendering."""

from __future__ import annotations

from PySide6.QtGui import QTextDocument
from pytestqt.modeltest import ModelTester
from pytestqt.qtbot import QtBot

from piwork.gui.chat.chat_model import ChatModel, prepended_positions
from piwork.gui.chat.markdown import highlight_code_blocks, render_markdown
from piwork.gui.chat.rows import ChatRow, RowKind


def _rows(n: int) -> list[ChatRow]:
    return [ChatRow(RowKind.TEXT, f"message {i}") for i in range(n)]


def test_model_contract(qtmodeltester: ModelTester) -> None:
    model = ChatModel(window=5)
    model.reset_rows(_rows(12))
    qtmodeltester.check(model)
    model.append_rows(_rows(3))
    model.show_earlier(4)
    qtmodeltester.check(model)


def test_long_conversations_expose_only_the_recent_window() -> None:
    model = ChatModel(window=100)
    rows = _rows(1000)
    model.reset_rows(rows)
    assert model.rowCount() == 101  # "show earlier" + the last 100
    assert model.row_at(0).kind is RowKind.MORE and model.hidden_count == 900
    assert "900 earlier" in model.more_label()
    assert model.row_at(1) is rows[900]
    assert model.show_earlier(200) == 200
    assert model.rowCount() == 301 and model.row_at(1) is rows[700]
    assert model.show_earlier(10_000) == 700
    assert model.rowCount() == 1000 and model.row_at(0) is rows[0]
    assert model.visible_index_of(rows[999]) == 999


def test_the_show_earlier_label_groups_thousands() -> None:
    model = ChatModel(window=200)
    model.reset_rows(_rows(12_200))
    assert model.more_label() == "Show 12,000 earlier items"


def test_in_place_change_touches_one_row(qtbot: QtBot) -> None:
    model = ChatModel()
    rows = _rows(10)
    model.reset_rows(rows)
    with qtbot.waitSignal(model.dataChanged) as changed:
        rows[7].text += " more"
        rows[7].touch()
        model.notify_changed(rows[7])
    assert changed.args[0].row() == 7 and changed.args[1].row() == 7


def test_markdown_code_blocks_are_highlighted(qtbot: QtBot) -> None:
    doc = QTextDocument()
    render_markdown(
        doc, "Intro\n\n```python\ndef add(a, b):\n    return a + b\n```\n\n`x` inline", dark=False
    )
    assert "def add(a, b):" in doc.toPlainText()
    html = doc.toHtml()
    assert "color:#" in html  # keywords coloured
    plain = QTextDocument()
    plain.setMarkdown("```\nno language here\n```")
    assert highlight_code_blocks(plain, dark=True) == 1


def test_markdown_headings_are_a_step_above_the_text_and_bold_throughout(qtbot: QtBot) -> None:
    doc = QTextDocument()
    render_markdown(doc, "# Title\n\n## Goal `code` here\n\nBody text", dark=False)
    base = doc.defaultFont().pointSizeF()
    sizes: dict[str, tuple[float, bool]] = {}
    block = doc.begin()
    while block.isValid():
        fragments = block.begin()
        while not fragments.atEnd():
            fragment = fragments.fragment()
            font = fragment.charFormat().font()
            sizes[fragment.text().strip()] = (font.pointSizeF() / base, font.bold())
            fragments += 1
        block = block.next()
    assert sizes["Body text"] == (1.0, False)
    assert sizes["Title"][1] and 1.2 < sizes["Title"][0] < 1.5
    assert sizes["Goal"][1] and sizes["code"][1] and 1.1 < sizes["code"][0] < sizes["Title"][0]


def _positions_agree(model: ChatModel) -> None:
    rows = model.all_rows()
    for position, row in enumerate(rows):
        assert model.position_of_key(row.key) == position
        assert model.row_at_position(position) is row
        visible = model.visible_index_of(row)
        if visible is not None:
            assert model.row_at(visible) is row


def test_rows_put_before_the_others_keep_every_position_right() -> None:
    model = ChatModel(window=5)
    shown = _rows(8)
    model.reset_rows(shown)
    earlier = _rows(20)
    assert model.prepend_rows(earlier, prepended_positions(earlier))  # numbered where they were built
    _positions_agree(model)
    assert model.position_of_key(earlier[0].key) == 0 and model.position_of_key(shown[0].key) == 20
    model.append_rows(_rows(2))
    older = _rows(4)
    assert model.prepend_rows(older, prepended_positions(older))  # numbered for a model with none prepended
    _positions_agree(model)
    assert model.position_of_key(older[0].key) == 0 and model.position_of_key(shown[-1].key) == 31
    assert model.show_earlier(10_000) == 27
    _positions_agree(model)
    model.reset_rows(_rows(3))
    _positions_agree(model)
