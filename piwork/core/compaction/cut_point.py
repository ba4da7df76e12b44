"""Where a compaction cuts the path: what is summarized and what is kept verbatim.

Walking back from the newest entry, estimated tokens are added until ``keep_recent_tokens`` is
reached; the cut then lands on a *cut point* (an entry projecting a user, assistant, bash, custom or
summary message — never a tool result, so a kept tool call keeps its results). When the cut lands
inside a turn (on an assistant message), the turn's start is reported so its beginning can be
summarized separately ("split turn").

``strict_pi=True`` reproduces the reference exactly (the conformance fixtures use it). The engine
passes ``strict_pi=False`` for two corrections:

- when the budget is crossed after the last cut point (typically a batch of large tool results),
  the reference falls back to the *first* cut point and compacts nothing; piwork cuts at the last
  cut point before the crossing instead;
- the "does the cut start a turn" test looks at the first entry at or after the cut that projects
  messages, so model/thinking changes moved along with the kept part never fake a split turn.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from piwork.core.compaction.tokens import estimate_tokens
from piwork.core.session.context import entry_to_messages
from piwork.core.session.jsvalues import js_get

_CUT_POINT_ROLES = frozenset(
    {"user", "assistant", "bashExecution", "custom", "branchSummary", "compactionSummary"}
)
_TURN_START_ROLES = _CUT_POINT_ROLES - {"assistant"}


def _is_compaction(entry: Any) -> bool:
    return bool(js_get(entry, "type") == "compaction")


def _roles(entry: Any) -> list[Any]:
    return [js_get(m, "role") for m in entry_to_messages(entry)]


def is_cut_point_entry(entry: Any) -> bool:
    return not _is_compaction(entry) and any(r in _CUT_POINT_ROLES for r in _roles(entry))


def is_turn_start_entry(entry: Any) -> bool:
    return not _is_compaction(entry) and any(r in _TURN_START_ROLES for r in _roles(entry))


def entry_tokens(entry: Any) -> int:
    """Estimated tokens of an entry's projected messages (a compaction counts its summary)."""
    return sum(estimate_tokens(m) for m in entry_to_messages(entry))


def find_turn_start_index(entries: Sequence[Any], entry_index: int, start_index: int) -> int:
    """Nearest turn start at or before ``entry_index`` (not before ``start_index``), else -1."""
    for i in range(entry_index, start_index - 1, -1):
        if is_turn_start_entry(entries[i]):
            return i
    return -1


@dataclass(frozen=True)
class CutPoint:
    first_kept_entry_index: int
    turn_start_index: int
    is_split_turn: bool

    def to_json(self) -> dict[str, Any]:
        return {
            "firstKeptEntryIndex": self.first_kept_entry_index,
            "turnStartIndex": self.turn_start_index,
            "isSplitTurn": self.is_split_turn,
        }


def _budget_cut(
    entries: Sequence[Any], cut_points: list[int], start: int, end: int, keep: float, strict_pi: bool
) -> int:
    accumulated = 0
    for i in range(end - 1, start - 1, -1):
        tokens = entry_tokens(entries[i])
        if tokens == 0:
            continue
        accumulated += tokens
        if accumulated >= keep:
            at_or_after = next((c for c in cut_points if c >= i), None)
            if at_or_after is not None:
                return at_or_after
            if strict_pi:
                return cut_points[0]
            return max(c for c in cut_points if c < i)
    return cut_points[0]


def _starts_turn(entries: Sequence[Any], cut: int, end: int, strict_pi: bool) -> bool:
    if strict_pi:
        return is_turn_start_entry(entries[cut])
    for i in range(cut, max(end, cut + 1)):
        if i >= len(entries):
            break
        if _is_compaction(entries[i]) or entry_to_messages(entries[i]):
            return is_turn_start_entry(entries[i])
    return is_turn_start_entry(entries[cut])


def find_cut_point(
    entries: Sequence[Any],
    start_index: int,
    end_index: int,
    keep_recent_tokens: float,
    *,
    strict_pi: bool = True,
) -> CutPoint:
    """Cut for keeping about ``keep_recent_tokens`` of ``entries[start_index:end_index]``."""
    cut_points = [i for i in range(start_index, end_index) if is_cut_point_entry(entries[i])]
    if not cut_points:
        return CutPoint(start_index, -1, False)
    cut = _budget_cut(entries, cut_points, start_index, end_index, keep_recent_tokens, strict_pi)
    # Metadata entries just before the cut (model changes, labels...) stay with the kept part.
    while cut > start_index:
        previous = entries[cut - 1]
        if _is_compaction(previous) or entry_to_messages(previous):
            break
        cut -= 1
    if _starts_turn(entries, cut, end_index, strict_pi):
        return CutPoint(cut, -1, False)
    turn_start = find_turn_start_index(entries, cut, start_index)
    return CutPoint(cut, turn_start, turn_start != -1)
