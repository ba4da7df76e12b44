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


def test_a_description_matches_by_the_starts_of_its_words() -> None:
    from piwork.gui.palette.fuzzy import words_match

    detail = "Providers, default model, compaction, trust"
    assert words_match("default mod", detail) and words_match("compact", detail)
    assert not words_match("demo", detail)  # d-e from "default" and m-o from "model" are no word of it


def test_the_palette_lists_what_cannot_be_used_after_what_can(qtbot: object) -> None:
    from piwork.gui.palette.palette_model import PaletteItem, PaletteModel

    model = PaletteModel()
    model.items = [
        PaletteItem("model", "openai/gpt-settings-9", "GPT (cannot answer: no API key)", usable=False),
        PaletteItem("action", "Settings…", "Providers, default model, compaction, trust"),
        PaletteItem("action", "Session Tree", "Branch from an earlier point"),
    ]
    model.set_query("settings")
    assert [model.item_at(r).title for r in range(model.shown_rows())] == [  # type: ignore[union-attr]
        "Settings…",
        "openai/gpt-settings-9",
    ]
    model.set_query("demo")
    assert model.shown_rows() == 0  # no longer found letter by letter in a description
