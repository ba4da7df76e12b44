"""Thinking levels: which a model supports and what a request for an unsupported one falls back to."""

from __future__ import annotations

from collections.abc import Mapping

from piwork.core.llm.types import THINKING_LEVELS, Model, ThinkingLevel

DEFAULT_BUDGETS: Mapping[str, int] = {"minimal": 1024, "low": 2048, "medium": 8192, "high": 16384}
MIN_ANSWER_TOKENS = 1024
_UNSUPPORTED_BY_DEFAULT = frozenset({"xhigh", "max"})


def supported_levels(model: Model) -> list[ThinkingLevel]:
    if not model.reasoning:
        return ["off"]
    mapping = model.thinking_level_map or {}
    levels: list[ThinkingLevel] = []
    for level in THINKING_LEVELS:
        if level in mapping:
            if mapping[level] is not None:
                levels.append(level)
        elif level not in _UNSUPPORTED_BY_DEFAULT:
            levels.append(level)
    return levels or ["off"]


def resolve_level(model: Model, requested: ThinkingLevel) -> ThinkingLevel:
    """The requested level if supported, else the nearest supported above it, else the nearest below."""
    supported = supported_levels(model)
    if requested in supported:
        return requested
    index = THINKING_LEVELS.index(requested)
    for level in THINKING_LEVELS[index + 1 :]:
        if level in supported:
            return level
    for level in reversed(THINKING_LEVELS[:index]):
        if level in supported:
            return level
    return supported[0]


def mapped_value(model: Model, level: ThinkingLevel) -> str | None:
    """The provider value the model's ``thinkingLevelMap`` sets for a level, if it sets a string."""
    value = (model.thinking_level_map or {}).get(level)
    return value if isinstance(value, str) else None


def budget_for(level: ThinkingLevel, overrides: Mapping[str, int] | None = None) -> int:
    key = "high" if level in ("xhigh", "max") else level
    budgets = {**DEFAULT_BUDGETS, **(overrides or {})}
    return int(budgets.get(key, DEFAULT_BUDGETS["high"]))
