"""The ``retry.*`` settings shared by agent turns and summary requests, apart from the summarizer: every run
reads them, and only a compaction needs the summarizer."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from piwork.core.settings_schema import RETRY_BASE_DELAY_MS, RETRY_ENABLED, RETRY_MAX_RETRIES
from piwork.core.settings_values import SettingValues


@dataclass(frozen=True)
class RetryPolicy:
    """The ``retry.*`` settings shared by agent turns and summary requests (Pi's defaults)."""

    enabled: bool = RETRY_ENABLED.default
    max_retries: int = RETRY_MAX_RETRIES.default
    base_delay_ms: int = RETRY_BASE_DELAY_MS.default

    @classmethod
    def from_settings(cls, retry: Mapping[str, Any] | None) -> RetryPolicy:
        """Read the settings' ``retry`` object; ill-typed values keep their defaults."""
        values = SettingValues.of({"retry": retry})
        return RetryPolicy(
            enabled=values.value(RETRY_ENABLED),
            max_retries=values.value(RETRY_MAX_RETRIES),
            base_delay_ms=values.value(RETRY_BASE_DELAY_MS),
        )

    def backoff_ms(self, attempt: int) -> int:
        """``baseDelayMs · 2^(attempt−1)``: 2 s, 4 s, 8 s with the defaults."""
        return int(self.base_delay_ms * 2 ** max(0, attempt - 1))
