"""What a session has used: context occupancy against the model's window, and billed tokens and cost."""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from piwork.core.collector import paused_gc
from piwork.core.compaction.tokens import estimate_context_tokens, estimate_tokens
from piwork.core.llm.types import Model
from piwork.core.session.records import EntryRecord
from piwork.core.session.system_messages import current_system_message
from piwork.core.session.tree import SessionTree
from piwork.core.usage import COST_KEYS, USAGE_KEYS, UsageTotals, calculate_context_tokens

BATCH = 4096  # entries whose bodies are held at once while counting


@dataclass(frozen=True)
class ContextUsage:
    """``tokens`` is None right after a compaction, until a newer reply reports usage (shown as "—")."""

    tokens: float | None
    context_window: int
    percent: float | None


@dataclass
class SessionStats:
    user_messages: int = 0
    assistant_messages: int = 0
    tool_calls: int = 0
    tool_results: int = 0
    tokens: dict[str, float] = field(default_factory=lambda: dict.fromkeys(USAGE_KEYS, 0.0))
    cost: dict[str, float] = field(default_factory=lambda: dict.fromkeys(COST_KEYS, 0.0))

    @property
    def total_tokens(self) -> float:
        return sum(self.tokens.values())

    def add_usage(self, usage: Any) -> None:
        UsageTotals(self.tokens, self.cost).add(usage)


def context_usage(
    model: Model | None, messages: Sequence[Mapping[str, Any]], branch: Sequence[Mapping[str, Any] | None]
) -> ContextUsage | None:
    """Occupancy of the next request (usage of the last valid reply plus estimates after it).

    ``branch`` is the active path's entries from its latest compaction (or, without one, from its
    latest context edit) to the leaf. After a compaction the figure is unknown until a reply newer
    than the compaction, and still in the context, reports non-zero usage. Usage recorded before the
    latest compaction or context edit no longer measures the context: then every message is
    estimated instead.
    """
    if model is None or model.context_window <= 0:
        return None
    window = model.context_window
    kinds = [e.get("type") if isinstance(e, Mapping) else None for e in branch]
    last_compaction = max((i for i, kind in enumerate(kinds) if kind == "compaction"), default=None)
    if last_compaction is not None:
        left_out = _left_out_targets(branch[last_compaction + 1 :])
        if not any(
            _valid_reply(entry) and entry is not None and entry.get("id") not in left_out
            for entry in branch[last_compaction + 1 :]
        ):
            return ContextUsage(None, window, None)
    tokens = projected_tokens(messages, branch)
    return ContextUsage(tokens, window, tokens / window * 100)


def projected_tokens(
    messages: Sequence[Mapping[str, Any]], branch: Sequence[Mapping[str, Any] | None]
) -> float:
    """Tokens of ``messages`` (the context), trusting the last reply's usage only when it came after the
    branch's latest compaction and context edit (``branch`` as for :func:`context_usage`)."""
    kinds = [e.get("type") if isinstance(e, Mapping) else None for e in branch]
    last_change = max(
        (i for i, kind in enumerate(kinds) if kind in ("compaction", "context_edit")), default=None
    )
    if last_change is None or any(_valid_reply(entry) for entry in branch[last_change + 1 :]):
        return estimate_context_tokens(messages).tokens
    return estimate_without_usage(messages)


def estimate_without_usage(messages: Sequence[Mapping[str, Any]]) -> int:
    """Every message estimated, the recorded system prompt once (all its messages replayed)."""
    system = current_system_message(messages)
    tokens = estimate_tokens(system) if system is not None else 0
    return tokens + sum(estimate_tokens(m) for m in messages if m.get("role") != "system")


def _left_out_targets(entries: Sequence[Mapping[str, Any] | None]) -> set[Any]:
    latest: dict[Any, Any] = {}
    for entry in entries:
        if isinstance(entry, Mapping) and entry.get("type") == "context_edit":
            latest[entry.get("targetId")] = entry.get("replacement")
    return {target for target, replacement in latest.items() if replacement is None}


def _valid_reply(entry: Mapping[str, Any] | None) -> bool:
    if not isinstance(entry, Mapping):
        return False
    message = entry.get("message") if entry.get("type") == "message" else None
    if not isinstance(message, Mapping) or message.get("role") != "assistant":
        return False
    usage = message.get("usage")
    if message.get("stopReason") in ("aborted", "error") or not isinstance(usage, Mapping):
        return False
    return calculate_context_tokens(usage) > 0


def session_stats(entries: Iterable[Mapping[str, Any] | None]) -> SessionStats:
    """Counts and billed usage over every entry of the file (all branches), summaries included."""
    stats = SessionStats()
    add_entries(stats, entries)
    return stats


class StatsTracker:
    """``session_stats`` of a growing session, reading only the entries appended since the last call.

    The tree's record list is append-only; a reload from disk replaces the list, which starts over. Safe to
    call from any thread (the window counts in workers): one count at a time.
    """

    def __init__(self, tree: SessionTree) -> None:
        self._tree = tree
        self._records: list[EntryRecord] | None = None
        self._counted = 0
        self._stats = SessionStats()
        self._lock = threading.Lock()

    def current(self) -> SessionStats:
        with self._lock:
            return self._current()

    def _current(self) -> SessionStats:
        records = self._tree.records
        if records is not self._records or len(records) < self._counted:
            self._records, self._counted, self._stats = records, 0, SessionStats()
        fresh = [r for r in records[self._counted :] if r.type != "session"]
        self._counted = len(records)
        with paused_gc():  # parsed bodies hold no cycles; collection passes would cost more than parsing
            for start in range(0, len(fresh), BATCH):  # read in file windows, a batch of bodies at a time
                add_entries(self._stats, self._tree.bodies(fresh[start : start + BATCH]))
        stats = self._stats
        return replace(stats, tokens=dict(stats.tokens), cost=dict(stats.cost))


def add_entries(stats: SessionStats, entries: Iterable[Mapping[str, Any] | None]) -> None:
    """Count ``entries`` into ``stats`` (an entry whose line could not be read back is ``None``: skipped)."""
    for entry in entries:
        if not isinstance(entry, Mapping):
            continue
        kind = entry.get("type")
        if kind in ("compaction", "branch_summary", "usage"):
            # a ``usage`` entry is billed traffic outside a reply (e.g. prompt-cache warming)
            stats.add_usage(entry.get("usage"))
            continue
        message = entry.get("message") if kind == "message" else None
        if not isinstance(message, Mapping):
            continue
        role = message.get("role")
        if role == "user":
            stats.user_messages += 1
        elif role == "toolResult":
            stats.tool_results += 1
            stats.add_usage(message.get("usage"))
        elif role == "assistant":
            stats.assistant_messages += 1
            content = message.get("content")
            if isinstance(content, list):
                stats.tool_calls += sum(
                    1 for b in content if isinstance(b, Mapping) and b.get("type") == "toolCall"
                )
            stats.add_usage(message.get("usage"))
