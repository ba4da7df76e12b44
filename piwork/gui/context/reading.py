"""What the budget meter shows, as plain values (no Qt): the working set split by source, the tokens the
governor elided, the model's marks, the occupancy figure with its source, and billed traffic apart.

Occupancy and billed traffic are different series: they sit in different fields, are painted in different
places and are never added together.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from piwork.core.context import Marks, Xray

BUNDLE_CUSTOM_TYPE = "piwork.contextBundle"
SEGMENT_TITLES = {
    "systemPrompt": "System prompt",
    "tools": "Tool schemas",
    "bundle": "Context bundle",
    "messages": "Messages",
}
_SYSTEM_KINDS = frozenset({"system", "context_file", "skills"})


def compact_tokens(value: float) -> str:
    value = float(value)
    if value >= 1_000_000:
        return f"{value / 1_000_000:.2f}".rstrip("0").rstrip(".") + "M"
    if value >= 1000:
        return f"{value / 1000:.1f}".removesuffix(".0") + "k"
    return str(int(value))


def format_cost(usd: float) -> str:
    if usd <= 0:
        return "$0.00"
    if usd < 0.01:
        return f"${usd:.4f}"
    return f"${usd:.2f}"


@dataclass(frozen=True)
class Segments:
    """Tokens of the next request by source (an estimate with one tokenizer; they add up to ``total``)."""

    system_prompt: int = 0
    tools: int = 0
    bundle: int = 0
    messages: int = 0

    @property
    def total(self) -> int:
        return self.system_prompt + self.tools + self.bundle + self.messages

    def items(self) -> list[tuple[str, int]]:
        return [
            ("systemPrompt", self.system_prompt),
            ("tools", self.tools),
            ("bundle", self.bundle),
            ("messages", self.messages),
        ]

    @classmethod
    def from_xray(cls, xray: Xray) -> Segments:
        system = tools = bundle = messages = 0
        for part in xray.parts:
            if part.kind in _SYSTEM_KINDS:
                system += part.tokens
            elif part.kind == "tool_schema":
                tools += part.tokens
            elif part.kind == "custom" and part.label == BUNDLE_CUSTOM_TYPE:
                bundle += part.tokens
            else:
                messages += part.tokens
        return cls(system, tools, bundle, messages)


@dataclass(frozen=True)
class BilledFigures:
    """``billedTraffic`` totals: provider-reported usage only (tokens of every kind, and USD)."""

    session_tokens: int = 0
    session_cost: float = 0.0
    today_tokens: int = 0
    today_cost: float = 0.0
    session_detail: Mapping[str, float] = field(default_factory=dict)  # input/output/cacheRead/cacheWrite

    def text(self) -> str:
        return (
            f"billed {compact_tokens(self.session_tokens)} tok · {format_cost(self.session_cost)}"
            f" · today {format_cost(self.today_cost)}"
        )


def billed_from_usage(usages: Iterable[Mapping[str, Any]]) -> tuple[dict[str, float], float]:
    """Sum provider ``usage`` dicts: ({input, output, cacheRead, cacheWrite}, cost in USD)."""
    from piwork.core.usage import UsageTotals  # the engine's, loaded with the session

    summed = UsageTotals.of(usages)
    return summed.tokens, summed.cost["total"]


@dataclass(frozen=True)
class MeterReading:
    """One state of the meter. ``occupancy`` is the labelled figure: the provider's count after a reply
    ("exact") or an estimate; ``segments`` split it by source; ``elided`` is what the governor's projection
    keeps out of the working set (transcript minus working set), drawn as a ghost after the bar."""

    window: int = 0
    marks: Marks | None = None
    segments: Segments = field(default_factory=Segments)
    occupancy: int | None = None
    exact: bool = False
    tokenizer: str = "chars/4"
    elided: int = 0

    @property
    def source_label(self) -> str:
        if self.exact:
            return "exact"
        return "≈ " + self.tokenizer.removeprefix("≈").strip()

    @property
    def shown_tokens(self) -> int:
        """The bar's length in tokens: the occupancy figure, else the segments' sum."""
        return self.occupancy if self.occupancy is not None else self.segments.total

    @property
    def zone(self) -> str:
        if self.marks is None or self.occupancy is None:
            return "ok"
        return self.marks.zone(self.occupancy)

    def label(self) -> str:
        if self.window <= 0:
            return "context: —"
        if self.occupancy is None:
            return f"context — / {compact_tokens(self.window)}"
        return (
            f"context {compact_tokens(self.occupancy)} / {compact_tokens(self.window)} · {self.source_label}"
        )

    def percent_text(self) -> str:
        if self.window <= 0 or self.occupancy is None:
            return ""
        return f"{100.0 * self.occupancy / self.window:.0f}% of the window"

    def scaled_segments(self) -> list[tuple[str, float]]:
        """Segments scaled so they fill exactly ``shown_tokens`` (the estimate split, the exact length)."""
        total = self.segments.total
        shown = self.shown_tokens
        if total <= 0:
            return [("messages", float(shown))] if shown > 0 else []
        factor = shown / total
        return [(key, tokens * factor) for key, tokens in self.segments.items() if tokens > 0]
