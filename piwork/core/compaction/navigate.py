"""Moving the session's leaf to another entry, optionally summarizing the branch left behind.

``navigate_tree`` follows the reference's tree navigation: the entries from the old leaf back to
the common ancestor with the target are collected; the ``before_tree`` hooks may cancel, supply the
summary or change the instructions and label; a summary (if wanted) is generated; the new leaf is
the target's parent for a user or custom message (whose text goes back to the editor) and the
target itself otherwise; a ``branch_summary`` entry is attached there when a summary exists.

piwork deviation: when the abandoned branch holds nothing to summarize (only tool results or
bookkeeping entries) no "No content to summarize" entry is written; the result's ``notice`` says
why (``strict_pi=True`` writes it, as the reference does).

Refusing to navigate while the agent streams is the agent's job. Cancelling: set ``cancel`` or
cancel the task; the result then has ``cancelled`` and ``aborted`` set and nothing is written.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

import piwork.core.compaction.prompts as prompts
from piwork.core.compaction.branch_entries import BranchEntries, prepare_branch_entries
from piwork.core.compaction.cancel import Cancelled, until_cancelled
from piwork.core.compaction.file_ops import compute_file_lists, format_file_lists
from piwork.core.compaction.hooks import AfterTreeEvent, BeforeTreeEvent, CompactionHooks, TreePreparation
from piwork.core.compaction.settings import (
    BRANCH_FALLBACK_CONTEXT_WINDOW,
    BranchSummarySettings,
)
from piwork.core.compaction.summarize import Summarizer, SummaryCancelled, branch_prompt, request_summary
from piwork.core.errors import PiworkError
from piwork.core.messages import message_text
from piwork.core.session.jsvalues import js_get, js_same, map_key
from piwork.core.session.store import append_written
from piwork.core.session.tree import EntryNotFound, SessionTree

NO_MODEL = "No model available for summarization"
LEAF_MOVED = "The session changed while the branch summary was being written; nothing was saved. Try again."
NOTHING_TO_SUMMARIZE_NOTICE = (
    "The branch you left holds no conversation to summarize (only tool output or bookkeeping), "
    "so no summary was added."
)


class NavigationError(PiworkError):
    """Navigation was refused before anything changed."""


@dataclass(frozen=True)
class BranchSummary:
    summary: str
    usage: dict[str, Any] | None
    details: dict[str, Any] | None


@dataclass(frozen=True)
class BranchSummaryProgress:
    """``collected``: entries found; ``summarizing``: the request is on its way; ``written``: done."""

    stage: Literal["collected", "summarizing", "written"]
    entry_count: int


@dataclass(frozen=True)
class NavigationResult:
    cancelled: bool
    aborted: bool = False
    editor_text: str | None = None
    summary_entry: dict[str, Any] | None = None
    new_leaf_id: str | None = None
    old_leaf_id: str | None = None
    from_extension: bool | None = None
    notice: str | None = None


def branch_summary_budget(context_window: int, settings: BranchSummarySettings) -> int:
    """Tokens of the abandoned branch the summarizer is given (the newest messages that fit)."""
    return (context_window or BRANCH_FALLBACK_CONTEXT_WINDOW) - settings.reserve_tokens


async def generate_branch_summary(
    entries: list[Any],
    summarizer: Summarizer,
    *,
    settings: BranchSummarySettings,
    custom_instructions: str | None = None,
    replace_instructions: bool = False,
) -> BranchSummary | None:
    """Summary of abandoned ``entries`` (oldest first); ``None`` when they hold no message."""
    budget = branch_summary_budget(summarizer.model.context_window, settings)
    prepared = await asyncio.to_thread(prepare_branch_entries, entries, budget)
    if not prepared.messages:
        return None
    prompt = await asyncio.to_thread(
        branch_prompt, prepared.messages, custom_instructions, replace_instructions
    )
    reply = await request_summary(
        summarizer,
        prompt,
        label="Branch summarization",
        source="branchSummary",
        use_reasoning=True,
    )
    lists = compute_file_lists(prepared.file_ops)
    text = prompts.BRANCH_SUMMARY_PREAMBLE + reply.text + format_file_lists(lists)
    return BranchSummary(text, reply.usage, lists.to_details())


def collect_from_tree(tree: SessionTree, old_leaf_id: str | None, target_id: str) -> BranchEntries:
    """``collect_branch_entries`` on a tree: paths from the index, bodies only for what is collected."""
    if not old_leaf_id:
        return BranchEntries([], None)
    old_path = tree.path(old_leaf_id)
    on_old_path = {map_key(record.id) for record in old_path}
    common: Any = None
    for record in reversed(tree.path(target_id)):
        if map_key(record.id) in on_old_path:
            common = record.id
            break
    abandoned = []
    for record in reversed(old_path):
        if common is not None and js_same(record.id, common):
            break
        abandoned.append(record)
    abandoned.reverse()
    return BranchEntries([tree.body(record) for record in abandoned], common)


def _editor_text(entry: Any) -> str | None:
    kind = js_get(entry, "type")
    if kind == "message" and js_get(js_get(entry, "message"), "role") == "user":
        return message_text(entry["message"])
    if kind == "custom_message":
        return message_text({"content": entry.get("content")})
    return None


def _hook_summary(answer: Mapping[str, Any] | None) -> BranchSummary | None:
    supplied = answer.get("summary") if answer else None
    if not isinstance(supplied, Mapping) or not isinstance(supplied.get("summary"), str):
        return None
    usage, details = supplied.get("usage"), supplied.get("details")
    return BranchSummary(
        supplied["summary"],
        dict(usage) if isinstance(usage, Mapping) else None,
        dict(details) if isinstance(details, Mapping) else None,
    )


async def navigate_tree(
    tree: SessionTree,
    target_id: str,
    *,
    summarize: bool = False,
    custom_instructions: str | None = None,
    replace_instructions: bool | None = None,
    label: str | None = None,
    summarizer: Summarizer | None = None,
    settings: BranchSummarySettings | None = None,
    hooks: CompactionHooks | None = None,
    cancel: asyncio.Event | None = None,
    on_progress: Callable[[BranchSummaryProgress], None] | None = None,
    strict_pi: bool,
) -> NavigationResult:
    """Move the leaf to ``target_id`` (see the module docstring); raises ``EntryNotFound``,
    ``NavigationError`` (no model; the leaf moved while summarizing) or ``SummaryFailed`` before
    anything is written."""
    settings = settings or BranchSummarySettings()
    old_leaf_id = tree.leaf_id
    if target_id == old_leaf_id:
        return NavigationResult(cancelled=False, new_leaf_id=old_leaf_id, old_leaf_id=old_leaf_id)
    if summarize and summarizer is None:
        raise NavigationError(NO_MODEL)
    target = tree.entry(target_id)
    if target is None:
        raise EntryNotFound(target_id)
    collected = await asyncio.to_thread(collect_from_tree, tree, old_leaf_id, target_id)  # off the event loop
    if on_progress is not None:
        on_progress(BranchSummaryProgress("collected", len(collected.entries)))

    signal = cancel if cancel is not None else asyncio.Event()
    summary: BranchSummary | None = None
    from_extension = False
    try:
        if hooks is not None and hooks.has_before_tree:
            preparation = TreePreparation(
                target_id,
                old_leaf_id,
                collected.common_ancestor_id,
                collected.entries,
                summarize,
                custom_instructions,
                replace_instructions,
                label,
            )
            answer = await until_cancelled(hooks.before_tree(BeforeTreeEvent(preparation, signal)), cancel)
            if answer and answer.get("cancel"):
                return NavigationResult(cancelled=True, old_leaf_id=old_leaf_id, new_leaf_id=old_leaf_id)
            if summarize:
                summary = _hook_summary(answer)
                from_extension = summary is not None
            if answer:
                custom_instructions = answer.get("customInstructions", custom_instructions)
                replace_instructions = answer.get("replaceInstructions", replace_instructions)
                label = answer.get("label", label)
        notice = None
        if summarize and collected.entries and summary is None:
            assert summarizer is not None
            if on_progress is not None:
                on_progress(BranchSummaryProgress("summarizing", len(collected.entries)))
            step = generate_branch_summary(
                collected.entries,
                summarizer,
                settings=settings,
                custom_instructions=custom_instructions,
                replace_instructions=bool(replace_instructions),
            )
            summary = await until_cancelled(step, cancel)
            if summary is None:
                if strict_pi:
                    summary = BranchSummary(prompts.NO_CONTENT_TO_SUMMARIZE, None, None)
                else:
                    notice = NOTHING_TO_SUMMARIZE_NOTICE
    except (Cancelled, SummaryCancelled):
        signal.set()
        return NavigationResult(
            cancelled=True, aborted=True, old_leaf_id=old_leaf_id, new_leaf_id=old_leaf_id
        )
    except asyncio.CancelledError:
        signal.set()
        raise
    if cancel is not None and cancel.is_set():
        return NavigationResult(
            cancelled=True, aborted=True, old_leaf_id=old_leaf_id, new_leaf_id=old_leaf_id
        )
    if tree.leaf_id != old_leaf_id:
        raise NavigationError(LEAF_MOVED)

    editor_text = _editor_text(target)
    new_leaf_id: str | None = target_id
    if editor_text is not None:
        parent = js_get(target, "parentId")
        new_leaf_id = parent if isinstance(parent, str) and parent else None
    summary_entry: dict[str, Any] | None = None
    if summary is not None and summary.summary:
        written = summary

        def append_summary() -> str:
            entry_id = tree.branch_with_summary(
                new_leaf_id, written.summary, written.details, from_extension, written.usage
            )
            if label:
                tree.set_label(entry_id, label)
            return entry_id

        summary_entry = tree.entry(await append_written(tree, append_summary))
    elif new_leaf_id is None:
        tree.reset_leaf()
    else:
        tree.branch(new_leaf_id)
    if label and summary_entry is None:
        await append_written(tree, lambda: tree.set_label(target_id, label))
    if on_progress is not None and summary_entry is not None:
        on_progress(BranchSummaryProgress("written", len(collected.entries)))
    result = NavigationResult(
        cancelled=False,
        editor_text=editor_text,
        summary_entry=summary_entry,
        new_leaf_id=tree.leaf_id,
        old_leaf_id=old_leaf_id,
        from_extension=from_extension if summary_entry is not None else None,
        notice=notice,
    )
    if hooks is not None:
        await hooks.after_tree(
            AfterTreeEvent(tree.leaf_id, old_leaf_id, summary_entry, result.from_extension)
        )
    return result
