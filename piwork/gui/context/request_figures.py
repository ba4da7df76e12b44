"""Plain values of one context refresh (no Qt): what is taken on the GUI thread (``Snapshot``), what the
worker hands back (``Figures``), and the pure steps between them — the next request's working set with the
governor's stubs, which message each X-ray part is, whether the provider's count is still exact, and the
per-call occupancy and billed samples read from the transcript's replies."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from piwork.core.context import BilledSample, OccupancySample, TokenEstimator, Xray
from piwork.core.llm import Model, ToolSpec
from piwork.core.resources import PromptPart
from piwork.gui.context.reading import billed_from_usage

_MESSAGE_ROLES = frozenset(
    {"user", "assistant", "toolResult", "custom", "bashExecution", "compactionSummary", "branchSummary"}
)


def working_set(
    transcript: list[dict[str, Any]], sent: list[dict[str, Any]] | None
) -> tuple[list[dict[str, Any]], frozenset[int]]:
    """The next request's messages: the transcript with the governor's elided copies from the last call
    (a projection replaces a tool result's content, never the list's shape), and which ones are elided.
    Messages after the last call are as in the transcript; a transcript that no longer lines up with the
    last call (a compaction, another branch) is taken as it is. ``transcript`` already holds the task's
    exclusions, which may have changed since that call: its own copy of the context bundle stands."""
    if not sent:
        return transcript, frozenset()
    working = list(transcript)
    elided: set[int] = set()
    for i, message in enumerate(sent[: len(transcript)]):
        original = transcript[i]
        if message is original:
            continue
        if _same_custom(message, original):
            continue
        if (
            message.get("role") != "toolResult"
            or original.get("role") != "toolResult"
            or message.get("toolCallId") != original.get("toolCallId")
        ):
            return transcript, frozenset()
        working[i] = message
        elided.add(i)
    return working, frozenset(elided)


def _same_custom(sent: Mapping[str, Any], now: Mapping[str, Any]) -> bool:
    """Two copies of one custom message (the context bundle with other parts excluded)."""
    return (
        sent.get("role") == now.get("role") == "custom"
        and sent.get("customType") == now.get("customType")
        and sent.get("timestamp") == now.get("timestamp")
    )


def message_part_indices(messages: Sequence[Mapping[str, Any]]) -> list[int]:
    """For each message part of an X-ray over ``messages`` (in order), the index of its message."""
    out = []
    for i, message in enumerate(messages):
        if message.get("role") not in _MESSAGE_ROLES:
            continue
        if message.get("role") == "bashExecution" and message.get("excludeFromContext"):
            continue
        out.append(i)
    return out


@dataclass(frozen=True)
class Snapshot:
    """What a refresh needs, taken on the GUI thread (cheap: references and a list copy)."""

    messages: list[dict[str, Any]]
    prompt_parts: list[PromptPart]
    tools: list[ToolSpec]
    model: Model | None
    telemetry_dir: Path | None
    billed_stale: bool = True  # read today's telemetry files again
    sent: list[dict[str, Any]] | None = None  # the working set of the last call, after the governor
    exclusions: tuple[Any, ...] = ()  # what the task excludes (its projection is in ``messages``)
    exclusions_since_ms: float | None = None  # when that was last changed
    # the governor's per-message counts (shared when its tokenizer is the one the feed uses)
    governor_estimator: TokenEstimator | None = None
    every_tool: list[ToolSpec] = field(default_factory=list)  # the session's tools, sent or not
    tree: Any = None  # the session tree (the task contract says why a tool is left out)
    # before the first call of a reopened session: a copy of its governor (with the restored elisions)
    # and the request's reserve, to preview what it will send
    restored: Any = None
    reserve_tokens: int = 0
    # the whole file's billed tokens and cost (its first count reads every entry: called in the worker)
    session_cost: Callable[[], Mapping[str, float]] | None = None


@dataclass(frozen=True)
class Figures:
    """What a refresh computed, handed back to the GUI thread."""

    xray: Xray
    message_parts: list[int]
    elided_messages: frozenset[int]
    exact_tokens: int | None  # the provider's count when nothing was added since the last reply
    today_tokens: int = 0
    today_cost: float = 0.0
    occupancy: list[OccupancySample] = field(default_factory=list)
    billed: list[BilledSample] = field(default_factory=list)
    xray_table: Any = None  # the X-ray's rows for the panel (an XrayTable), built with it
    tools: list[Any] = field(default_factory=list)  # ToolRow of every tool, for the Resources panel
    rough: bool = False  # counted chars/4 while no view showed counts (the tokenizer not loaded for it)
    session_cost: Mapping[str, float] | None = None  # the snapshot's ``session_cost``, counted
    segments: Any = None  # the X-ray's Segments for the budget meter, added up with it


def change_key(snapshot: Snapshot) -> tuple[Any, ...]:
    """What the figures depend on, cheaply: the transcript only grows or is replaced (a new list object
    after navigation or compaction), the model, the tools and the system prompt."""
    messages = snapshot.messages
    model = snapshot.model
    return (
        len(messages),
        id(messages[-1]) if messages else None,
        id(messages[0]) if messages else None,
        model.id if model is not None else None,
        model.context_window if model is not None else 0,
        tuple(t.name for t in snapshot.tools),
        sum(len(p.text) for p in snapshot.prompt_parts),
        snapshot.exclusions,
    )


def changed_since(messages: Sequence[Mapping[str, Any]], index: int, since_ms: float | None) -> bool:
    """Whether the task's exclusions changed after the reply at ``index``: its usage counts a request
    that held what is now left out (or left out what is back)."""
    stamp = messages[index].get("timestamp")
    return since_ms is not None and (not isinstance(stamp, int | float) or since_ms > stamp)


def edited_since_reply(tree: Any) -> bool:
    """Whether a context edit is newer than the branch's last assistant reply: that reply's usage counts a
    request holding what the edit left out or replaced, so the figure is an estimate until the next
    reply (as Pi 1.6 counts). Reads only the tree's index."""
    if tree is None or tree.leaf_id is None:
        return False
    for record in reversed(tree.path()):
        if record.type == "context_edit":
            return True
        if record.type == "message" and record.role == "assistant":
            return False
    return False


def compacted_since(messages: Sequence[Mapping[str, Any]], index: int) -> bool:
    """Whether a compaction is newer than the reply at ``index``: its usage then counts a context that no
    longer exists, so the figure is an estimate until the next reply."""
    stamp = messages[index].get("timestamp")
    for message in messages:
        if message.get("role") == "compactionSummary":
            when = message.get("timestamp")
            if not isinstance(stamp, int | float) or not isinstance(when, int | float) or when >= stamp:
                return True
    return False


def reply_usages(messages: Sequence[Mapping[str, Any]]) -> list[tuple[int, Mapping[str, Any]]]:
    """(time ms, usage) of every reply in ``messages`` that reported usage: one per provider call."""
    out: list[tuple[int, Mapping[str, Any]]] = []
    for message in messages:
        usage = message.get("usage")
        if message.get("role") != "assistant" or not isinstance(usage, Mapping):
            continue
        stamp = message.get("timestamp")
        out.append((int(stamp) if isinstance(stamp, int | float) else 0, usage))
    return out


def samples_from_usages(
    usages: Sequence[tuple[int, Mapping[str, Any]]], window: int
) -> tuple[list[OccupancySample], list[BilledSample]]:
    """Per provider call: the prompt it held as the provider counted it (occupancy) and what it was billed."""
    occupancy: list[OccupancySample] = []
    billed: list[BilledSample] = []
    for stamp, usage in usages:
        tokens, cost = billed_from_usage([usage])
        prompt = int(tokens["input"] + tokens["cacheRead"] + tokens["cacheWrite"])
        if prompt <= 0 and tokens["output"] <= 0:
            continue  # a call that failed before any usage: nothing was held or billed
        occupancy.append(OccupancySample(stamp, prompt, "provider", "provider", window))
        billed.append(
            BilledSample(
                stamp,
                "",
                "",
                int(tokens["input"]),
                int(tokens["output"]),
                int(tokens["cacheRead"]),
                int(tokens["cacheWrite"]),
                cost,
            )
        )
    return occupancy, billed
