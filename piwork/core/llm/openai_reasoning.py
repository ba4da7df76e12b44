"""Reasoning controls in Chat Completions requests, by the endpoint's ``thinkingFormat``.

OpenAI itself takes ``reasoning_effort``; OpenRouter a ``reasoning`` object; local and hosted
open-model servers each have their own switch (``enable_thinking``, ``chat_template_kwargs``,
``thinking: {type}`` ...). A top-level budget field (``thinkingTokenBudgetField``) can cap reasoning
tokens on servers where reasoning and answer share ``max_tokens``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from piwork.core.llm.thinking import MIN_ANSWER_TOKENS, budget_for, resolve_level
from piwork.core.llm.types import Model, StreamOptions, ThinkingLevel

_MISSING = object()


def reasoning_fields(
    model: Model, options: StreamOptions, compat: Mapping[str, Any], max_tokens: int
) -> dict[str, Any]:
    """Body fields that switch reasoning on or off at the requested (supported) level."""
    if not model.reasoning:
        return {}
    level = resolve_level(model, options.thinking_level)
    mapping = model.thinking_level_map or {}
    effort: str | None = None
    if level != "off":
        mapped = mapping.get(level, level)
        effort = mapped if isinstance(mapped, str) else None
    off: Any = mapping.get("off", _MISSING)  # None: "off" cannot be expressed; _MISSING: the default
    on = level != "off"
    with_effort = bool(compat.get("supportsReasoningEffort")) and effort is not None
    fields: dict[str, Any] = {}
    style = compat.get("thinkingFormat")
    if style == "openrouter":
        if on:
            fields["reasoning"] = {"effort": effort}
        elif off is not None:
            fields["reasoning"] = {"effort": "none" if off is _MISSING else off}
    elif style in ("deepseek", "zai"):
        if on:
            fields["thinking"] = (
                {"type": "enabled", "clear_thinking": False} if style == "zai" else {"type": "enabled"}
            )
        elif off is not None or style == "zai":
            fields["thinking"] = {"type": "disabled"}
        if with_effort:
            fields["reasoning_effort"] = effort
    elif style == "qwen":
        fields["enable_thinking"] = on
        if with_effort:
            fields["reasoning_effort"] = effort
    elif style == "qwen-chat-template":
        fields["chat_template_kwargs"] = {"enable_thinking": on, "preserve_thinking": True}
    elif style == "chat-template":
        kwargs = _template_values(
            compat.get("chatTemplateKwargs") or {}, on, effort, off, _budget(level, options, max_tokens)
        )
        if kwargs:
            fields["chat_template_kwargs"] = kwargs
    elif style == "together":
        fields["reasoning"] = {"enabled": on}
        if with_effort:
            fields["reasoning_effort"] = effort
    elif style == "string-thinking":
        if on:
            fields["thinking"] = effort
        elif off is not None:
            fields["thinking"] = "none" if off is _MISSING else off
    elif compat.get("supportsReasoningEffort"):  # "openai" and any unnamed format
        if on and effort is not None:
            fields["reasoning_effort"] = effort
        elif not on and isinstance(off, str):
            fields["reasoning_effort"] = off
    budget_field = compat.get("thinkingTokenBudgetField")
    budget = _budget(level, options, max_tokens)
    if budget_field and budget is not None:
        fields[str(budget_field)] = budget
    return fields


def _budget(level: ThinkingLevel, options: StreamOptions, max_tokens: int) -> int | None:
    """The level's token budget, leaving room for an answer; None when thinking is off or no room is left."""
    if level == "off":
        return None
    budget = min(budget_for(level, options.thinking_budgets), max(0, max_tokens - MIN_ANSWER_TOKENS))
    return budget if budget > 0 else None


def _template_values(
    template: Mapping[str, Any], on: bool, effort: str | None, off: Any, budget: int | None
) -> dict[str, Any]:
    """``chatTemplateKwargs`` with ``{"$var": "thinking.enabled|effort|budget"}`` placeholders filled in."""
    values: dict[str, Any] = {}
    for key, value in template.items():
        if not isinstance(value, dict):
            values[key] = value
            continue
        if not on and value.get("omitWhenOff"):
            continue
        variable = value.get("$var")
        if variable == "thinking.enabled":
            values[key] = on
        elif variable == "thinking.budget":
            if budget is not None:
                values[key] = budget
        else:
            chosen = effort if on else (off if isinstance(off, str) else None)
            if chosen is not None:
                values[key] = chosen
    return values
