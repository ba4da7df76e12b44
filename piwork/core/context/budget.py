"""Working-set budget: the marks a request is measured against, and the governor's settings.

The marks are limits of the working set, not of the model: pressure from about 160K tokens, keep the
provider prompt under 240K, stay out of the 272K+ pricing zone. They are taken from the room host
compaction leaves, ``U = contextWindow - reserveTokens`` (its threshold): pressure at 70% of it and the
ceiling at 90%, so on every window the governor acts well before host compaction, the overflow guard.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from piwork.core.llm.types import Model
from piwork.core.settings_schema import (
    COMPACTION_RESERVE_TOKENS,
    GOVERNOR_ALLOW_PRICING_ZONE,
    GOVERNOR_ENABLED,
    GOVERNOR_MAX_REQUIRED_SAVINGS,
    GOVERNOR_MIN_PROTECTED_GROUPS,
    GOVERNOR_MIN_SAVINGS,
    GOVERNOR_PRESSURE_MARK,
    GOVERNOR_PROMPT_CEILING,
    GOVERNOR_SAVINGS_RATIO,
)
from piwork.core.settings_values import SettingValues

PRICING_MARK = 272_000
TOOL_ROUNDS_TRIGGER = 12
MIN_ELIDE_TOKENS = 200
RESERVE_TOKENS = COMPACTION_RESERVE_TOKENS.default
PRESSURE_SHARE = 0.7  # of U
CEILING_SHARE = 0.9  # of U
FLOOR_SHARE = 0.1  # of U: the savings floor on windows too small for the full 8K
TARGET_SHARE = 0.5  # of the pressure mark: where graded elision stops

SETTINGS_KEY = "piwork.contextGovernor"

Zone = Literal["ok", "pressure", "over-ceiling", "pricing-zone", "overflow"]


@dataclass(frozen=True)
class GovernorSettings:
    """``piwork.contextGovernor`` with every value checked; ``problems`` says what was replaced."""

    enabled: bool = GOVERNOR_ENABLED.default
    pressure_mark: int = GOVERNOR_PRESSURE_MARK.default
    prompt_ceiling: int = GOVERNOR_PROMPT_CEILING.default
    allow_pricing_zone: bool = GOVERNOR_ALLOW_PRICING_ZONE.default
    min_protected_groups: int = GOVERNOR_MIN_PROTECTED_GROUPS.default
    min_savings: int = GOVERNOR_MIN_SAVINGS.default
    savings_ratio: float = GOVERNOR_SAVINGS_RATIO.default
    max_required_savings: int = GOVERNOR_MAX_REQUIRED_SAVINGS.default
    problems: tuple[str, ...] = field(default=(), compare=False)

    def required_savings(self, occupancy: int, room: int | None = None) -> int:
        """Tokens a projection must save to be worth losing the provider's prompt cache:
        ``min(20K, max(min(8K, ceil(0.1 U)), ceil(0.15 occupancy)))`` — the floor scaled down on a small
        window (``room`` is ``U``; None: no scaling)."""
        wanted = math.ceil(self.savings_ratio * occupancy)
        floor = self.min_savings
        if room is not None:
            floor = min(floor, max(1, math.ceil(FLOOR_SHARE * room)))
        return min(self.max_required_savings, max(floor, wanted))

    @classmethod
    def from_settings(cls, settings: Mapping[str, Any]) -> GovernorSettings:
        """Read from the effective settings; a bad value is reported (with its file when known), its default used."""
        values = SettingValues.of(settings)
        return cls(
            enabled=values.value(GOVERNOR_ENABLED),
            pressure_mark=values.value(GOVERNOR_PRESSURE_MARK),
            prompt_ceiling=values.value(GOVERNOR_PROMPT_CEILING),
            allow_pricing_zone=values.value(GOVERNOR_ALLOW_PRICING_ZONE),
            min_protected_groups=values.value(GOVERNOR_MIN_PROTECTED_GROUPS),
            min_savings=values.value(GOVERNOR_MIN_SAVINGS),
            savings_ratio=values.value(GOVERNOR_SAVINGS_RATIO),
            max_required_savings=values.value(GOVERNOR_MAX_REQUIRED_SAVINGS),
            problems=tuple(p.message for p in values.problems_under(SETTINGS_KEY)),
        )


@dataclass(frozen=True)
class Marks:
    """Effective marks for one model, in tokens of the whole request (system prompt + tools + messages)."""

    window: int
    pressure: int
    ceiling: int
    pricing: int | None  # None: the model has no pricing step worth showing
    compaction_threshold: int  # host compaction fires strictly above this (U)

    @property
    def target(self) -> int:
        """Where graded elision stops: half the pressure mark."""
        return max(1, math.floor(TARGET_SHARE * self.pressure))

    def zone(self, tokens: float) -> Zone:
        """Where a request of ``tokens`` falls; the most severe mark reached wins."""
        if tokens > self.compaction_threshold:
            return "overflow"
        if self.pricing is not None and tokens >= self.pricing:
            return "pricing-zone"
        if tokens >= self.ceiling:
            return "over-ceiling"
        if tokens >= self.pressure:
            return "pressure"
        return "ok"

    def to_json(self) -> dict[str, Any]:
        return {
            "window": self.window,
            "pressure": self.pressure,
            "ceiling": self.ceiling,
            "pricing": self.pricing,
            "compaction": self.compaction_threshold,
        }


def pricing_mark(model: Model) -> int | None:
    """The lowest ``cost.tiers[].inputTokensAbove``; else, for a model with an input price and a window
    beyond it, 272,000; else None (a free or local model is never withheld for price)."""
    tiers = [tier.input_tokens_above for tier in model.cost.tiers]
    if tiers:
        return min(tiers)
    priced = model.cost.input > 0
    return PRICING_MARK if priced and model.context_window > PRICING_MARK else None


def effective_marks(
    model: Model, settings: GovernorSettings | None = None, reserve_tokens: int = RESERVE_TOKENS
) -> Marks:
    """The marks for ``model``'s context window ``W``, with ``U = W - reserveTokens``:

    ``ceiling = max(1, min(promptCeiling, floor(0.9 U)))``,
    ``pressure = max(1, min(pressureMark, floor(0.7 U)))``, pricing from the model's price.
    """
    settings = settings or GovernorSettings()
    window = model.context_window
    room = window - reserve_tokens
    ceiling = max(1, min(settings.prompt_ceiling, math.floor(CEILING_SHARE * room)))
    pressure = max(1, min(settings.pressure_mark, math.floor(PRESSURE_SHARE * room), ceiling))
    return Marks(
        window=window,
        pressure=pressure,
        ceiling=ceiling,
        pricing=pricing_mark(model),
        compaction_threshold=room,
    )
