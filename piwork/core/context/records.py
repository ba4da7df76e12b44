"""Records the governor and telemetry produce: metadata only, never prompt text or tool output.

Occupancy (what the next request holds) and billed traffic (what a provider charged) are different kinds
of figure and are kept in different types on purpose: a projection lowers occupancy but not past billing,
cache reads are billed without growing occupancy, and the per-request context hook has no billed usage
for the call it shapes. Nothing here adds one to the other.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

Decision = Literal[
    "projected", "no-op", "fail-closed", "forced", "context-limit", "over-ceiling", "verifier-reused"
]
Trigger = Literal["pressure", "boundary", "toolRounds", "repeat", "ceiling"]
ReasonCode = Literal["superseded", "repeated", "earlier-phase", "resolved-log", "aged"]
OccupancySource = Literal["provider", "estimate"]

DECISIONS: tuple[Decision, ...] = (
    "projected",
    "no-op",
    "fail-closed",
    "forced",
    "context-limit",
    "over-ceiling",
    "verifier-reused",
)
TRIGGERS: tuple[Trigger, ...] = ("pressure", "boundary", "toolRounds", "repeat", "ceiling")
REASON_CODES: tuple[ReasonCode, ...] = ("superseded", "repeated", "earlier-phase", "resolved-log", "aged")


@dataclass(frozen=True)
class ElidedItem:
    """One tool result whose content the working set replaced with a stub."""

    tool_call_id: str
    tool: str
    argument: str  # the path or command, at most 200 characters
    tokens: int  # estimated tokens of the original content
    reason: ReasonCode

    def to_json(self) -> dict[str, Any]:
        return {
            "toolCallId": self.tool_call_id,
            "tool": self.tool,
            "argument": self.argument,
            "tokens": self.tokens,
            "reason": self.reason,
        }


@dataclass(frozen=True)
class GovernorDecision:
    """One row of the governor log: what happened to one provider call's working set.

    ``occupancy_before`` is the transcript occupancy (the unmodified list, with system prompt and tool
    schemas); ``occupancy_after`` what is actually sent. ``elided`` lists the items newly elided by this
    decision; ``sticky`` counts elisions carried over from earlier decisions.
    """

    time_ms: int
    turn: int
    decision: Decision
    detail: str  # e.g. "transcript orphan", "below threshold", "no trigger"
    triggers: tuple[Trigger, ...] = ()
    occupancy_before: int = 0
    occupancy_after: int = 0
    savings: int = 0
    required: int = 0
    elided: tuple[ElidedItem, ...] = ()
    sticky: int = 0
    tokenizer: str = "chars/4"

    def to_json(self) -> dict[str, Any]:
        return {
            "timeMs": self.time_ms,
            "turn": self.turn,
            "decision": self.decision,
            "detail": self.detail,
            "triggers": list(self.triggers),
            "occupancyBefore": self.occupancy_before,
            "occupancyAfter": self.occupancy_after,
            "savings": self.savings,
            "required": self.required,
            "elided": [item.to_json() for item in self.elided],
            "sticky": self.sticky,
            "tokenizer": self.tokenizer,
        }


@dataclass(frozen=True, slots=True)  # one per reply of a long session
class OccupancySample:
    """``contextOccupancy``: tokens the working set of the next (or last) request holds."""

    time_ms: int
    tokens: int
    source: OccupancySource  # "provider": from the last good reply's usage; "estimate": counted here
    tokenizer: str  # "o200k_base", "≈ cl100k_base", "chars/4"; "provider" counts use the provider's own
    window: int = 0
    transcript_tokens: int | None = None  # before the governor's projection (the meter's ghost segment)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "series": "contextOccupancy",
            "timeMs": self.time_ms,
            "tokens": self.tokens,
            "source": self.source,
            "tokenizer": self.tokenizer,
            "window": self.window,
        }
        if self.transcript_tokens is not None:
            out["transcriptTokens"] = self.transcript_tokens
        return out


@dataclass(frozen=True, slots=True)  # one per reply of a long session
class BilledSample:
    """``billedTraffic``: what one provider call was charged, from its ``usage`` only."""

    time_ms: int
    provider: str
    model: str
    input: int
    output: int
    cache_read: int
    cache_write: int
    cost: float  # USD
    cumulative: dict[str, float] = field(default_factory=dict)  # the session's totals including this call

    def to_json(self) -> dict[str, Any]:
        return {
            "series": "billedTraffic",
            "timeMs": self.time_ms,
            "provider": self.provider,
            "model": self.model,
            "input": self.input,
            "output": self.output,
            "cacheRead": self.cache_read,
            "cacheWrite": self.cache_write,
            "cost": self.cost,
            "cumulative": dict(self.cumulative),
        }
