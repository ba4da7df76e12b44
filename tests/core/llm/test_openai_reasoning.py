"""Reasoning switches per thinkingFormat for OpenAI-compatible servers."""

from __future__ import annotations

from typing import Any

import pytest

from piwork.core.llm.openai_request import build_request
from piwork.core.llm.types import OPENAI_COMPLETIONS, LlmContext, Model, StreamOptions, ThinkingLevel

CTX = LlmContext("", [{"role": "user", "content": "x", "timestamp": 1}])
REASONING_KEYS = ("reasoning_effort", "reasoning", "thinking", "enable_thinking", "chat_template_kwargs",
                  "thinking_budget", "thinking_token_budget", "thinking_budget_tokens")  # fmt: skip


def fields(
    compat: dict[str, Any], level: ThinkingLevel, levels: dict[str, str | None] | None = None
) -> dict[str, Any]:
    model = Model("m", "m", OPENAI_COMPLETIONS, "local", "http://127.0.0.1:8000/v1", reasoning=True,
                  max_tokens=8192, compat=compat, thinking_level_map=levels)  # fmt: skip
    body = build_request(model, CTX, StreamOptions(thinking_level=level)).body
    return {k: body[k] for k in REASONING_KEYS if k in body}


@pytest.mark.parametrize(
    ("compat", "level", "expected"),
    [
        ({}, "high", {"reasoning_effort": "high"}),  # any other host: OpenAI's dialect, as Pi
        ({"supportsReasoningEffort": False}, "high", {}),
        ({"thinkingFormat": "openai"}, "low", {"reasoning_effort": "low"}),
        ({"thinkingFormat": "qwen", "supportsReasoningEffort": False}, "medium", {"enable_thinking": True}),
        ({"thinkingFormat": "qwen", "supportsReasoningEffort": True}, "off", {"enable_thinking": False}),
        ({"thinkingFormat": "qwen-chat-template"}, "low", {"chat_template_kwargs": {"enable_thinking": True, "preserve_thinking": True}}),
        ({"thinkingFormat": "deepseek"}, "off", {"thinking": {"type": "disabled"}}),
        ({"thinkingFormat": "deepseek", "supportsReasoningEffort": True}, "high", {"thinking": {"type": "enabled"}, "reasoning_effort": "high"}),
        ({"thinkingFormat": "zai", "supportsReasoningEffort": False}, "high", {"thinking": {"type": "enabled", "clear_thinking": False}}),
        ({"thinkingFormat": "together"}, "off", {"reasoning": {"enabled": False}}),
        ({"thinkingFormat": "string-thinking"}, "off", {"thinking": "none"}),
        ({"thinkingFormat": "openrouter"}, "medium", {"reasoning": {"effort": "medium"}}),
        ({"thinkingTokenBudgetField": "thinking_budget_tokens"}, "high", {"thinking_budget_tokens": 8192 - 1024, "reasoning_effort": "high"}),
        ({"supportsThinkingTokenBudget": True, "supportsReasoningEffort": False}, "minimal", {"thinking_token_budget": 1024}),
        ({"thinkingTokenBudgetField": "thinking_budget"}, "off", {}),
        ({"thinkingFormat": "chat-template",
          "chatTemplateKwargs": {"enable_thinking": {"$var": "thinking.enabled"}, "effort": {"$var": "thinking.effort"},
                                 "budget": {"$var": "thinking.budget", "omitWhenOff": True}, "fixed": 1}},
         "low", {"chat_template_kwargs": {"enable_thinking": True, "effort": "low", "budget": 2048, "fixed": 1}}),
        ({"thinkingFormat": "chat-template",
          "chatTemplateKwargs": {"enable_thinking": {"$var": "thinking.enabled"}, "effort": {"$var": "thinking.effort"},
                                 "budget": {"$var": "thinking.budget", "omitWhenOff": True}}},
         "off", {"chat_template_kwargs": {"enable_thinking": False}}),
    ],
)  # fmt: skip
def test_formats(compat: dict[str, Any], level: ThinkingLevel, expected: dict[str, Any]) -> None:
    assert fields(compat, level) == expected


def test_level_map_values_and_unexpressible_off() -> None:
    levels: dict[str, str | None] = {"off": None, "high": "max-effort"}
    assert fields({"thinkingFormat": "openrouter"}, "high", levels) == {"reasoning": {"effort": "max-effort"}}
    assert fields({"thinkingFormat": "string-thinking"}, "high", {"off": "disabled"}) == {"thinking": "high"}
    assert fields({"thinkingFormat": "string-thinking"}, "off", {"off": "disabled"}) == {
        "thinking": "disabled"
    }
    assert fields({"supportsReasoningEffort": True}, "off", {"off": "none"}) == {"reasoning_effort": "none"}
