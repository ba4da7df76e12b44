"""Where a compaction cuts the path: what is summarized and what is kept verbatim.

Walking back from the newest entry, estimated tokens are added until ``keep_recent_tokens`` is
reached; the cut then lands on a *cut point* (an entry projecting a user, assistant, bash, custom or
summary message — never a tool result, so a kept tool call keeps its results). When the cut lands
inside a turn (on an assistant message), the turn's start is reported so its beginning can be
summarized separately ("split turn").

When the budget is crossed after the last cut point (typically a batch of large tool results),
the cut lands on the last cut point, so the tool call keeps its results and the rest is summarized.

``find_projected_cut_point`` works on a projection (entries after their context edits, see
``session.context.project_entries``), as a compaction does: an entry left out of the context weighs
nothing, and a failed attempt left out at the end of the branch moves the cut past it.

``strict_pi=True`` reproduces the reference exactly (the conformance fixtures use it). The engine
passes ``strict_pi=False`` for one correction: the "does the cut start a turn" test looks at the
first entry at or after the cut that projects messages, so model/thinking changes moved along with
the kept part never fake a split turn.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from piwork.core.compaction.tokens import estimate_tokens
from piwork.core.session.context import entry_to_messages
from piwork.core.session.context_edits import CONTEXT_EDIT
from piwork.core.session.jsvalues import js_get, map_key

_CUT_POINT_ROLES = frozenset(
    {"user", "assistant", "bashExecution", "custom", "branchSummary", "compactionSummary"}
)
_TURN_START_ROLES = _CUT_POINT_ROLES - {"assistant"}


def _is_compaction(entry: Any) -> bool:
    return bool(js_get(entry, "type") == "compaction")


class ProjectedEntries:
    """The entries' projected messages, each computed at most once per cut-point search."""

    def __init__(self, entries: Sequence[Any], messages: Sequence[list[Any]] | None = None) -> None:
        """``messages``, when given, are the entries' projections already made (after edits)."""
        self.entries = entries
        self._messages: dict[int, list[Any]] = {} if messages is None else dict(enumerate(messages))

    def messages(self, i: int) -> list[Any]:
        found = self._messages.get(i)
        if found is None:
            found = self._messages[i] = entry_to_messages(self.entries[i])
        return found

    def has_role(self, i: int, roles: frozenset[str]) -> bool:
        if _is_compaction(self.entries[i]):
            return False
        return any(js_get(m, "role") in roles for m in self.messages(i))

    def is_cut_point(self, i: int) -> bool:
        return self.has_role(i, _CUT_POINT_ROLES)

    def is_turn_start(self, i: int) -> bool:
        return self.has_role(i, _TURN_START_ROLES)

    def tokens(self, i: int) -> int:
        return sum(estimate_tokens(m) for m in self.messages(i))

    def turn_start_before(self, entry_index: int, start_index: int) -> int:
        for i in range(entry_index, start_index - 1, -1):
            if self.is_turn_start(i):
                return i
        return -1


def find_turn_start_index(entries: Sequence[Any], entry_index: int, start_index: int) -> int:
    """Nearest turn start at or before ``entry_index`` (not before ``start_index``), else -1."""
    return ProjectedEntries(entries).turn_start_before(entry_index, start_index)


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
    projected: ProjectedEntries, cut_points: list[int], start: int, end: int, keep: float
) -> tuple[int, bool]:
    """The cut for the budget, and whether the budget was reached at all."""
    accumulated = 0
    for i in range(end - 1, start - 1, -1):
        tokens = projected.tokens(i)
        if tokens == 0:
            continue
        accumulated += tokens
        if accumulated >= keep:
            at_or_after = next((c for c in cut_points if c >= i), None)
            return (cut_points[-1] if at_or_after is None else at_or_after), True
    return cut_points[0], False


def _starts_turn(projected: ProjectedEntries, cut: int, end: int, strict_pi: bool) -> bool:
    if not strict_pi:
        for i in range(cut, min(end, len(projected.entries))):
            if _is_compaction(projected.entries[i]) or projected.messages(i):
                return projected.is_turn_start(i)
    return projected.is_turn_start(cut)


def find_cut_point(
    entries: Sequence[Any],
    start_index: int,
    end_index: int,
    keep_recent_tokens: float,
    *,
    strict_pi: bool,
    projected: ProjectedEntries | None = None,
) -> CutPoint:
    """Cut for keeping about ``keep_recent_tokens`` of ``entries[start_index:end_index]``.

    ``projected`` may carry projections the caller already computed for the same entries.
    """
    projected = ProjectedEntries(entries) if projected is None else projected
    cut_points = [i for i in range(start_index, end_index) if projected.is_cut_point(i)]
    if not cut_points:
        return CutPoint(start_index, -1, False)
    cut, _ = _budget_cut(projected, cut_points, start_index, end_index, keep_recent_tokens)
    return _settle_cut(projected, cut, start_index, end_index, strict_pi)


def _settle_cut(
    projected: ProjectedEntries, cut: int, start_index: int, end_index: int, strict_pi: bool
) -> CutPoint:
    entries = projected.entries
    # Metadata entries just before the cut (model changes, labels...) stay with the kept part.
    while cut > start_index:
        if _is_compaction(entries[cut - 1]) or projected.messages(cut - 1):
            break
        cut -= 1
    if _starts_turn(projected, cut, end_index, strict_pi):
        return CutPoint(cut, -1, False)
    turn_start = projected.turn_start_before(cut, start_index)
    return CutPoint(cut, turn_start, turn_start != -1)


def _is_left_out_attempt_suffix(projected: ProjectedEntries, cut: int, end: int) -> bool:
    """Whether everything after ``cut`` is invisible to the model and holds an assistant message
    left out by a context edit (a failed attempt with its omission edits): then the cut moves past
    the last visible input instead of keeping the attempt."""
    suffix = range(cut + 1, end)
    entries = projected.entries

    def visible_by_itself(i: int) -> bool:
        return js_get(entries[i], "type") != CONTEXT_EDIT and bool(entry_to_messages(entries[i]))

    def left_out(i: int) -> bool:
        return visible_by_itself(i) and not projected.messages(i)

    omitted = {map_key(js_get(entries[i], "id")) for i in suffix if left_out(i)}
    for i in suffix:
        entry = entries[i]
        if (
            js_get(entry, "type") == CONTEXT_EDIT
            and js_get(entry, "replacement") is not None
            and map_key(js_get(entry, "targetId")) not in omitted
        ):
            return False  # a replacement of something else: the suffix is not just an attempt
    has_attempt = any(
        js_get(entries[i], "type") == "message"
        and js_get(js_get(entries[i], "message"), "role") == "assistant"
        and left_out(i)
        for i in suffix
    )
    return has_attempt and all(
        not _is_compaction(entries[i]) and (not visible_by_itself(i) or left_out(i)) for i in suffix
    )


def find_projected_cut_point(
    projected: ProjectedEntries,
    start_index: int,
    end_index: int,
    keep_recent_tokens: float,
    *,
    strict_pi: bool,
) -> CutPoint:
    """``find_cut_point`` over projected context entries (what a compaction cuts)."""
    cut_points = [i for i in range(start_index, end_index) if projected.is_cut_point(i)]
    if not cut_points:
        return CutPoint(start_index, -1, False)
    cut, reached = _budget_cut(projected, cut_points, start_index, end_index, keep_recent_tokens)
    if reached and _is_left_out_attempt_suffix(projected, cut, end_index):
        cut += 1
    return _settle_cut(projected, cut, start_index, end_index, strict_pi)
