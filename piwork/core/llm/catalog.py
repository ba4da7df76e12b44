"""Built-in models (Pi's model JSON shape). Prices are USD per million tokens.

OpenAI models use Chat Completions at ``https://api.openai.com/v1`` (Pi uses the Responses API there).
"""

from __future__ import annotations

from typing import Any

ANTHROPIC_URL = "https://api.anthropic.com"
OPENAI_URL = "https://api.openai.com/v1"

_ADAPTIVE = {"forceAdaptiveThinking": True}
_ADAPTIVE_NO_TEMPERATURE = {"forceAdaptiveThinking": True, "supportsTemperature": False}
_GPT5_LEVELS = {
    "off": "none",
    "minimal": None,
    "low": "low",
    "medium": "medium",
    "high": "high",
    "xhigh": "xhigh",
}
_GPT5_ORIGINAL_LEVELS = {"off": None, "minimal": "minimal", "low": "low", "medium": "medium", "high": "high"}
_O_SERIES_LEVELS = {"off": None, "minimal": None, "low": "low", "medium": "medium", "high": "high"}


def _claude(
    model_id: str,
    name: str,
    cost: tuple[float, float, float, float],
    *,
    context: int,
    max_tokens: int,
    compat: dict[str, Any] | None = None,
    levels: dict[str, str | None] | None = None,
    tiers: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    model: dict[str, Any] = {
        "id": model_id, "name": name, "api": "anthropic-messages", "provider": "anthropic", "baseUrl": ANTHROPIC_URL,
        "reasoning": True, "input": ["text", "image"], "contextWindow": context, "maxTokens": max_tokens,
        "cost": {"input": cost[0], "output": cost[1], "cacheRead": cost[2], "cacheWrite": cost[3]},
    }  # fmt: skip
    if tiers:
        model["cost"]["tiers"] = tiers
    if compat:
        model["compat"] = compat
    if levels:
        model["thinkingLevelMap"] = levels
    return model


def _gpt(
    model_id: str,
    name: str,
    cost: tuple[float, float, float],
    *,
    context: int,
    max_tokens: int,
    levels: dict[str, str | None] | None = None,
    tiers: list[dict[str, Any]] | None = None,
    images: bool = True,
) -> dict[str, Any]:
    model: dict[str, Any] = {
        "id": model_id, "name": name, "api": "openai-completions", "provider": "openai", "baseUrl": OPENAI_URL,
        "reasoning": levels is not None, "input": ["text", "image"] if images else ["text"],
        "contextWindow": context, "maxTokens": max_tokens,
        "cost": {"input": cost[0], "output": cost[1], "cacheRead": cost[2], "cacheWrite": 0},
    }  # fmt: skip
    if tiers:
        model["cost"]["tiers"] = tiers
    if levels is not None:
        model["thinkingLevelMap"] = levels
    return model


_SONNET_LONG = [{"inputTokensAbove": 200000, "input": 6, "output": 22.5, "cacheRead": 0.6, "cacheWrite": 7.5}]

BUILTIN_MODELS: list[dict[str, Any]] = [
    _claude("claude-opus-4-8", "Claude Opus 4.8", (5, 25, 0.5, 6.25), context=1000000, max_tokens=128000,
            compat=_ADAPTIVE_NO_TEMPERATURE, levels={"xhigh": "xhigh", "max": "max"}),
    _claude("claude-opus-4-7", "Claude Opus 4.7", (5, 25, 0.5, 6.25), context=1000000, max_tokens=128000,
            compat=_ADAPTIVE_NO_TEMPERATURE, levels={"xhigh": "xhigh", "max": "max"}),
    _claude("claude-sonnet-5", "Claude Sonnet 5", (2, 10, 0.2, 2.5), context=1000000, max_tokens=128000,
            compat=_ADAPTIVE, levels={"xhigh": "xhigh", "max": "max"}),
    _claude("claude-sonnet-4-6", "Claude Sonnet 4.6", (3, 15, 0.3, 3.75), context=1000000, max_tokens=128000,
            compat=_ADAPTIVE, levels={"max": "max"}),
    _claude("claude-opus-4-5", "Claude Opus 4.5", (5, 25, 0.5, 6.25), context=200000, max_tokens=64000),
    _claude("claude-sonnet-4-5", "Claude Sonnet 4.5", (3, 15, 0.3, 3.75), context=1000000, max_tokens=64000,
            tiers=_SONNET_LONG),
    _claude("claude-haiku-4-5", "Claude Haiku 4.5", (1, 5, 0.1, 1.25), context=200000, max_tokens=64000),
    _gpt("gpt-5.5", "GPT-5.5", (5, 30, 0.5), context=272000, max_tokens=128000, levels=_GPT5_LEVELS,
         tiers=[{"inputTokensAbove": 272000, "input": 10, "output": 45, "cacheRead": 1, "cacheWrite": 0}]),
    _gpt("gpt-5.4", "GPT-5.4", (2.5, 15, 0.25), context=272000, max_tokens=128000, levels=_GPT5_LEVELS,
         tiers=[{"inputTokensAbove": 272000, "input": 5, "output": 22.5, "cacheRead": 0.5, "cacheWrite": 0}]),
    _gpt("gpt-5.4-mini", "GPT-5.4 mini", (0.75, 4.5, 0.075), context=400000, max_tokens=128000, levels=_GPT5_LEVELS),
    _gpt("gpt-5.4-nano", "GPT-5.4 nano", (0.2, 1.25, 0.02), context=400000, max_tokens=128000, levels=_GPT5_LEVELS),
    _gpt("gpt-5", "GPT-5", (1.25, 10, 0.125), context=400000, max_tokens=128000, levels=_GPT5_ORIGINAL_LEVELS),
    _gpt("gpt-5-mini", "GPT-5 mini", (0.25, 2, 0.025), context=400000, max_tokens=128000, levels=_GPT5_ORIGINAL_LEVELS),
    _gpt("gpt-4.1", "GPT-4.1", (2, 8, 0.5), context=1047576, max_tokens=32768),
    _gpt("gpt-4.1-mini", "GPT-4.1 mini", (0.4, 1.6, 0.1), context=1047576, max_tokens=32768),
    _gpt("gpt-4o", "GPT-4o", (2.5, 10, 1.25), context=128000, max_tokens=16384),
    _gpt("gpt-4o-mini", "GPT-4o mini", (0.15, 0.6, 0.075), context=128000, max_tokens=16384),
    _gpt("o3", "o3", (2, 8, 0.5), context=200000, max_tokens=100000, levels=_O_SERIES_LEVELS),
    _gpt("o4-mini", "o4-mini", (1.1, 4.4, 0.275), context=200000, max_tokens=100000, levels=_O_SERIES_LEVELS),
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
