"""The governor's durable compaction, written only once the agent has settled.

The cut point, ``firstKeptEntryId``, ``tokensBefore`` and the file lists come from the host compaction's
planner, so the entry looks exactly like a host compaction. What differs is the summary: a coding task
(a Task Contract on the path, or at least three tool calls in the summarised range) gets a deterministic
summary assembled from the transcript — no model call, no ``usage`` — while a discussion with little
tool evidence goes to the model summariser, where nuance matters more than the saving.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

from piwork.core.compaction.compact import (
    ALREADY_COMPACTED,
    NOTHING_TO_COMPACT,
    CompactionError,
    CompactionResult,
    Planned,
    compact_session,
    read_and_plan,
)
from piwork.core.compaction.file_ops import compute_file_lists, format_file_lists
from piwork.core.compaction.settings import CompactionSettings
from piwork.core.compaction.summarize import Summarizer
from piwork.core.compaction.tokens import estimate_messages_tokens
from piwork.core.context.elision import call_command, call_shape, classify, result_failed
from piwork.core.errors import PiworkError
from piwork.core.messages import Message, message_text
from piwork.core.session.store import append_written
from piwork.core.session.tree import SessionTree

CONTRACT_CUSTOM_TYPE = "piwork.taskContract"
ITEM_CHARS = 500
ERROR_TAIL_LINES = 40
MIN_TOOL_CALLS = 3
MAX_ITEMS = 20


def latest_contract(tree: SessionTree) -> dict[str, Any] | None:
    """The ``data`` of the last Task Contract entry on the active path."""
    for record in reversed(tree.path()):
        if record.type != "custom":
            continue
        body = tree.body(record)
        if isinstance(body, dict) and body.get("customType") == CONTRACT_CUSTOM_TYPE:
            data = body.get("data")
            return data if isinstance(data, dict) else None
    return None


def _clip(text: str, limit: int = ITEM_CHARS) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _tool_calls(messages: Sequence[Message]) -> dict[str, tuple[str, Any]]:
    out: dict[str, tuple[str, Any]] = {}
    for message in messages:
        if message.get("role") != "assistant" or not isinstance(message.get("content"), list):
            continue
        for block in message["content"]:
            if (
                isinstance(block, dict)
                and block.get("type") == "toolCall"
                and isinstance(block.get("id"), str)
            ):
                out[block["id"]] = (str(block.get("name", "")), block.get("arguments"))
    return out


def count_tool_calls(messages: Sequence[Message]) -> int:
    return len(_tool_calls(messages))


def deterministic_summary(
    messages: Sequence[Message],
    contract: Mapping[str, Any] | None,
    verifiers: Sequence[str],
    previous_summary: str | None = None,
) -> str:
    """The summary of ``messages`` assembled from what they record (the file lists are added by the caller)."""
    sections: list[str] = []
    if previous_summary:
        sections.append("## Earlier summary\n" + previous_summary.strip())
    if contract:
        lines = ["## Task"]
        for key, label in (("title", "Title"), ("goal", "Goal"), ("mode", "Mode"), ("phase", "Phase")):
            value = contract.get(key)
            if isinstance(value, str) and value:
                lines.append(f"{label}: {_clip(value)}")
        acceptance = contract.get("acceptance")
        if isinstance(acceptance, list) and acceptance:
            lines.append("Acceptance:")
            lines += [f"- {_clip(str(item))}" for item in acceptance]
        verify = contract.get("verify")
        if isinstance(verify, str) and verify:
            lines.append(f"Verify: {verify}")
        sections.append("\n".join(lines))

    requests = [_clip(message_text(m, "\n")) for m in messages if m.get("role") == "user"]
    requests = [r for r in requests if r][-MAX_ITEMS:]
    if requests:
        sections.append("## User requests\n" + "\n".join(f"- {r}" for r in requests))
    decisions = [
        _clip(message_text(m, "\n"))
        for m in messages
        if m.get("role") == "assistant" and m.get("stopReason") == "stop"
    ]
    decisions = [d for d in decisions if d][-MAX_ITEMS:]
    if decisions:
        sections.append("## Decisions and answers\n" + "\n".join(f"- {d}" for d in decisions))

    calls = _tool_calls(messages)
    wanted = {v.strip() for v in verifiers}
    receipts: dict[str, str] = {}
    later_ok: set[str] = set()
    unresolved: list[str] = []
    commands: dict[str, str] = {}  # command -> outcome of its latest run, latest first
    for message in reversed(messages):
        if message.get("role") != "toolResult":
            continue
        tool, args = calls.get(str(message.get("toolCallId")), (str(message.get("toolName", "")), {}))
        command = call_command(tool, args)
        kind = "log" if command in wanted else classify(tool, args)
        failed = result_failed(message, kind)
        shape = command or call_shape(tool, args)  # a command passing later resolves its failures
        if command in wanted and command not in receipts:
            receipts[command] = "failed" if failed else "passed"
        if command and command not in commands:
            commands[command] = "failed" if failed else "passed"
        if failed and shape not in later_ok:
            text = message_text(message, "\n").rstrip("\n").split("\n")[-ERROR_TAIL_LINES:]
            what = command or (args.get("path") if isinstance(args, dict) else None) or ""
            unresolved.append(f"### {tool} {what}".rstrip() + "\n```\n" + "\n".join(text) + "\n```")
        if not failed:
            later_ok.add(shape)

    if receipts:
        sections.append(
            "## Verifier results (latest run)\n"
            + "\n".join(f"- `{command}`: {status}" for command, status in sorted(receipts.items()))
        )
    if commands:
        ran = list(reversed(commands.items()))[-MAX_ITEMS:]  # in the order of their latest runs
        sections.append(
            "## Commands run\n" + "\n".join(f"- `{_clip(c, 200)}`: {status}" for c, status in ran)
        )
    if unresolved:
        sections.append("## Unresolved errors\n" + "\n\n".join(reversed(unresolved[:MAX_ITEMS])))
    last_text = next(
        (
            message_text(m, "\n")
            for m in reversed(messages)
            if m.get("role") == "assistant" and message_text(m)
        ),
        "",
    )
    if last_text.strip():
        sections.append("## Next steps (from the last reply)\n" + _clip(last_text, 2 * ITEM_CHARS))
    if not sections:
        sections.append("## Summary\nNo requests or tool evidence in the summarised part.")
    return "\n\n".join(sections)


async def governor_compaction(
    tree: SessionTree,
    settings: CompactionSettings,
    summarizer: Summarizer | None,
    verifiers: Sequence[str] = (),
    planned: Planned | None = None,
) -> CompactionResult:
    """Compact the active path; deterministic for a coding task, the model summariser otherwise.

    Raises :class:`CompactionError` when there is nothing to compact and :class:`PiworkError` when a
    model summary is needed but there is no model."""
    if planned is None:
        planned = await asyncio.to_thread(read_and_plan, tree, settings)
    entries, preparation = planned
    if preparation is None:
        last_is_compaction = bool(entries) and entries[-1].get("type") == "compaction"
        raise CompactionError(ALREADY_COMPACTED if last_is_compaction else NOTHING_TO_COMPACT)
    summarised = [*preparation.messages_to_summarize, *preparation.turn_prefix_messages]
    contract = latest_contract(tree)
    if contract is None and count_tool_calls(summarised) < MIN_TOOL_CALLS:
        if summarizer is None:
            raise PiworkError("No model selected. Choose a model before compacting.")
        return await compact_session(tree, summarizer, settings, reason="governor", planned=planned)
    lists = compute_file_lists(preparation.file_ops)
    summary = deterministic_summary(summarised, contract, verifiers, preparation.previous_summary)
    summary += format_file_lists(lists)
    details = lists.to_details()
    tokens_before = (
        int(preparation.tokens_before) if preparation.tokens_before == preparation.tokens_before else 0
    )
    entry_id = await append_written(
        tree, lambda: tree.append_compaction(summary, preparation.first_kept_entry_id, tokens_before, details)
    )
    messages = (await asyncio.to_thread(tree.build_context)).messages
    return CompactionResult(
        entry_id=entry_id,
        summary=summary,
        first_kept_entry_id=preparation.first_kept_entry_id,
        tokens_before=preparation.tokens_before,
        estimated_tokens_after=estimate_messages_tokens(messages),
        usage=None,
        details=details,
        from_hook=False,
    )
