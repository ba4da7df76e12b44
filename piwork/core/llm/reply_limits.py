"""The time limits of one reply, counted across all its attempts (agent-level retries included).

Two settings bound how long a reply may take: ``httpIdleTimeoutMs`` (silence: the longest the server may
send nothing) and ``retry.provider.timeoutMs`` (the whole reply). Counted per attempt, a hung server
would get the silence limit once per retry, and a server that drips bytes the whole limit once per
retry. A ``ReplyBudget`` is shared by the attempts of one reply instead:

- the whole-reply deadline starts with the first attempt; each attempt gets what is left;
- the silence an attempt ended in (from its last byte, or its start, to its failure) is used up; the
  next attempt may be silent only for what remains. Gaps between bytes of a stream that goes on are
  not counted: a slow local model that keeps sending tokens is never cut off by the silence limit.

A reply that ends at either limit is not retried (see ``LIMIT_REACHED``).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field

# Markers of the error texts written when a reply ends at one of these limits; ``errors`` reads them
# so that neither the agent nor a summary request retries such a failure.
SILENCE_LIMIT = "silence limit"
REPLY_TIME_LIMIT = "reply time limit"
REPLY_SIZE_LIMIT = "reply size limit"  # see ``reply_text``
LIMIT_REACHED = re.compile(rf"\(({SILENCE_LIMIT}|{REPLY_TIME_LIMIT})\b|\b{REPLY_SIZE_LIMIT}\b")
# Shortest wait an attempt is still given (a budget spent to nothing fails the attempt at once).
MIN_WAIT_S = 0.001


@dataclass
class ReplyBudget:
    """Time used so far by the attempts of one reply (``clock``: monotonic seconds)."""

    clock: Callable[[], float] = time.monotonic
    started: float = field(default=-1.0)
    silence_used: float = 0.0

    def __post_init__(self) -> None:
        if self.started < 0:
            self.started = self.clock()

    def elapsed(self) -> float:
        return self.clock() - self.started

    def time_left(self, total: float | None) -> float | None:
        """Seconds left of the whole-reply limit ``total`` (None: no limit)."""
        if total is None or total <= 0:
            return None
        return max(total - self.elapsed(), MIN_WAIT_S)

    def silence_left(self, idle: float | None) -> float | None:
        """Seconds the next attempt may go without data, under the silence limit ``idle``."""
        if idle is None or idle <= 0:
            return None
        return max(idle - self.silence_used, MIN_WAIT_S)

    def spend_silence(self, seconds: float) -> None:
        self.silence_used += max(0.0, seconds)

    def spent(self, idle: float | None, total: float | None, delay_s: float = 0.0) -> str | None:
        """Which limit leaves no room for another attempt after ``delay_s`` more seconds (None: neither)."""
        if idle is not None and idle > 0 and self.silence_used >= idle:
            return SILENCE_LIMIT
        if total is not None and total > 0 and self.elapsed() + delay_s >= total:
            return REPLY_TIME_LIMIT
        return None


def _seconds(value: float) -> str:
    return f"{value:.1f}".removesuffix(".0") if value < 10 else f"{value:.0f}"


def silence_text(idle: float, waited: float) -> str:
    return (
        f"No data from the server for {_seconds(waited)} s ({SILENCE_LIMIT}: httpIdleTimeoutMs, "
        f"{idle:g} s per reply); given up without retrying: check the server and send again"
    )


def reply_time_text(total: float) -> str:
    return (
        f"The reply took longer than {total:g} s in all ({REPLY_TIME_LIMIT}: retry.provider.timeoutMs, "
        "counted across retries); given up"
    )
