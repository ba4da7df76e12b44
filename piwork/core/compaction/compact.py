"""Compacting a session: the engine entry points the agent calls.

``compact_session`` plans the compaction on the tree's active path, asks the ``before_compact``
hooks (which may cancel or supply the summary), generates the summary, appends the ``compaction``
entry and reports what the context looks like afterwards. It raises on failure and writes nothing
then. ``run_compaction`` wraps it for the agent's checkpoints: it never raises (except for task
cancellation) and returns a ``CompactionOutcome`` carrying what the ``compaction_end`` event needs.

Cancelling: set the ``cancel`` event (the GUI's cancel button), or cancel the task.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import piwork.core.compaction.prompts as prompts
from piwork.core.compaction.cancel import Cancelled, until_cancelled
from piwork.core.compaction.file_ops import compute_file_lists, format_file_lists
from piwork.core.compaction.hooks import (
    AfterCompactEvent,
    BeforeCompactEvent,
    CompactFailedEvent,
    CompactionHooks,
    CompactionReason,
)
from piwork.core.compaction.prepare import CompactionPreparation, prepare_compaction
from piwork.core.compaction.settings import CompactionSettings
from piwork.core.compaction.summarize import (
    Summarizer,
    SummaryCancelled,
    history_prompt,
    request_summary,
    turn_prefix_prompt,
)
from piwork.core.compaction.tokens import estimate_messages_tokens
from piwork.core.errors import PiworkError
from piwork.core.session.store import append_written
from piwork.core.session.tree import SessionTree
from piwork.core.usage import combine_usage

ALREADY_COMPACTED = "Already compacted"
NOTHING_TO_COMPACT = "Nothing to compact (session too small)"
COMPACTION_CANCELLED = "Compaction cancelled"
LEAF_MOVED = (
    "the conversation moved to another point of the tree while the summary was written; nothing was saved"
)


class CompactionError(PiworkError):
    """Compaction did not happen; ``aborted`` tells a cancellation from a failure."""

    def __init__(self, message: str, *, aborted: bool = False) -> None:
        super().__init__(message)
        self.aborted = aborted


@dataclass(frozen=True)
class GeneratedCompaction:
    summary: str
    first_kept_entry_id: str
    tokens_before: float
    usage: dict[str, Any] | None
    details: dict[str, Any] | None


@dataclass(frozen=True)
class CompactionResult:
    """A compaction that was written: the entry's fields plus the estimated size afterwards."""

    entry_id: str
    summary: str
    first_kept_entry_id: str
    tokens_before: float
    estimated_tokens_after: int
    usage: dict[str, Any] | None
    details: dict[str, Any] | None
    from_hook: bool

    def to_json(self) -> dict[str, Any]:
        """The ``result`` of a ``compaction_end`` event (Pi's names)."""
        out: dict[str, Any] = {
            "summary": self.summary,
            "firstKeptEntryId": self.first_kept_entry_id,
            "tokensBefore": self.tokens_before,
            "estimatedTokensAfter": self.estimated_tokens_after,
        }
        if self.usage is not None:
            out["usage"] = self.usage
        if self.details is not None:
            out["details"] = self.details
        return out


async def generate_compaction(
    preparation: CompactionPreparation,
    summarizer: Summarizer,
    custom_instructions: str | None = None,
) -> GeneratedCompaction:
    """Ask the model for the summary of a prepared compaction (two requests for a split turn).

    In a split turn with nothing new before the turn, the previous summary stands for the history.
    """

    async def history() -> tuple[str, dict[str, Any] | None]:
        prompt = await asyncio.to_thread(
            history_prompt,
            preparation.messages_to_summarize,
            custom_instructions,
            preparation.previous_summary,
        )
        reply = await request_summary(
            summarizer,
            prompt,
            label="Summarization",
            source="compaction",
            use_reasoning=True,
        )
        return reply.text, reply.usage

    if preparation.is_split_turn and preparation.turn_prefix_messages:
        history_text, usage = prompts.NO_PRIOR_HISTORY, None
        if preparation.messages_to_summarize:
            history_text, usage = await history()
        elif preparation.previous_summary:
            history_text = preparation.previous_summary  # nothing new before the turn: keep the summary
        prefix_prompt = await asyncio.to_thread(
            turn_prefix_prompt, preparation.turn_prefix_messages, custom_instructions
        )
        prefix = await request_summary(
            summarizer,
            prefix_prompt,
            label="Turn prefix summarization",
            source="compaction",
            use_reasoning=True,
        )
        summary = history_text + prompts.SPLIT_TURN_SEPARATOR + prefix.text
        usage = combine_usage(usage, prefix.usage)
    else:
        summary, usage = await history()
    lists = compute_file_lists(preparation.file_ops)
    return GeneratedCompaction(
        summary=summary + format_file_lists(lists),
        first_kept_entry_id=preparation.first_kept_entry_id,
        tokens_before=preparation.tokens_before,
        usage=usage,
        details=lists.to_details(),
    )


def _from_hook(supplied: Mapping[str, Any]) -> GeneratedCompaction:
    summary = supplied.get("summary")
    first_kept = supplied.get("firstKeptEntryId")
    if not isinstance(summary, str) or not isinstance(first_kept, str):
        raise CompactionError(
            "The before_compact hook supplied a compaction without summary or firstKeptEntryId"
        )
    tokens_before = supplied.get("tokensBefore")
    usage = supplied.get("usage")
    details = supplied.get("details")
    return GeneratedCompaction(
        summary=summary,
        first_kept_entry_id=first_kept,
        tokens_before=tokens_before if isinstance(tokens_before, int | float) else 0,
        usage=dict(usage) if isinstance(usage, Mapping) else None,
        details=dict(details) if isinstance(details, Mapping) else None,
    )


def _whole_tokens(value: float) -> int:
    return int(value) if math.isfinite(value) else 0


def path_entries(tree: SessionTree) -> list[dict[str, Any]]:
    """Entry bodies of the tree's active path, root first."""
    return [tree.body(record) for record in tree.path()]


Planned = tuple[list[dict[str, Any]], CompactionPreparation | None]


def read_and_plan(tree: SessionTree, settings: CompactionSettings) -> Planned:
    """The active path's entries and ``prepare_compaction`` on them, with piwork's corrections."""
    entries = path_entries(tree)
    return entries, prepare_compaction(entries, settings, strict_pi=False)


def plan_compaction(tree: SessionTree, settings: CompactionSettings) -> CompactionPreparation | None:
    """What a compaction of the active path would summarize, or ``None`` when there is nothing to do."""
    return read_and_plan(tree, settings)[1]


async def compact_session(
    tree: SessionTree,
    summarizer: Summarizer,
    settings: CompactionSettings,
    *,
    reason: CompactionReason = "manual",
    custom_instructions: str | None = None,
    will_retry: bool = False,
    hooks: CompactionHooks | None = None,
    cancel: asyncio.Event | None = None,
    planned: Planned | None = None,
) -> CompactionResult:
    """Compact the active path and append the ``compaction`` entry; raises when nothing is written.

    Errors: ``CompactionError`` ("Already compacted", "Nothing to compact (session too small)",
    "Compaction cancelled" with ``aborted=True``, or the leaf moved while the summary was being
    written), ``SummaryFailed`` (the model's reply was unusable). ``planned`` is the result of
    ``read_and_plan`` when the caller already has it.
    """
    leaf_before = tree.leaf_id
    # Reading and planning a long path takes a while: keep it off the event loop.
    entries, preparation = (
        planned if planned is not None else await asyncio.to_thread(read_and_plan, tree, settings)
    )
    if preparation is None:
        last_is_compaction = bool(entries) and entries[-1].get("type") == "compaction"
        raise CompactionError(ALREADY_COMPACTED if last_is_compaction else NOTHING_TO_COMPACT)
    signal = cancel if cancel is not None else asyncio.Event()
    generated: GeneratedCompaction | None = None
    from_hook = False
    try:
        if hooks is not None:
            event = BeforeCompactEvent(preparation, entries, custom_instructions, reason, will_retry, signal)
            answer = await until_cancelled(hooks.before_compact(event), cancel)
            if answer and answer.get("cancel"):
                raise CompactionError(COMPACTION_CANCELLED, aborted=True)
            supplied = answer.get("compaction") if answer else None
            if isinstance(supplied, Mapping):
                generated, from_hook = _from_hook(supplied), True
        if generated is None:
            generated = await until_cancelled(
                generate_compaction(preparation, summarizer, custom_instructions), cancel
            )
    except (Cancelled, SummaryCancelled) as error:
        signal.set()
        raise CompactionError(COMPACTION_CANCELLED, aborted=True) from error
    except asyncio.CancelledError:
        signal.set()
        raise
    if cancel is not None and cancel.is_set():
        raise CompactionError(COMPACTION_CANCELLED, aborted=True)
    if tree.leaf_id != leaf_before:
        raise CompactionError(LEAF_MOVED)

    entry_id = await append_written(
        tree,
        lambda: tree.append_compaction(
            generated.summary,
            generated.first_kept_entry_id,
            _whole_tokens(generated.tokens_before),
            generated.details,
            from_hook,
            generated.usage,
        ),
    )
    messages = (await asyncio.to_thread(tree.build_context)).messages
    result = CompactionResult(
        entry_id=entry_id,
        summary=generated.summary,
        first_kept_entry_id=generated.first_kept_entry_id,
        tokens_before=generated.tokens_before,
        estimated_tokens_after=estimate_messages_tokens(messages),
        usage=generated.usage,
        details=generated.details,
        from_hook=from_hook,
    )
    if hooks is not None:
        entry = tree.entry(entry_id)
        await hooks.after_compact(AfterCompactEvent(entry, from_hook, reason, will_retry))
    return result


_ERROR_PREFIX: dict[str, str] = {
    "manual": "Compaction failed: ",
    "threshold": "Auto-compaction failed: ",
    "overflow": "Context overflow recovery failed: ",
    "governor": "Context governor compaction failed: ",
}


def failure_message(reason: CompactionReason, error: BaseException) -> str:
    """What users read when a compaction started for ``reason`` failed with ``error``."""
    return _ERROR_PREFIX[reason] + str(error)


@dataclass(frozen=True)
class CompactionOutcome:
    """How one compaction attempt ended; ``started`` is False when there was nothing to compact."""

    reason: CompactionReason
    started: bool
    result: CompactionResult | None = None
    aborted: bool = False
    will_retry: bool = False
    error_message: str | None = None

    @property
    def succeeded(self) -> bool:
        return self.result is not None


async def run_compaction(
    tree: SessionTree,
    summarizer: Summarizer,
    settings: CompactionSettings,
    *,
    reason: CompactionReason,
    will_retry: bool = False,
    custom_instructions: str | None = None,
    hooks: CompactionHooks | None = None,
    cancel: asyncio.Event | None = None,
    on_start: Callable[[], None] | None = None,
) -> CompactionOutcome:
    """One compaction as a checkpoint runs it; failures become the outcome's ``error_message``.

    Manual compactions always start (``on_start`` first) and report "Already compacted" and
    "Nothing to compact" as failures; automatic ones with nothing to compact return an outcome
    with ``started=False`` without calling ``on_start``. The ``compact_failed`` hooks hear about
    every failure or cancellation of a started compaction.
    """
    planned = None
    if reason != "manual":
        planned = await asyncio.to_thread(read_and_plan, tree, settings)
        if planned[1] is None:
            return CompactionOutcome(reason, started=False)
    if on_start is not None:
        on_start()
    try:
        result = await compact_session(
            tree,
            summarizer,
            settings,
            reason=reason,
            custom_instructions=custom_instructions,
            will_retry=will_retry,
            hooks=hooks,
            cancel=cancel,
            planned=planned,
        )
    except PiworkError as error:
        aborted = isinstance(error, CompactionError) and error.aborted
        message = None if aborted else failure_message(reason, error)
        if hooks is not None:
            await hooks.compact_failed(CompactFailedEvent(reason, message, aborted, False, False))
        return CompactionOutcome(reason, started=True, aborted=aborted, error_message=message)
    return CompactionOutcome(reason, started=True, result=result, will_retry=will_retry)
