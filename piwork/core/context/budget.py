"""Working-set budget: the marks a request is measured against, and the governor's settings.

The marks are limits of the working set, not of the model: pressure from about 160K tokens, keep the
provider prompt under 240K, stay out of the 272K+ pricing zone. For a model with a smaller window they
shrink with it, so a 32K model gets marks it can actually reach. Host compaction keeps its own threshold
(``contextWindow - reserveTokens``) as the overflow guard.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from piwork.core.llm.types import Model

PRESSURE_MARK = 160_000
PROMPT_CEILING = 240_000
PRICING_MARK = 272_000
RESERVE_TOKENS = 16_384  # compaction.reserveTokens default
KEEP_RECENT_TOKENS = 20_000  # compaction.keepRecentTokens default
OUTPUT_SAFETY_MARGIN = 4_096
MIN_SAVINGS = 8_000
SAVINGS_RATIO = 0.15
MAX_REQUIRED_SAVINGS = 20_000
MIN_PROTECTED_GROUPS = 6
TOOL_ROUNDS_TRIGGER = 12
MIN_ELIDE_TOKENS = 200

SETTINGS_KEY = "piwork.contextGovernor"

Zone = Literal["ok", "pressure", "over-ceiling", "pricing-zone", "overflow"]


@dataclass(frozen=True)
class GovernorSettings:
    """``piwork.contextGovernor`` with every value checked; ``problems`` says what was replaced."""

    enabled: bool = True
    pressure_mark: int = PRESSURE_MARK
    prompt_ceiling: int = PROMPT_CEILING
    allow_pricing_zone: bool = False
    min_protected_groups: int = MIN_PROTECTED_GROUPS
    min_savings: int = MIN_SAVINGS
    savings_ratio: float = SAVINGS_RATIO
    max_required_savings: int = MAX_REQUIRED_SAVINGS
    problems: tuple[str, ...] = field(default=(), compare=False)

    def required_savings(self, occupancy: int) -> int:
        """Tokens a projection must save to be worth losing the provider's prompt cache."""
        wanted = math.ceil(self.savings_ratio * occupancy)
        return min(self.max_required_savings, max(self.min_savings, wanted))

    @classmethod
    def from_settings(cls, settings: Mapping[str, Any]) -> GovernorSettings:
        """Read from the effective settings object; a bad value is reported and its default used."""
        reader = _Reader(_section(settings))
        enabled = reader.boolean("enabled", True)
        pressure = reader.integer("pressureMark", PRESSURE_MARK, minimum=1)
        ceiling = reader.integer("promptCeiling", PROMPT_CEILING, minimum=1)
        allow = reader.boolean("allowPricingZone", False)
        protected = reader.integer("minProtectedGroups", MIN_PROTECTED_GROUPS, minimum=MIN_PROTECTED_GROUPS)
        min_savings = reader.integer("minSavings", MIN_SAVINGS, minimum=0)
        ratio = reader.ratio("savingsRatio", SAVINGS_RATIO)
        max_required = reader.integer("maxRequiredSavings", MAX_REQUIRED_SAVINGS, minimum=0)
        if max_required < min_savings:
            reader.problem(
                f"{SETTINGS_KEY}.maxRequiredSavings ({max_required}) is below minSavings ({min_savings}); "
                f"using {max(MAX_REQUIRED_SAVINGS, min_savings)}"
            )
            max_required = max(MAX_REQUIRED_SAVINGS, min_savings)
        return cls(
            enabled=enabled,
            pressure_mark=pressure,
            prompt_ceiling=ceiling,
            allow_pricing_zone=allow,
            min_protected_groups=protected,
            min_savings=min_savings,
            savings_ratio=ratio,
            max_required_savings=max_required,
            problems=tuple(reader.problems),
        )


def _section(settings: Mapping[str, Any]) -> Mapping[str, Any] | str:
    piwork = settings.get("piwork")
    if not isinstance(piwork, Mapping):
        return {}
    value = piwork.get("contextGovernor")
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        return f"{SETTINGS_KEY} must be an object; using the defaults"
    return value


class _Reader:
    def __init__(self, section: Mapping[str, Any] | str) -> None:
        self.problems: list[str] = []
        if isinstance(section, str):
            self.problems.append(section)
            section = {}
        self._data = section

    def problem(self, message: str) -> None:
        self.problems.append(message)

    def _bad(self, key: str, why: str, default: Any) -> None:
        shown = "true" if default is True else "false" if default is False else default
        self.problems.append(f"{SETTINGS_KEY}.{key} {why}; using {shown}")

    def boolean(self, key: str, default: bool) -> bool:
        value = self._data.get(key)
        if value is None:
            return default
        if not isinstance(value, bool):
            self._bad(key, f"must be true or false (got {value!r})", default)
            return default
        return value

    def integer(self, key: str, default: int, *, minimum: int) -> int:
        value = self._data.get(key)
        if value is None:
            return default
        number = value if isinstance(value, int | float) and not isinstance(value, bool) else None
        if number is None or not math.isfinite(number) or number != int(number):
            self._bad(key, f"must be a whole number of tokens (got {value!r})", default)
            return default
        if number < minimum:
            self._bad(key, f"must be at least {minimum} (got {int(number)})", default)
            return default
        return int(number)

    def ratio(self, key: str, default: float) -> float:
        value = self._data.get(key)
        if value is None:
            return default
        number = value if isinstance(value, int | float) and not isinstance(value, bool) else None
        if number is None or not math.isfinite(number) or not 0 < number <= 1:
            self._bad(key, f"must be a number above 0 and at most 1 (got {value!r})", default)
            return default
        return float(number)


@dataclass(frozen=True)
class Marks:
    """Effective marks for one model, in tokens of the whole request (system prompt + tools + messages)."""

    window: int
    pressure: int
    ceiling: int
    pricing: int | None  # None: the model has no pricing step worth showing
    compaction_threshold: int  # host compaction fires strictly above this

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
    """The lowest ``cost.tiers[].inputTokensAbove``; else 272,000 for windows beyond it; else None."""
    tiers = [tier.input_tokens_above for tier in model.cost.tiers]
    if tiers:
        return min(tiers)
    return PRICING_MARK if model.context_window > PRICING_MARK else None


def effective_marks(
    model: Model, settings: GovernorSettings | None = None, reserve_tokens: int = RESERVE_TOKENS
) -> Marks:
    """The marks for ``model``'s context window ``W``:

    ``ceiling = max(1, min(promptCeiling, W - reserveTokens))``,
    ``pressure = min(pressureMark, floor(0.8 W), ceiling)``, pricing from the model's cost tiers.
    """
    settings = settings or GovernorSettings()
    window = model.context_window
    ceiling = max(1, min(settings.prompt_ceiling, window - reserve_tokens))
    pressure = max(1, min(settings.pressure_mark, math.floor(0.8 * window), ceiling))
    return Marks(
        window=window,
        pressure=pressure,
        ceiling=ceiling,
        pricing=pricing_mark(model),
        compaction_threshold=window - reserve_tokens,
    )
