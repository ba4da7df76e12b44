"""A tool call as the chat keeps it: its arguments, where it is in its run, and what it returned (or why it
returned nothing and never will).

Plain data, no Qt; how a card is shown is up to its tool's view (``piwork.gui.chat.tool_views``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from piwork.core.approvals import ApprovalRequest


@dataclass(eq=False, slots=True)  # a long session has tens of thousands of cards
class ToolCard:
    call_id: str
    name: str
    args: dict[str, Any] = field(default_factory=dict)
    status: str = "pending"  # preparing | pending | running | done | error | aborted
    started_at: float | None = None
    finished_at: float | None = None
    result_text: str = ""
    truncated: bool = False
    full_output_path: str | None = None
    model_lines: int | None = None  # lines of output the model was given (when it was cut)
    total_lines: int | None = None  # lines of the full output
    approval: ApprovalRequest | None = None  # the question the call waits on (Approve, Deny, Always allow)
    # why a call (status "aborted") has no result and will get none: "stopped" or "failed" (its reply was
    # stopped or failed, so it never ran), "missing" (the session holds none: the agent ended while it ran);
    # "" for every other call
    no_result: str = ""

    @property
    def duration(self) -> float | None:
        if self.started_at is None:
            return None
        end = self.finished_at if self.finished_at is not None else time.monotonic()
        return max(0.0, end - self.started_at)


def end_without_result(card: ToolCard, stop_reason: object) -> None:
    """``card``'s call gets no result and never will: its reply ended ``stop_reason`` "aborted" or "error"
    (a stopped or failed reply's calls never run, and no request sends them), or, for any other reply,
    the session holds no result for it (the model is told it has none)."""
    card.status = "aborted"
    card.no_result = {"aborted": "stopped", "error": "failed"}.get(str(stop_reason), "missing")
