"""A text selection as two points: which characters of each row it covers, and a tool card's text as Markdown."""

from __future__ import annotations

from piwork.gui.chat.text_selection import END, TextPoint, TextSelection, fenced, whole


def test_a_selection_made_backwards_covers_the_same_characters() -> None:
    forwards = TextSelection(TextPoint(3, 5), TextPoint(5, 2))
    backwards = TextSelection(TextPoint(5, 2), TextPoint(3, 5))
    for selection in (forwards, backwards):
        assert selection.span_in(2, 10) is None
        assert selection.span_in(3, 10) == (5, 10)
        assert selection.span_in(4, 7) == (0, 7)  # a row between the ends, whole
        assert selection.span_in(5, 10) == (0, 2)
        assert selection.span_in(6, 10) is None
        assert [selection.covers_whole(row) for row in (3, 4, 5)] == [False, True, False]


def test_offsets_past_a_row_s_end_stop_at_it() -> None:
    selection = whole(0, 1)
    assert selection.span_in(0, 4) == (0, 4) and selection.span_in(1, 9) == (0, 9)
    assert selection.covers_whole(0) and selection.covers_whole(1)
    assert TextSelection(TextPoint(1, 3), TextPoint(1, END)).span_in(1, 2) is None  # nothing left to select
    assert TextSelection(TextPoint(1, 3), TextPoint(1, 3)).empty


def test_a_code_fence_is_longer_than_any_backticks_inside() -> None:
    assert fenced("x = 1") == "```\nx = 1\n```"
    assert fenced("a ```` b") == "`````\na ```` b\n`````"
