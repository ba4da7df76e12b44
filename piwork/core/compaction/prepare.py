"""Preparing a compaction: which messages get summarized, which entry is kept first, file lists.

``prepare_compaction`` is pure: it takes the root→leaf path entries (plain dicts) and settings and
returns ``None`` when there is nothing to compact (the path already ends with a compaction, or no
message lies before the cut).

Repeated compactions start at the previous compaction's kept boundary, so messages it kept are
summarized again while its summary is passed along as ``previous_summary``. Everything works on
the projection of the path (context edits applied, system messages as prompt state).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from piwork.core.compaction.cut_point import ProjectedEntries, find_projected_cut_point
from piwork.core.compaction.file_ops import FileLists, FileOps, compute_file_lists, extract_file_ops
from piwork.core.compaction.settings import CompactionSettings
from piwork.core.compaction.tokens import estimate_projected_context_tokens
from piwork.core.jscompat import UNDEFINED, js_truthy
from piwork.core.session.context import project_entries, select_context
from piwork.core.session.jsvalues import js_get

Entry = Any


@dataclass(frozen=True)
class CompactionPreparation:
    """What a compaction will summarize; ``messages_to_summarize`` end where the kept part (or the
    split turn's prefix) begins."""

    first_kept_entry_id: str
    messages_to_summarize: list[dict[str, Any]]
    turn_prefix_messages: list[dict[str, Any]]
    is_split_turn: bool
    tokens_before: float
    previous_summary: str | None
    file_ops: FileOps
    settings: CompactionSettings

    @property
    def file_lists(self) -> FileLists:
        return compute_file_lists(self.file_ops)

    def to_json(self) -> dict[str, Any]:
        return {
            "firstKeptEntryId": self.first_kept_entry_id,
            "messagesToSummarize": self.messages_to_summarize,
            "turnPrefixMessages": self.turn_prefix_messages,
            "isSplitTurn": self.is_split_turn,
            "tokensBefore": self.tokens_before,
            "previousSummary": self.previous_summary,
            "fileOps": self.file_ops.to_json(),
            "fileLists": self.file_lists.to_details(),
            "settings": self.settings.to_json(),
        }


def _is_compaction(entry: Entry) -> bool:
    return bool(js_get(entry, "type") == "compaction")


def _summary_messages(projected: ProjectedEntries, start: int, end: int) -> list[dict[str, Any]]:
    """The projected messages of every non-compaction entry in ``[start, end)``, system messages
    left out (they are prompt state, which the compaction entry carries on)."""
    out: list[dict[str, Any]] = []
    for i in range(start, end):
        if _is_compaction(projected.entries[i]):
            continue
        out.extend(m for m in projected.messages(i) if js_get(m, "role") != "system")
    return out


def _retained_tail(compaction: Entry) -> list[dict[str, Any]]:
    tail = js_get(compaction, "retainedTail")
    return [m for m in tail if isinstance(m, dict)] if isinstance(tail, list) else []


def prepare_compaction(
    path_entries: Sequence[Entry], settings: CompactionSettings, *, strict_pi: bool
) -> CompactionPreparation | None:
    """Plan a compaction of ``path_entries`` (root first), or ``None`` when there is nothing to do.

    Works on the projection (the context entries after their context edits): what the model no
    longer sees is neither summarized nor kept, and counts nothing. With ``strict_pi=False`` (the
    engine) the cut uses piwork's correction (see ``cut_point``), and a previous compaction that kept
    its history as ``retainedTail`` has those messages summarized again so they are not lost.
    """
    if path_entries and _is_compaction(path_entries[-1]):
        return None
    selection = select_context(path_entries, honour_retained_tail=not strict_pi)
    projection = project_entries(selection.entries)
    entries = [item.entry for item in projection]
    projected = ProjectedEntries(entries, [item.messages for item in projection])
    previous_index = next(
        (i for i, item in enumerate(projection) if _is_compaction(item.entry) and item.messages), -1
    )
    previous: Entry = entries[previous_index] if previous_index >= 0 else None
    previous_summary: str | None = None
    boundary_start = 0
    carried: list[dict[str, Any]] = []
    if previous is not None:
        summary = js_get(previous, "summary")
        previous_summary = summary if isinstance(summary, str) else None
        boundary_start = previous_index + 1
        carried = [m for m in selection.retained if isinstance(m, dict)]

    context_messages = [(js_get(item.entry, "id"), item.messages) for item in projection]
    if carried:
        context_messages.insert(1, (None, carried))
    path_kinds = [(js_get(e, "id"), js_get(e, "type")) for e in path_entries]
    tokens_before = estimate_projected_context_tokens(context_messages, path_kinds).tokens
    cut = find_projected_cut_point(
        projected, boundary_start, len(entries), settings.keep_recent_tokens, strict_pi=strict_pi
    )
    first_kept_entry = (
        entries[cut.first_kept_entry_index] if cut.first_kept_entry_index < len(entries) else None
    )
    first_kept_entry_id = js_get(first_kept_entry, "id") if first_kept_entry is not None else UNDEFINED
    if not js_truthy(first_kept_entry_id):
        return None

    history_end = cut.turn_start_index if cut.is_split_turn else cut.first_kept_entry_index
    to_summarize = carried + _summary_messages(projected, boundary_start, history_end)
    turn_prefix = (
        _summary_messages(projected, cut.turn_start_index, cut.first_kept_entry_index)
        if cut.is_split_turn
        else []
    )
    if not to_summarize and not turn_prefix:
        return None

    file_ops = FileOps()
    if previous is not None and not js_truthy(js_get(previous, "fromHook")):
        file_ops.add_from_details(js_get(previous, "details"))
    extract_file_ops(to_summarize, file_ops)
    extract_file_ops(turn_prefix, file_ops)
    return CompactionPreparation(
        first_kept_entry_id=first_kept_entry_id,
        messages_to_summarize=to_summarize,
        turn_prefix_messages=turn_prefix,
        is_split_turn=cut.is_split_turn,
        tokens_before=tokens_before,
        previous_summary=previous_summary,
        file_ops=file_ops,
        settings=settings,
    )
