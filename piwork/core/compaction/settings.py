"""Typed compaction and branch-summary settings, read from a plain settings mapping.

The mapping is the merged settings document (global then project, Pi's JSON names): the
``compaction`` object holds ``enabled``, ``reserveTokens`` and ``keepRecentTokens``; the
``branchSummary`` object holds ``reserveTokens`` and ``skipPrompt``. A missing or ill-typed value
falls back to its default, so a hand-edited settings file never breaks compaction.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

DEFAULT_RESERVE_TOKENS = 16384
DEFAULT_KEEP_RECENT_TOKENS = 20000
BRANCH_FALLBACK_CONTEXT_WINDOW = 128000
BRANCH_SUMMARY_MAX_TOKENS = 4096


def _section(settings: Mapping[str, Any] | None, name: str) -> Mapping[str, Any]:
    value = (settings or {}).get(name)
    return value if isinstance(value, Mapping) else {}


def _int(value: Any, default: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return default
    if value != value or value in (float("inf"), float("-inf")):
        return default
    return int(value)


def _bool(value: Any, default: bool) -> bool:
    return value if isinstance(value, bool) else default


@dataclass(frozen=True)
class CompactionSettings:
    """``enabled`` gates automatic compaction only; manual compaction always works."""

    enabled: bool = True
    reserve_tokens: int = DEFAULT_RESERVE_TOKENS
    keep_recent_tokens: int = DEFAULT_KEEP_RECENT_TOKENS

    @classmethod
    def from_settings(cls, settings: Mapping[str, Any] | None) -> CompactionSettings:
        """Read the ``compaction`` section of a merged settings mapping."""
        return cls.from_json(_section(settings, "compaction"))

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CompactionSettings:
        """Read ``{enabled, reserveTokens, keepRecentTokens}`` (Pi's names)."""
        return cls(
            enabled=_bool(data.get("enabled"), True),
            reserve_tokens=_int(data.get("reserveTokens"), DEFAULT_RESERVE_TOKENS),
            keep_recent_tokens=_int(data.get("keepRecentTokens"), DEFAULT_KEEP_RECENT_TOKENS),
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "enabled": self.enabled,
            "reserveTokens": self.reserve_tokens,
            "keepRecentTokens": self.keep_recent_tokens,
        }


@dataclass(frozen=True)
class BranchSummarySettings:
    """``skip_prompt``: never ask about (nor write) a summary when navigating the tree."""

    reserve_tokens: int = DEFAULT_RESERVE_TOKENS
    skip_prompt: bool = False

    @classmethod
    def from_settings(cls, settings: Mapping[str, Any] | None) -> BranchSummarySettings:
        data = _section(settings, "branchSummary")
        return cls(
            reserve_tokens=_int(data.get("reserveTokens"), DEFAULT_RESERVE_TOKENS),
            skip_prompt=_bool(data.get("skipPrompt"), False),
        )
