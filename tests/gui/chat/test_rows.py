"""Rows built from engine messages read cleanly: summaries' file lists, tool output with terminal colours."""

from __future__ import annotations

from PySide6.QtGui import QTextDocument

from piwork.gui.chat.markdown import render_markdown
from piwork.gui.chat.rows import ChatRow, RowKind, rows_for_message
from piwork.gui.chat.tool_card import ToolCard
from piwork.gui.chat.tool_views import DEFAULT_VIEW

SUMMARY = (
    "## Next\n- Run the full suite.\n\n<read-files>\nsrc/cart.py\nREADME.md\n</read-files>\n\n"
    "<modified-files>\nsrc/prices.py\n</modified-files>"
)


def test_summary_file_lists_become_their_own_paragraphs() -> None:
    for message in (
        {"role": "compactionSummary", "summary": SUMMARY, "tokensBefore": 11120, "timestamp": 1},
        {"role": "branchSummary", "summary": SUMMARY, "fromId": "x", "timestamp": 1},
    ):
        (row,) = rows_for_message(message, {})
        assert row.kind is RowKind.NOTICE
        doc = QTextDocument()
        render_markdown(doc, row.text, dark=False)
        lines = doc.toPlainText().splitlines()
        assert "Run the full suite." in lines  # nothing glued onto the last bullet
        assert "Files read: src/cart.py, README.md" in lines
        assert "Files modified: src/prices.py" in lines


def test_tool_card_preview_drops_terminal_escapes() -> None:
    card = ToolCard("c1", "bash", {"command": "scripts/test.sh"})
    card.result_text = "test_a \x1b[32mPASSED\x1b[0m\ntest_b \x1b[1;31mFAILED\x1b[0m\n"
    assert DEFAULT_VIEW.preview(card, expanded=False) == "test_a PASSED\ntest_b FAILED"
    assert ChatRow(RowKind.TOOL, tool=card).plain_text().startswith("bash scripts/test.sh\n")


def test_tree_entry_details_drop_terminal_escapes() -> None:
    from piwork.gui.tree.entry_details import entry_detail_text

    entry = {
        "type": "message",
        "id": "e1",
        "timestamp": "2026-01-01T00:00:00.000Z",
        "message": {
            "role": "toolResult",
            "toolCallId": "c1",
            "toolName": "bash",
            "content": [{"type": "text", "text": "ok \x1b[32mPASSED\x1b[0m"}],
            "isError": False,
            "timestamp": 1,
        },
    }
    text = entry_detail_text(entry)
    assert text.endswith("ok PASSED") and "\x1b" not in text


def test_angle_brackets_in_a_reply_stay_visible() -> None:
    """A reply about code names tags and generics in prose; they are words to read, not HTML to drop."""
    doc = QTextDocument()
    text = "Return a List<String> here, wrap the table in <details>, and keep **this** bold.\n\n<br>"
    render_markdown(doc, text, dark=False)
    plain = doc.toPlainText()
    assert "List<String>" in plain
    assert "<details>" in plain
    assert "<br>" in plain
    assert "keep this bold" in plain  # Markdown itself still applies


def test_piwork_context_messages_are_titled_in_words_and_keep_their_lines() -> None:
    contract = (
        "Project context for this task.\n\n<task_contract>\nTask contract\nTitle: fix the add function\n"
        "Goal: fix the add function\nVerify: (not set)\n</task_contract>"
    )
    (bundle,) = rows_for_message(
        {"role": "custom", "customType": "piwork.contextBundle", "content": contract, "display": True}, {}
    )
    assert bundle.title == "Task context"
    doc = QTextDocument()
    render_markdown(doc, bundle.text, dark=False)
    lines = doc.toPlainText().splitlines()
    assert "Title: fix the add function" in lines and "Goal: fix the add function" in lines
    (fresh,) = rows_for_message(
        {
            "role": "custom",
            "customType": "piwork.freshSummary",
            "content": "Where it stands",
            "display": True,
        },
        {},
    )
    assert fresh.title == "Handed-over summary"
    (other,) = rows_for_message(
        {"role": "custom", "customType": "my-extension", "content": "a\nb", "display": True}, {}
    )
    assert other.title == "my-extension" and other.text == "a\nb"  # an extension's message is left as sent


def test_a_handed_over_summary_lists_its_files_in_words() -> None:
    text = "Handed over.\n\n## Next steps\nDone.\n<read-files>\nsrc/app.py\n</read-files>"
    (row,) = rows_for_message(
        {"role": "custom", "customType": "piwork.freshSummary", "content": text, "display": True}, {}
    )
    doc = QTextDocument()
    render_markdown(doc, row.text, dark=False)
    plain = doc.toPlainText()
    assert "<read-files>" not in plain and "Files read: src/app.py" in plain


def test_tool_card_preview_counts_every_hidden_line() -> None:
    """2,000 short lines: the collapsed card shows 8 and says the other 1,992 are there, not just those
    that fit in the first few kilobytes; expanded, it shows 400 and says 1,600 more are in the log."""
    output = "\n".join(str(n) for n in range(3001, 5001))
    card = ToolCard("c1", "bash", {"command": "seq 1 5000"}, status="done", result_text=output)
    collapsed = DEFAULT_VIEW.preview(card, expanded=False).splitlines()
    assert collapsed[:8] == [str(n) for n in range(3001, 3009)]
    assert collapsed[8] == "… 1,992 more lines (click the header to expand)"
    expanded = DEFAULT_VIEW.preview(card, expanded=True).splitlines()
    assert len(expanded) == 401 and expanded[399] == "3400"
    assert expanded[400] == "… 1,600 more lines (the full output is in the log)"


def test_tool_card_preview_of_long_lines_says_the_rest_is_hidden() -> None:
    output = "x" * 9000 + "\nlast line"
    card = ToolCard("c1", "bash", {"command": "cat wide.txt"}, status="done", result_text=output)
    assert (
        DEFAULT_VIEW.preview(card, expanded=False).splitlines()[-1]
        == "… 1 more line (click the header to expand)"
    )
