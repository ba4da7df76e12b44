"""A provider's ``usage`` of a reply: the context size it tells, the sum of two, billed totals.

One place for the arithmetic on usage dicts (Pi's shape: ``input``, ``output``, ``cacheRead``,
``cacheWrite``, ``totalTokens`` and a ``cost`` of the same fields plus ``total``, in USD), which the
compaction triggers, the governor, the session's statistics, the telemetry and the window all read.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

USAGE_KEYS = ("input", "output", "cacheRead", "cacheWrite")
COST_KEYS = ("input", "output", "cacheRead", "cacheWrite", "total")


def _field(usage: Mapping[str, Any], name: str) -> float:
    value = usage.get(name)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return math.nan  # JavaScript: undefined + number
    return value


def calculate_context_tokens(usage: Mapping[str, Any]) -> float:
    """Context size a provider reported: ``totalTokens`` when non-zero, else the four-field sum.

    A missing field makes the sum NaN, which never passes a ``> 0`` or threshold test.
    """
    total = usage.get("totalTokens")
    if isinstance(total, int | float) and not isinstance(total, bool) and total and total == total:
        return total
    return (
        _field(usage, "input")
        + _field(usage, "output")
        + _field(usage, "cacheRead")
        + _field(usage, "cacheWrite")
    )


def valid_usage(message: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The usage of an assistant message that may be trusted for context size, else None."""
    if message.get("role") != "assistant" or "usage" not in message:
        return None
    if message.get("stopReason") in ("aborted", "error"):
        return None
    usage = message.get("usage")
    if not usage or not isinstance(usage, Mapping):
        return None
    return usage if calculate_context_tokens(usage) > 0 else None


def combine_usage(first: Mapping[str, Any] | None, second: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """Field-by-field sum of two usages (optional fields only when either side has them)."""
    if first is None or second is None:
        source = first if first is not None else second
        return dict(source) if source is not None else None

    def num(usage: Mapping[str, Any], key: str) -> float:
        value = usage.get(key)
        return value if isinstance(value, int | float) and not isinstance(value, bool) else 0

    total: dict[str, Any] = {
        k: num(first, k) + num(second, k) for k in ("input", "output", "cacheRead", "cacheWrite")
    }
    for optional in ("cacheWrite1h", "reasoning"):
        if optional in first or optional in second:
            total[optional] = num(first, optional) + num(second, optional)
    total["totalTokens"] = num(first, "totalTokens") + num(second, "totalTokens")
    cost_a: Mapping[str, Any] = first["cost"] if isinstance(first.get("cost"), Mapping) else {}
    cost_b: Mapping[str, Any] = second["cost"] if isinstance(second.get("cost"), Mapping) else {}
    total["cost"] = {
        k: num(cost_a, k) + num(cost_b, k) for k in ("input", "output", "cacheRead", "cacheWrite", "total")
    }
    if "totalFromProvider" in cost_a or "totalFromProvider" in cost_b:
        # a sum is the provider's own figure only when every part is
        both = cost_a.get("totalFromProvider") is True and cost_b.get("totalFromProvider") is True
        total["cost"]["totalFromProvider"] = both
    return total


@dataclass
class UsageTotals:
    """Billed tokens (``USAGE_KEYS``) and cost in USD (``COST_KEYS``) summed over replies' usages.

    A field that is missing or not a number adds nothing."""

    tokens: dict[str, float] = field(default_factory=lambda: dict.fromkeys(USAGE_KEYS, 0.0))
    cost: dict[str, float] = field(default_factory=lambda: dict.fromkeys(COST_KEYS, 0.0))

    @classmethod
    def of(cls, usages: Iterable[object]) -> UsageTotals:
        totals = cls()
        for usage in usages:
            totals.add(usage)
        return totals

    def add(self, usage: object) -> None:
        if not isinstance(usage, Mapping):
            return
        for key in USAGE_KEYS:
            self.tokens[key] += _number(usage.get(key))
        cost = usage.get("cost")
        if isinstance(cost, Mapping):
            for key in COST_KEYS:
                self.cost[key] += _number(cost.get(key))


def _number(value: object) -> float:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0
