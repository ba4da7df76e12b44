"""Agent-level retry policy: the ``retry.*`` settings and how long to wait before attempt N."""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from piwork.core.compaction.retry_policy import RetryPolicy
from piwork.core.settings_schema import PROVIDER_MAX_RETRY_DELAY_MS, RETRY_MAX_AGENT_DELAY_MS
from piwork.core.settings_values import SettingValues


@dataclass(frozen=True)
class RetrySettings(RetryPolicy):
    """``retry.*`` settings (Pi's defaults): the shared policy plus the provider's delay cap."""

    # retry.provider.maxRetryDelayMs: a server-requested delay above this is not waited for (0 = no cap).
    max_retry_delay_ms: int = PROVIDER_MAX_RETRY_DELAY_MS.default
    # retry.maxAgentDelayMs: the backoff between two attempts never exceeds this
    max_agent_delay_ms: int = RETRY_MAX_AGENT_DELAY_MS.default

    @classmethod
    def from_mapping(cls, retry: Mapping[str, Any] | None) -> RetrySettings:
        """Build from the merged settings' ``retry`` object, ignoring values of the wrong type."""
        policy = RetryPolicy.from_settings(retry)
        values = SettingValues.of({"retry": retry})
        cap = values.value(PROVIDER_MAX_RETRY_DELAY_MS)
        agent_cap = values.value(RETRY_MAX_AGENT_DELAY_MS)
        return cls(policy.enabled, policy.max_retries, policy.base_delay_ms, cap, agent_cap)


def backoff_delay_ms(attempt: int, settings: RetrySettings) -> int:
    """``baseDelayMs · 2^(attempt−1)`` (2 s, 4 s, 8 s with the defaults), at most ``maxAgentDelayMs``."""
    return min(settings.backoff_ms(attempt), settings.max_agent_delay_ms)


@dataclass(frozen=True)
class RetryDecision:
    retry: bool
    delay_ms: int = 0
    # Set when the server asked for a longer wait than we accept: the reason shown to the user.
    refused_reason: str | None = None


def decide_retry(
    attempt: int, settings: RetrySettings, retry_after_ms: int | None, now_s: float | None = None
) -> RetryDecision:
    """Whether attempt number ``attempt`` (1-based) may run, and after what delay.

    A server ``Retry-After`` lengthens the backoff; one beyond ``max_retry_delay_ms`` refuses the retry
    and the reason says when the provider's limit resets (local time).
    """
    if not settings.enabled or attempt > settings.max_retries:
        return RetryDecision(False)
    delay = backoff_delay_ms(attempt, settings)
    if retry_after_ms is not None and retry_after_ms > 0:
        cap = settings.max_retry_delay_ms
        if cap > 0 and retry_after_ms > cap:
            resets = time.localtime((time.time() if now_s is None else now_s) + retry_after_ms / 1000)
            return RetryDecision(
                False,
                refused_reason=f"The provider asked to wait {retry_after_ms / 1000:.0f} s before retrying "
                f"(until {time.strftime('%H:%M:%S', resets)}), longer than the {cap / 1000:.0f} s limit; "
                "send the prompt again after that.",
            )
        delay = max(delay, retry_after_ms)
    return RetryDecision(True, delay)
