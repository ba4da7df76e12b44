"""Built-in models (Pi's model JSON shape): the Anthropic and OpenAI models Pi 1.6 ships, with its
windows, prices (USD per million tokens), thinking-level maps and compatibility flags.

OpenAI models use Chat Completions at ``https://api.openai.com/v1`` (Pi uses the Responses API there).
"""

from __future__ import annotations

from typing import Any

ANTHROPIC_URL = "https://api.anthropic.com"
OPENAI_URL = "https://api.openai.com/v1"

# Thinking-level maps and compatibility flags shared by several models (as Pi 1.6 ships them).
_LEVELS_1: dict[str, Any] = {"off": None, "xhigh": "xhigh", "max": "max"}
_COMPAT_1: dict[str, Any] = {
    "forceAdaptiveThinking": True,
    "supportsMidConvoSystemMessages": True,
    "supportsMidConvoToolChanges": True,
    "supportsStrictTools": True,
    "allowedFallbackModels": [
        {
            "provider": "anthropic",
            "model": "claude-opus-4-8",
            "cost": {"input": 5, "output": 25, "cacheRead": 0.5, "cacheWrite": 6.25},
        },
        {
            "provider": "anthropic",
            "model": "claude-opus-5",
            "cost": {"input": 5, "output": 25, "cacheRead": 0.5, "cacheWrite": 6.25},
        },
    ],
}
_COMPAT_2: dict[str, Any] = {
    "forceAdaptiveThinking": True,
    "supportsMidConvoEffort": True,
    "supportsMidConvoSystemMessages": True,
    "supportsMidConvoToolChanges": True,
    "supportsStrictTools": True,
}
_COMPAT_3: dict[str, Any] = {
    "forceAdaptiveThinking": True,
    "supportsMidConvoEffort": True,
    "supportsMidConvoSystemMessages": True,
    "supportsMidConvoToolChanges": True,
    "supportsStrictTools": True,
    "allowedFallbackModels": [
        {
            "provider": "anthropic",
            "model": "claude-opus-5",
            "cost": {"input": 5, "output": 25, "cacheRead": 0.5, "cacheWrite": 6.25},
        }
    ],
}
_COMPAT_4: dict[str, Any] = {"supportsStrictTools": True}
_LEVELS_2: dict[str, Any] = {
    "minimal": None,
    "low": "low",
    "medium": "medium",
    "high": "high",
    "xhigh": "xhigh",
    "max": "max",
}
_COMPAT_5: dict[str, Any] = {
    "forceAdaptiveThinking": True,
    "supportsTemperature": False,
    "supportsMidConvoEffort": True,
    "supportsMidConvoSystemMessages": True,
    "supportsMidConvoToolChanges": True,
    "supportsStrictTools": True,
}
_LEVELS_3: dict[str, Any] = {"max": "max"}
_COMPAT_6: dict[str, Any] = {"forceAdaptiveThinking": True, "supportsStrictTools": True}
_LEVELS_4: dict[str, Any] = {"xhigh": "xhigh", "max": "max"}
_COMPAT_7: dict[str, Any] = {
    "forceAdaptiveThinking": True,
    "supportsTemperature": False,
    "supportsStrictTools": True,
}
_COMPAT_8: dict[str, Any] = {
    "forceAdaptiveThinking": True,
    "supportsTemperature": False,
    "supportsMidConvoSystemMessages": True,
    "supportsMidConvoToolChanges": True,
    "supportsStrictTools": True,
}
_LEVELS_5: dict[str, Any] = {
    "off": None,
    "minimal": None,
    "low": "low",
    "medium": "medium",
    "high": "high",
    "xhigh": "xhigh",
    "max": "max",
}
_COMPAT_9: dict[str, Any] = {"supportsStrictMode": True}
_LEVELS_6: dict[str, Any] = {
    "off": None,
    "minimal": "minimal",
    "low": "low",
    "medium": "medium",
    "high": "high",
    "xhigh": None,
    "max": None,
}
_COMPAT_10: dict[str, Any] = {"supportsStrictMode": True, "supportsOpenAIGrammarTools": True}
_LEVELS_7: dict[str, Any] = {"off": None}
_LEVELS_8: dict[str, Any] = {
    "off": None,
    "minimal": None,
    "low": None,
    "medium": None,
    "high": "high",
    "xhigh": None,
    "max": None,
}
_LEVELS_9: dict[str, Any] = {
    "off": "none",
    "minimal": None,
    "low": "low",
    "medium": "medium",
    "high": "high",
    "xhigh": None,
    "max": None,
}
_LEVELS_10: dict[str, Any] = {
    "off": "none",
    "minimal": None,
    "low": "low",
    "medium": "medium",
    "high": "high",
    "xhigh": "xhigh",
    "max": None,
}
_LEVELS_11: dict[str, Any] = {
    "off": None,
    "minimal": None,
    "low": None,
    "medium": "medium",
    "high": "high",
    "xhigh": "xhigh",
    "max": None,
}
_LEVELS_12: dict[str, Any] = {
    "off": None,
    "minimal": None,
    "low": "low",
    "medium": "medium",
    "high": "high",
    "xhigh": "xhigh",
    "max": None,
}
_COMPAT_11: dict[str, Any] = {
    "supportsStrictMode": True,
    "supportsOpenAIGrammarTools": True,
    "supportsMidConvoSystemMessages": True,
}
_COMPAT_12: dict[str, Any] = {
    "supportsStrictMode": True,
    "supportsOpenAIGrammarTools": True,
    "supportsExplicitPromptCacheMode": True,
}
_LEVELS_13: dict[str, Any] = {
    "off": "none",
    "minimal": None,
    "low": "low",
    "medium": "medium",
    "high": "high",
    "xhigh": "xhigh",
    "max": "max",
}
_COMPAT_13: dict[str, Any] = {
    "supportsStrictMode": True,
    "supportsOpenAIGrammarTools": True,
    "supportsAdditionalTools": True,
    "supportsToolSearch": True,
    "supportsMidConvoSystemMessages": True,
    "supportsExplicitPromptCacheMode": True,
}
_COMPAT_14: dict[str, Any] = {
    "supportsStrictMode": True,
    "supportsOpenAIGrammarTools": True,
    "supportsAdditionalTools": True,
    "supportsToolSearch": True,
    "supportsMidConvoSystemMessages": True,
    "supportsExplicitPromptCacheMode": True,
    "supportsMidConvoEffort": True,
}
_COMPAT_15: dict[str, Any] = {"supportsStrictMode": True, "supportsExplicitPromptCacheMode": True}
_LEVELS_14: dict[str, Any] = {
    "off": None,
    "minimal": None,
    "low": "low",
    "medium": "medium",
    "high": "high",
    "xhigh": None,
    "max": None,
}


def _model(
    model_id: str,
    name: str,
    api: str,
    provider: str,
    base_url: str,
    cost: tuple[float, float, float, float],
    *,
    context: int,
    max_tokens: int,
    reasoning: bool,
    input: tuple[str, ...],
    levels: dict[str, Any] | None,
    compat: dict[str, Any] | None,
    tiers: list[dict[str, Any]] | None,
) -> dict[str, Any]:
    model: dict[str, Any] = {
        "id": model_id, "name": name, "api": api, "provider": provider, "baseUrl": base_url,
        "reasoning": reasoning, "input": list(input), "contextWindow": context, "maxTokens": max_tokens,
        "cost": {"input": cost[0], "output": cost[1], "cacheRead": cost[2], "cacheWrite": cost[3]},
    }  # fmt: skip
    if tiers:
        model["cost"]["tiers"] = tiers
    if levels:
        model["thinkingLevelMap"] = dict(levels)
    if compat:
        model["compat"] = dict(compat)
    return model


def _claude(
    model_id: str,
    name: str,
    cost: tuple[float, float, float, float],
    *,
    context: int,
    max_tokens: int,
    reasoning: bool = True,
    input: tuple[str, ...] = ("text", "image"),
    levels: dict[str, Any] | None = None,
    compat: dict[str, Any] | None = None,
    tiers: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    return _model(
        model_id, name, "anthropic-messages", "anthropic", ANTHROPIC_URL, cost, context=context,
        max_tokens=max_tokens, reasoning=reasoning, input=input, levels=levels, compat=compat, tiers=tiers,
    )  # fmt: skip


def _gpt(
    model_id: str,
    name: str,
    cost: tuple[float, float, float, float],
    *,
    context: int,
    max_tokens: int,
    reasoning: bool = True,
    input: tuple[str, ...] = ("text", "image"),
    levels: dict[str, Any] | None = None,
    compat: dict[str, Any] | None = None,
    tiers: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    return _model(
        model_id, name, "openai-completions", "openai", OPENAI_URL, cost, context=context,
        max_tokens=max_tokens, reasoning=reasoning, input=input, levels=levels, compat=compat, tiers=tiers,
    )  # fmt: skip


BUILTIN_MODELS: list[dict[str, Any]] = [
    _claude("claude-fable-5", "Claude Fable 5", (10, 50, 1, 12.5), context=1000000, max_tokens=128000, levels=_LEVELS_1, compat=_COMPAT_1),
    _claude("claude-fable-5-1", "Claude Fable 5.1", (10, 50, 0.25, 12.5), context=1000000, max_tokens=128000, levels=_LEVELS_1, compat=_COMPAT_2),
    _claude("claude-fable-5-2", "Claude Fable 5.2", (8, 40, 0.2, 10), context=1000000, max_tokens=128000, levels=_LEVELS_1, compat=_COMPAT_3),
    _claude("claude-haiku-4-5", "Claude Haiku 4.5 (latest)", (1, 5, 0.1, 1.25), context=200000, max_tokens=64000, compat=_COMPAT_4),
    _claude("claude-haiku-4-5-20251001", "Claude Haiku 4.5", (1, 5, 0.1, 1.25), context=200000, max_tokens=64000, compat=_COMPAT_4),
    _claude("claude-haiku-5-5", "Claude Haiku 5.5", (0.1, 0.5, 0.01, 0.125), context=1000000, max_tokens=128000, tiers=[{"inputTokensAbove": 100000, "input": 0.5, "output": 2.5, "cacheRead": 0.05, "cacheWrite": 0.625}], levels=_LEVELS_2, compat=_COMPAT_5),
    _claude("claude-opus-4-5", "Claude Opus 4.5 (latest)", (5, 25, 0.5, 6.25), context=200000, max_tokens=64000, compat=_COMPAT_4),
    _claude("claude-opus-4-5-20251101", "Claude Opus 4.5", (5, 25, 0.5, 6.25), context=200000, max_tokens=64000, compat=_COMPAT_4),
    _claude("claude-opus-4-6", "Claude Opus 4.6", (5, 25, 0.5, 6.25), context=1000000, max_tokens=128000, levels=_LEVELS_3, compat=_COMPAT_6),
    _claude("claude-opus-4-7", "Claude Opus 4.7", (5, 25, 0.5, 6.25), context=1000000, max_tokens=128000, levels=_LEVELS_4, compat=_COMPAT_7),
    _claude("claude-opus-4-8", "Claude Opus 4.8", (5, 25, 0.5, 6.25), context=1000000, max_tokens=128000, levels=_LEVELS_4, compat=_COMPAT_8),
    _claude("claude-opus-5", "Claude Opus 5", (5, 25, 0.5, 6.25), context=1000000, max_tokens=128000, levels=_LEVELS_4, compat=_COMPAT_5),
    _claude("claude-opus-5-5", "Claude Opus 5.5", (4, 20, 0.2, 5), context=1000000, max_tokens=128000, levels=_LEVELS_5, compat=_COMPAT_5),
    _claude("claude-sonnet-4-5", "Claude Sonnet 4.5 (latest)", (3, 15, 0.3, 3.75), context=200000, max_tokens=64000, compat=_COMPAT_4),
    _claude("claude-sonnet-4-5-20250929", "Claude Sonnet 4.5", (3, 15, 0.3, 3.75), context=200000, max_tokens=64000, compat=_COMPAT_4),
    _claude("claude-sonnet-4-6", "Claude Sonnet 4.6", (3, 15, 0.3, 3.75), context=1000000, max_tokens=128000, levels=_LEVELS_3, compat=_COMPAT_6),
    _claude("claude-sonnet-5", "Claude Sonnet 5", (2, 10, 0.2, 2.5), context=1000000, max_tokens=128000, levels=_LEVELS_4, compat=_COMPAT_7),
    _claude("claude-sonnet-5-5", "Claude Sonnet 5.5", (2, 10, 0.1, 2.5), context=1000000, max_tokens=128000, levels=_LEVELS_5, compat=_COMPAT_5),
    _gpt("chat-latest", "Chat Latest", (5, 30, 0.5, 0), context=400000, max_tokens=128000, compat=_COMPAT_9),
    _gpt("gpt-4", "GPT-4", (30, 60, 0, 0), context=8192, max_tokens=8192, reasoning=False, input=("text",), compat=_COMPAT_9),
    _gpt("gpt-4-turbo", "GPT-4 Turbo", (10, 30, 0, 0), context=128000, max_tokens=4096, reasoning=False, compat=_COMPAT_9),
    _gpt("gpt-4.1", "GPT-4.1", (2, 8, 0.5, 0), context=1047576, max_tokens=32768, reasoning=False, compat=_COMPAT_9),
    _gpt("gpt-4.1-mini", "GPT-4.1 mini", (0.4, 1.6, 0.1, 0), context=1047576, max_tokens=32768, reasoning=False, compat=_COMPAT_9),
    _gpt("gpt-4.1-nano", "GPT-4.1 nano", (0.1, 0.4, 0.025, 0), context=1047576, max_tokens=32768, reasoning=False, compat=_COMPAT_9),
    _gpt("gpt-4o", "GPT-4o", (2.5, 10, 1.25, 0), context=128000, max_tokens=16384, reasoning=False, compat=_COMPAT_9),
    _gpt("gpt-4o-2024-05-13", "GPT-4o (2024-05-13)", (5, 15, 0, 0), context=128000, max_tokens=4096, reasoning=False, compat=_COMPAT_9),
    _gpt("gpt-4o-2024-08-06", "GPT-4o (2024-08-06)", (2.5, 10, 1.25, 0), context=128000, max_tokens=16384, reasoning=False, compat=_COMPAT_9),
    _gpt("gpt-4o-2024-11-20", "GPT-4o (2024-11-20)", (2.5, 10, 1.25, 0), context=128000, max_tokens=16384, reasoning=False, compat=_COMPAT_9),
    _gpt("gpt-4o-mini", "GPT-4o mini", (0.15, 0.6, 0.075, 0), context=128000, max_tokens=16384, reasoning=False, compat=_COMPAT_9),
    _gpt("gpt-5", "GPT-5", (1.25, 10, 0.125, 0), context=400000, max_tokens=128000, levels=_LEVELS_6, compat=_COMPAT_10),
    _gpt("gpt-5-chat-latest", "GPT-5 Chat Latest", (1.25, 10, 0.125, 0), context=128000, max_tokens=16384, reasoning=False, levels=_LEVELS_7, compat=_COMPAT_10),
    _gpt("gpt-5-mini", "GPT-5 Mini", (0.25, 2, 0.025, 0), context=400000, max_tokens=128000, levels=_LEVELS_6, compat=_COMPAT_10),
    _gpt("gpt-5-nano", "GPT-5 Nano", (0.05, 0.4, 0.005, 0), context=400000, max_tokens=128000, levels=_LEVELS_6, compat=_COMPAT_10),
    _gpt("gpt-5-pro", "GPT-5 Pro", (15, 120, 0, 0), context=400000, max_tokens=128000, levels=_LEVELS_8, compat=_COMPAT_10),
    _gpt("gpt-5.1", "GPT-5.1", (1.25, 10, 0.125, 0), context=400000, max_tokens=128000, levels=_LEVELS_9, compat=_COMPAT_10),
    _gpt("gpt-5.2", "GPT-5.2", (1.75, 14, 0.175, 0), context=400000, max_tokens=128000, levels=_LEVELS_10, compat=_COMPAT_10),
    _gpt("gpt-5.2-pro", "GPT-5.2 Pro", (21, 168, 0, 0), context=400000, max_tokens=128000, levels=_LEVELS_11, compat=_COMPAT_10),
    _gpt("gpt-5.3-codex", "GPT-5.3 Codex", (1.75, 14, 0.175, 0), context=400000, max_tokens=128000, levels=_LEVELS_10, compat=_COMPAT_10),
    _gpt("gpt-5.3-codex-spark", "GPT-5.3 Codex Spark", (1.75, 14, 0.175, 0), context=128000, max_tokens=32000, levels=_LEVELS_12, compat=_COMPAT_10),
    _gpt("gpt-5.4", "GPT-5.4", (2.5, 15, 0.25, 0), context=272000, max_tokens=128000, tiers=[{"inputTokensAbove": 272000, "input": 5, "output": 22.5, "cacheRead": 0.5, "cacheWrite": 0}], levels=_LEVELS_10, compat=_COMPAT_11),
    _gpt("gpt-5.4-mini", "GPT-5.4 mini", (0.75, 4.5, 0.075, 0), context=400000, max_tokens=128000, levels=_LEVELS_10, compat=_COMPAT_11),
    _gpt("gpt-5.4-nano", "GPT-5.4 nano", (0.2, 1.25, 0.02, 0), context=400000, max_tokens=128000, levels=_LEVELS_10, compat=_COMPAT_10),
    _gpt("gpt-5.4-pro", "GPT-5.4 Pro", (30, 180, 0, 0), context=1050000, max_tokens=128000, tiers=[{"inputTokensAbove": 272000, "input": 60, "output": 270, "cacheRead": 0, "cacheWrite": 0}], levels=_LEVELS_11, compat=_COMPAT_11),
    _gpt("gpt-5.5", "GPT-5.5", (5, 30, 0.5, 0), context=272000, max_tokens=128000, tiers=[{"inputTokensAbove": 272000, "input": 10, "output": 45, "cacheRead": 1, "cacheWrite": 0}], levels=_LEVELS_10, compat=_COMPAT_11),
    _gpt("gpt-5.5-pro", "GPT-5.5 Pro", (30, 180, 0, 0), context=1050000, max_tokens=128000, tiers=[{"inputTokensAbove": 272000, "input": 60, "output": 270, "cacheRead": 0, "cacheWrite": 0}], levels=_LEVELS_11, compat=_COMPAT_10),
    _gpt("gpt-5.6-cyber", "GPT-5.6 Cyber", (12.5, 75, 1.25, 15.625), context=400000, max_tokens=128000, levels=_LEVELS_5, compat=_COMPAT_12),
    _gpt("gpt-5.6-luna", "GPT-5.6 Luna", (0.2, 1.2, 0.02, 0.25), context=272000, max_tokens=128000, tiers=[{"inputTokensAbove": 272000, "input": 0.4, "output": 1.8, "cacheRead": 0.04, "cacheWrite": 0.5}], levels=_LEVELS_13, compat=_COMPAT_13),
    _gpt("gpt-5.6-sol", "GPT-5.6 Sol", (4, 20, 0.4, 5), context=272000, max_tokens=128000, tiers=[{"inputTokensAbove": 272000, "input": 8, "output": 30, "cacheRead": 0.8, "cacheWrite": 10}], levels=_LEVELS_13, compat=_COMPAT_13),
    _gpt("gpt-5.6-terra", "GPT-5.6 Terra", (2, 12, 0.2, 2.5), context=272000, max_tokens=128000, tiers=[{"inputTokensAbove": 272000, "input": 4, "output": 18, "cacheRead": 0.4, "cacheWrite": 5}], levels=_LEVELS_13, compat=_COMPAT_13),
    _gpt("gpt-6-astra", "GPT-6 Astra", (10, 50, 1, 12.5), context=272000, max_tokens=128000, tiers=[{"inputTokensAbove": 272000, "input": 20, "output": 75, "cacheRead": 2, "cacheWrite": 25}], levels=_LEVELS_5, compat=_COMPAT_14),
    _gpt("gpt-6-cyber", "GPT-6 Cyber", (20, 100, 2, 25), context=1050000, max_tokens=128000, levels=_LEVELS_5, compat=_COMPAT_12),
    _gpt("gpt-6-luna", "GPT-6 Luna", (0.1, 0.5, 0.01, 0.125), context=272000, max_tokens=128000, tiers=[{"inputTokensAbove": 272000, "input": 0.2, "output": 0.75, "cacheRead": 0.02, "cacheWrite": 0.25}], levels=_LEVELS_13, compat=_COMPAT_14),
    _gpt("gpt-6-sol", "GPT-6 Sol", (2, 10, 0.2, 2.5), context=272000, max_tokens=128000, tiers=[{"inputTokensAbove": 272000, "input": 4, "output": 15, "cacheRead": 0.4, "cacheWrite": 5}], levels=_LEVELS_13, compat=_COMPAT_14),
    _gpt("gpt-6.1-sol", "GPT-6.1 Sol", (2, 10, 0.1, 2.5), context=272000, max_tokens=128000, tiers=[{"inputTokensAbove": 272000, "input": 4, "output": 15, "cacheRead": 0.2, "cacheWrite": 5}], levels=_LEVELS_5, compat=_COMPAT_14),
    _gpt("gpt-6.1-terra", "GPT-6.1 Terra", (1, 5, 0.05, 1.25), context=272000, max_tokens=128000, tiers=[{"inputTokensAbove": 272000, "input": 2, "output": 7.5, "cacheRead": 0.1, "cacheWrite": 2.5}], levels=_LEVELS_13, compat=_COMPAT_14),
    _gpt("gpt-6.2-astra", "GPT-6.2 Astra", (8, 40, 0.4, 10), context=272000, max_tokens=128000, tiers=[{"inputTokensAbove": 272000, "input": 16, "output": 60, "cacheRead": 0.8, "cacheWrite": 20}], levels=_LEVELS_5, compat=_COMPAT_14),
    _gpt("gpt-6.2-sol", "GPT-6.2 Sol", (2, 10, 0.1, 2.5), context=272000, max_tokens=128000, tiers=[{"inputTokensAbove": 272000, "input": 4, "output": 15, "cacheRead": 0.2, "cacheWrite": 5}], levels=_LEVELS_5, compat=_COMPAT_14),
    _gpt("gpt-daybreak-blue-latest", "Daybreak Blue", (4, 20, 0.4, 5), context=1050000, max_tokens=128000, tiers=[{"inputTokensAbove": 272000, "input": 8, "output": 30, "cacheRead": 0.8, "cacheWrite": 10}], levels=_LEVELS_13, compat=_COMPAT_15),
    _gpt("gpt-daybreak-red-latest", "Daybreak Red", (12.5, 75, 1.25, 15.625), context=400000, max_tokens=128000, levels=_LEVELS_13, compat=_COMPAT_15),
    _gpt("o1", "o1", (15, 60, 7.5, 0), context=200000, max_tokens=100000, levels=_LEVELS_14, compat=_COMPAT_9),
    _gpt("o1-pro", "o1-pro", (150, 600, 0, 0), context=200000, max_tokens=100000, levels=_LEVELS_14, compat=_COMPAT_9),
    _gpt("o3", "o3", (2, 8, 0.5, 0), context=200000, max_tokens=100000, levels=_LEVELS_14, compat=_COMPAT_9),
    _gpt("o3-mini", "o3-mini", (1.1, 4.4, 0.55, 0), context=200000, max_tokens=100000, input=("text",), levels=_LEVELS_14, compat=_COMPAT_9),
    _gpt("o3-pro", "o3-pro", (20, 80, 0, 0), context=200000, max_tokens=100000, levels=_LEVELS_14, compat=_COMPAT_9),
    _gpt("o4-mini", "o4-mini", (1.1, 4.4, 0.275, 0), context=200000, max_tokens=100000, levels=_LEVELS_14, compat=_COMPAT_9),
]  # fmt: skip

# Environment variables holding API keys, per provider (first non-empty wins).
PROVIDER_ENV_KEYS: dict[str, tuple[str, ...]] = {
    "anthropic": ("ANTHROPIC_API_KEY",),
    "openai": ("OPENAI_API_KEY",),
    "openrouter": ("OPENROUTER_API_KEY",),
    "groq": ("GROQ_API_KEY",),
    "xai": ("XAI_API_KEY",),
    "deepseek": ("DEEPSEEK_API_KEY",),
    "mistral": ("MISTRAL_API_KEY",),
    "together": ("TOGETHER_API_KEY",),
    "fireworks": ("FIREWORKS_API_KEY",),
    "cerebras": ("CEREBRAS_API_KEY",),
    "google": ("GEMINI_API_KEY",),
}
