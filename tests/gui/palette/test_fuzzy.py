"""Palette fuzzy matching: order, word starts, substrings, no match."""

from __future__ import annotations

from piwork.gui.palette.fuzzy import fuzzy_match


def _rank(query: str, texts: list[str]) -> list[str]:
    scored = [(fuzzy_match(query, t), t) for t in texts]
    return [t for s, t in sorted(((s, t) for s, t in scored if s is not None), key=lambda p: -p[0][0])]


def test_characters_in_order_or_nothing() -> None:
    assert fuzzy_match("nses", "New Session") is not None
    assert fuzzy_match("sesn", "New Session") is not None  # s-e-s-(sio)n
    assert fuzzy_match("xyz", "New Session") is None
    assert fuzzy_match("", "anything") == (0, [])


def test_word_starts_and_substrings_rank_first() -> None:
    texts = ["Session Tree", "Search All Sessions…", "Settings…", "Choose Model", "/export"]
    assert _rank("st", texts)[0] == "Session Tree"
    assert _rank("export", texts) == ["/export"]
    assert _rank("sett", texts)[0] == "Settings…"
    assert _rank("model", texts)[0] == "Choose Model"


def test_positions_point_at_the_matched_characters() -> None:
    result = fuzzy_match("ns", "New Session")
    assert result is not None
    assert [("New Session")[i] for i in result[1]] == ["N", "S"]
    sub = fuzzy_match("sess", "New Session")
    assert sub is not None and sub[1] == [4, 5, 6, 7]


def test_a_jump_to_a_word_start_never_loses_a_match() -> None:
    # Jumping to the word start "b" of "bc" leaves no "x" after it; the leftmost match still counts.
    assert fuzzy_match("bx", "abx bc") is not None
