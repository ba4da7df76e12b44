"""Checks for ``models.json``: comment stripping and a schema validator that lists every problem."""

from __future__ import annotations

import re
from typing import Any

from piwork.core.jscompat import json_loads_js

_PROVIDER_KEYS = ("baseUrl", "headers", "compat", "modelOverrides", "models", "apiKey")
_STRING_FIELDS = ("name", "baseUrl", "api", "apiKey")
_COST_FIELDS = ("input", "output", "cacheRead", "cacheWrite")
THINKING_LEVEL_NAMES = ("off", "minimal", "low", "medium", "high", "xhigh", "max")
# compat flags Pi 1.6 declares as true/false (other compat keys are free-form and kept as given)
BOOLEAN_COMPAT_KEYS = frozenset(
    {
        "allowEmptySignature", "forceAdaptiveThinking", "requiresAssistantAfterToolResult",
        "requiresNonNullAssistantContent", "requiresReasoningContentOnAssistantMessages",
        "requiresThinkingAsText", "requiresToolResultName", "requiresToolsWithToolHistory",
        "sendImageOptInHeader", "sendSessionAffinityHeaders", "supportsAdditionalTools",
        "supportsCacheControlOnTools", "supportsDeveloperRole", "supportsEagerToolInputStreaming",
        "supportsExplicitPromptCacheMode", "supportsFinishReason", "supportsLongCacheRetention",
        "supportsMaxOutputTokens", "supportsMessageThreads", "supportsMidConvoEffort",
        "supportsMidConvoSystemMessages", "supportsMidConvoToolAdditions", "supportsMidConvoToolChanges",
        "supportsOpenAIGrammarTools", "supportsReasoningEffort", "supportsStore", "supportsStrictMode",
        "supportsStrictTools", "supportsTemperature", "supportsThinkingTokenBudget", "supportsToolSearch",
        "supportsUsageInStreaming", "zaiToolStream",
    }
)  # fmt: skip


# A string (kept as it is), a line comment, or a block comment (possibly unterminated), found in one
# left-to-right scan: comment markers inside strings are never seen as comments.
_STRING_OR_COMMENT = re.compile(r'"(?:[^"\\]|\\.)*"?|//[^\n]*|/\*(?:.|\n)*?(?:\*/|\Z)', re.DOTALL)


def _without_comment(match: re.Match[str]) -> str:
    found = match.group()
    if found.startswith('"'):
        return found
    return "\n" * found.count("\n") if found.startswith("/*") else ""


def loads_jsonc(text: str) -> Any:
    """``JSON.parse`` of a text that may hold comments: most files have none and are parsed as they are;
    only one that does not parse is stripped of its comments first."""
    try:
        return json_loads_js(text)
    except ValueError:
        return json_loads_js(strip_json_comments(text))


def strip_json_comments(text: str) -> str:
    """Remove ``//`` and ``/* */`` comments outside strings (line breaks are kept for error positions).
    Linear in the text (a regular-expression scan), for files of many thousands of models."""
    if "/" not in text:
        return text
    return _STRING_OR_COMMENT.sub(_without_comment, text)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _check_compat(where: str, compat: Any, errors: list[str]) -> None:
    if not isinstance(compat, dict):
        return
    for key in sorted(BOOLEAN_COMPAT_KEYS & compat.keys()):
        if not isinstance(compat[key], bool):
            errors.append(f"{where}.compat.{key}: must be true or false")


def _check_model(where: str, model: Any, errors: list[str], *, needs_id: bool) -> None:
    if not isinstance(model, dict):
        errors.append(f"{where}: must be an object")
        return
    if needs_id and (not isinstance(model.get("id"), str) or not model.get("id")):
        errors.append(f"{where}.id: must be a non-empty string")
    for key in ("name", "api", "baseUrl"):
        if key in model and not isinstance(model[key], str):
            errors.append(f"{where}.{key}: must be a string")
    if "reasoning" in model and not isinstance(model["reasoning"], bool):
        errors.append(f"{where}.reasoning: must be true or false")
    if "input" in model and (
        not isinstance(model["input"], list) or any(v not in ("text", "image") for v in model["input"])
    ):
        errors.append(f'{where}.input: must be a list of "text" and "image"')
    for key in ("contextWindow", "maxTokens"):
        if key in model and (not _is_number(model[key]) or model[key] <= 0):
            errors.append(f"{where}.{key}: must be a positive number")
    cost = model.get("cost")
    if cost is not None:
        if not isinstance(cost, dict):
            errors.append(f"{where}.cost: must be an object")
        else:
            # a new model's cost names every rate; an override may change only some
            missing = [key for key in _COST_FIELDS if key not in cost] if needs_id else []
            if missing:
                errors.append(f"{where}.cost: must give {', '.join(missing)} too (all four rates)")
            for key, value in cost.items():
                if key == "tiers":
                    if not isinstance(value, list) or not all(isinstance(t, dict) for t in value):
                        errors.append(f"{where}.cost.tiers: must be a list of objects")
                elif not _is_number(value):
                    errors.append(f"{where}.cost.{key}: must be a number")
    for key in ("compat", "headers", "samplingParams", "thinkingLevelMap", "inputLimits", "promptCache"):
        if key in model and not isinstance(model[key], dict):
            errors.append(f"{where}.{key}: must be an object")
    _check_compat(where, model.get("compat"), errors)
    by_level = model.get("samplingParamsByThinkingLevel")
    if by_level is not None:
        if not isinstance(by_level, dict):
            errors.append(f"{where}.samplingParamsByThinkingLevel: must be an object")
        else:
            for level, params in by_level.items():
                if level not in THINKING_LEVEL_NAMES:
                    errors.append(f"{where}.samplingParamsByThinkingLevel.{level}: not a thinking level")
                elif not isinstance(params, dict):
                    errors.append(f"{where}.samplingParamsByThinkingLevel.{level}: must be an object")


def validate_models_config(data: Any) -> list[str]:
    """Every schema problem, as ``path: message`` lines; empty when the file is usable."""
    if not isinstance(data, dict):
        return ["(root): must be an object"]
    providers = data.get("providers")
    if not isinstance(providers, dict):
        return ["providers: must be an object"]
    errors: list[str] = []
    for provider_id, provider in providers.items():
        where = f"providers.{provider_id}"
        if not isinstance(provider, dict):
            errors.append(f"{where}: must be an object")
            continue
        if not any(key in provider for key in _PROVIDER_KEYS):
            errors.append(f"{where}: set at least one of {', '.join(_PROVIDER_KEYS)}")
        for key in _STRING_FIELDS:
            if key in provider and not isinstance(provider[key], str):
                errors.append(f"{where}.{key}: must be a string")
        if "authHeader" in provider and not isinstance(provider["authHeader"], bool):
            errors.append(f"{where}.authHeader: must be true or false")
        for key in ("headers", "compat"):
            if key in provider and not isinstance(provider[key], dict):
                errors.append(f"{where}.{key}: must be an object")
        _check_compat(where, provider.get("compat"), errors)
        headers = provider.get("headers")
        if isinstance(headers, dict) and any(not isinstance(v, str) for v in headers.values()):
            errors.append(f"{where}.headers: values must be strings")
        models = provider.get("models")
        if models is not None:
            if not isinstance(models, list):
                errors.append(f"{where}.models: must be a list")
            else:
                for index, model in enumerate(models):
                    _check_model(f"{where}.models[{index}]", model, errors, needs_id=True)
        overrides = provider.get("modelOverrides")
        if overrides is not None:
            if not isinstance(overrides, dict):
                errors.append(f"{where}.modelOverrides: must be an object")
            else:
                for model_id, override in overrides.items():
                    _check_model(f"{where}.modelOverrides.{model_id}", override, errors, needs_id=False)
    return errors
