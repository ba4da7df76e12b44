"""Fuzzy matching for the palette: a title matches by the query's characters in order, scored so that whole
words, word starts and runs of consecutive characters rank first ("nses" finds "New Session"); a description
matches only by the starts of its words ("demo" is not found in "default model")."""

from __future__ import annotations

WORD_START = 8
CONSECUTIVE = 5
SUBSTRING = 20
PREFIX = 10


def _is_word_start(text: str, index: int) -> bool:
    return (
        index == 0 or not text[index - 1].isalnum() or (text[index].isupper() and text[index - 1].islower())
    )


def words_match(query: str, text: str) -> bool:
    """Every word of ``query`` starts a word of ``text`` (case-insensitive): how a description matches."""
    words = [w for w in "".join(c if c.isalnum() else " " for c in text.lower()).split()]
    return all(any(word.startswith(part) for word in words) for part in query.lower().split())


def _greedy(query: str, text: str, lowered: str, jump: bool) -> list[int] | None:
    """Positions of ``query``'s characters in ``text``, leftmost, or preferring word starts (``jump``)."""
    positions: list[int] = []
    at = 0
    for char in query:
        found = lowered.find(char, at)
        if found < 0:
            return None
        # A later occurrence at a word start is worth the jump (e.g. "ns" → "New Session").
        probe = found if jump else -1
        while probe >= 0 and not _is_word_start(text, probe):
            probe = lowered.find(char, probe + 1)
        if probe >= 0 and probe - found < 24:
            found = probe
        positions.append(found)
        at = found + 1
    return positions


def fuzzy_match(query: str, text: str) -> tuple[int, list[int]] | None:
    """``(score, matched positions)`` when every non-space character of ``query`` occurs in ``text``
    in order (case-insensitive); ``None`` otherwise. Higher scores are better matches."""
    wanted = "".join(query.lower().split())
    if not wanted:
        return 0, []
    lowered = text.lower()
    phrase = " ".join(query.lower().split())
    where = lowered.find(phrase)
    positions = _greedy(wanted, text, lowered, True) or _greedy(wanted, text, lowered, False)
    if positions is None:
        return None
    score = 0
    previous = -2
    for index in positions:
        if _is_word_start(text, index):
            score += WORD_START
        if index == previous + 1:
            score += CONSECUTIVE
        previous = index
    score -= positions[-1] - positions[0] - len(positions) + 1  # gaps inside the match
    if where >= 0:
        score += SUBSTRING + (PREFIX if where == 0 else 0)
        positions = list(range(where, where + len(phrase)))
    return score - len(text) // 16, positions
