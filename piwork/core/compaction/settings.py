"""Typed compaction and branch-summary settings, read from the merged settings document.

The ``compaction`` object holds ``enabled``, ``reserveTokens`` and ``keepRecentTokens``; the
``branchSummary`` object holds ``reserveTokens`` and ``skipPrompt`` (Pi's JSON names). Each key is
declared in :mod:`piwork.core.settings_schema`; a missing or ill-typed value falls back to its
default (and is reported by the settings loader), so a hand-edited file never breaks compaction.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from piwork.core.settings_schema import (
    BRANCH_SUMMARY_RESERVE_TOKENS,
    BRANCH_SUMMARY_SKIP_PROMPT,
    COMPACTION_ENABLED,
    COMPACTION_KEEP_RECENT_TOKENS,
    COMPACTION_RESERVE_TOKENS,
)
from piwork.core.settings_values import SettingValues

BRANCH_FALLBACK_CONTEXT_WINDOW = 128000


@dataclass(frozen=True)
class CompactionSettings:
    """``enabled`` gates automatic compaction only; manual compaction always works."""

    enabled: bool = COMPACTION_ENABLED.default
    reserve_tokens: int = COMPACTION_RESERVE_TOKENS.default
    keep_recent_tokens: int = COMPACTION_KEEP_RECENT_TOKENS.default

    @classmethod
    def from_settings(
        cls, settings: Mapping[str, Any] | None, model_key: str | None = None
    ) -> CompactionSettings:
        """Read the ``compaction`` section of a merged settings mapping.

        ``model_key`` (``"provider/id"``) selects ``compaction.modelOverrides[model_key]``, whose
        ``reserveTokens``/``keepRecentTokens`` win over the ordinary values for that model. An
        override that is not a non-negative whole number is ignored.
        """
        values = SettingValues.of(settings)
        override = _model_override(settings, model_key)
        return cls(
            enabled=values.value(COMPACTION_ENABLED),
            reserve_tokens=_token_override(
                override, "reserveTokens", values.value(COMPACTION_RESERVE_TOKENS)
            ),
            keep_recent_tokens=_token_override(
                override, "keepRecentTokens", values.value(COMPACTION_KEEP_RECENT_TOKENS)
            ),
        )

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CompactionSettings:
        """Read ``{enabled, reserveTokens, keepRecentTokens}`` (Pi's names)."""
        return cls.from_settings({"compaction": data})

    def to_json(self) -> dict[str, Any]:
        return {
            "enabled": self.enabled,
            "reserveTokens": self.reserve_tokens,
            "keepRecentTokens": self.keep_recent_tokens,
        }


def _model_override(settings: Mapping[str, Any] | None, model_key: str | None) -> Mapping[str, Any]:
    section = settings.get("compaction") if isinstance(settings, Mapping) and model_key else None
    overrides = section.get("modelOverrides") if isinstance(section, Mapping) else None
    entry = overrides.get(model_key) if isinstance(overrides, Mapping) else None
    return entry if isinstance(entry, Mapping) else {}


def _token_override(override: Mapping[str, Any], key: str, ordinary: int) -> int:
    value = override.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0 or value != int(value):
        return ordinary
    return int(value)


@dataclass(frozen=True)
class BranchSummarySettings:
    """``skip_prompt``: never ask about (nor write) a summary when navigating the tree."""

    reserve_tokens: int = BRANCH_SUMMARY_RESERVE_TOKENS.default
    skip_prompt: bool = BRANCH_SUMMARY_SKIP_PROMPT.default

    @classmethod
    def from_settings(cls, settings: Mapping[str, Any] | None) -> BranchSummarySettings:
        values = SettingValues.of(settings)
        return cls(
            reserve_tokens=values.value(BRANCH_SUMMARY_RESERVE_TOKENS),
            skip_prompt=values.value(BRANCH_SUMMARY_SKIP_PROMPT),
        )
