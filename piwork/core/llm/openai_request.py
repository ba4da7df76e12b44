"""OpenAI Chat Completions (and compatible servers): compat detection and request building (spec §4)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from piwork import __version__
from piwork.core.jscompat import js_trim
from piwork.core.llm.estimate import clamp_max_tokens, estimate_context
from piwork.core.llm.normalize import normalize_messages, openai_tool_id, strip_surrogates
from piwork.core.llm.thinking import MIN_ANSWER_TOKENS, budget_for, resolve_level
from piwork.core.llm.transport import HttpRequest
from piwork.core.llm.types import LlmContext, Message, Model, StreamOptions

REASONING_FIELDS = ("reasoning_content", "reasoning", "reasoning_text")
EMPTY_TOOL_RESULT = "(no output)"
TOOL_IMAGES_INTRO = "Images returned by the tool:"
BRIDGE_AFTER_TOOL_RESULTS = "Tool results received."


def _host(base_url: str) -> str:
    return (urlsplit(base_url).hostname or "").lower()


def detect_compat(model: Model) -> dict[str, Any]:
    """Defaults by endpoint (OpenAI, OpenRouter, any other host); explicit ``model.compat`` wins."""
    host = _host(model.base_url)
    is_openai = host == "api.openai.com" or model.provider == "openai"
    is_openrouter = model.provider == "openrouter" or host.endswith("openrouter.ai")
    detected: dict[str, Any] = {
        "supportsStore": False,
        "supportsDeveloperRole": False,
        "supportsReasoningEffort": False,
        "supportsUsageInStreaming": True,
        "supportsFinishReason": True,
        "supportsStrictMode": True,
        "maxTokensField": "max_tokens",
        "requiresToolResultName": False,
        "requiresAssistantAfterToolResult": False,
        "requiresThinkingAsText": False,
        "thinkingFormat": None,
        "cacheControlFormat": None,
        "promptCacheKey": False,
    }
    if is_openai:
        detected.update(
            supportsStore=True,
            supportsDeveloperRole=True,
            supportsReasoningEffort=True,
            maxTokensField="max_completion_tokens",
            thinkingFormat="openai",
            promptCacheKey=host == "api.openai.com",  # proxies may reject the field
        )
    elif is_openrouter:
        vendor_model = model.id.startswith(("anthropic/", "openai/"))
        detected.update(
            supportsDeveloperRole=vendor_model,
            supportsReasoningEffort=True,
            maxTokensField="max_completion_tokens",
            thinkingFormat="openrouter",
            cacheControlFormat="anthropic" if model.id.startswith("anthropic/") else None,
        )
    merged = {**detected, **dict(model.compat)}
    if merged.get("thinkingFormat") is None and model.compat.get("supportsReasoningEffort"):
        merged["thinkingFormat"] = "openai"
    if merged.get("thinkingTokenBudgetField") is None and merged.get("supportsThinkingTokenBudget"):
        merged["thinkingTokenBudgetField"] = "thinking_token_budget"
    return merged


def _text_of(blocks: list[Any]) -> str:
    return "\n".join(b.get("text") or "" for b in blocks if isinstance(b, dict) and b.get("type") == "text")


def _image_part(block: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "type": "image_url",
        "image_url": {"url": f"data:{block.get('mimeType')};base64,{block.get('data')}"},
    }


def _user(message: Message) -> dict[str, Any] | None:
    content = message.get("content")
    if isinstance(content, str):
        return {"role": "user", "content": content} if content else None
    parts: list[dict[str, Any]] = []
    for block in content or []:
        if block.get("type") == "text":
            parts.append({"type": "text", "text": block.get("text") or ""})
        elif block.get("type") == "image":
            parts.append(_image_part(block))
    return {"role": "user", "content": parts} if parts else None


def _assistant(message: Message, compat: Mapping[str, Any]) -> dict[str, Any] | None:
    texts: list[str] = []
    reasoning: dict[str, list[str]] = {}
    calls: list[dict[str, Any]] = []
    for block in message.get("content") or []:
        kind = block.get("type")
        if kind == "text" and js_trim(block.get("text") or ""):
            texts.append(block["text"])
        elif kind == "thinking":
            signature = block.get("thinkingSignature")
            thinking = block.get("thinking") or ""
            if compat.get("requiresThinkingAsText") and js_trim(thinking):
                texts.insert(0, thinking)
            elif signature in REASONING_FIELDS:
                reasoning.setdefault(signature, []).append(thinking)
        elif kind == "toolCall":
            calls.append(
                {
                    "id": block.get("id"),
                    "type": "function",
                    "function": {"name": block.get("name"), "arguments": _json(block.get("arguments") or {})},
                }
            )
    if not texts and not calls:
        return None
    result: dict[str, Any] = {"role": "assistant", "content": "".join(texts) if texts else None}
    for field_name, parts in reasoning.items():
        result[field_name] = "\n".join(parts)
    if calls:
        result["tool_calls"] = calls
    return result


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def convert_messages(context: LlmContext, model: Model, compat: Mapping[str, Any]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    if context.system_prompt:
        system_role = "developer" if model.reasoning and compat.get("supportsDeveloperRole") else "system"
        out.append({"role": system_role, "content": context.system_prompt})
    pending_images: list[dict[str, Any]] = []
    after_tool_results = False

    def flush_images() -> None:
        if pending_images:
            out.append(
                {"role": "user", "content": [{"type": "text", "text": TOOL_IMAGES_INTRO}, *pending_images]}
            )
            pending_images.clear()

    strict_ids = model.provider == "openai"
    for message in normalize_messages(context.messages, model, lambda i: openai_tool_id(i, strict_ids)):
        role = message.get("role")
        if role != "toolResult":
            flush_images()
        if role == "user":
            converted = _user(message)
            if converted is None:
                continue
            if after_tool_results and compat.get("requiresAssistantAfterToolResult"):
                out.append({"role": "assistant", "content": BRIDGE_AFTER_TOOL_RESULTS})
            out.append(converted)
            after_tool_results = False
        elif role == "assistant":
            converted = _assistant(message, compat)
            if converted is not None:
                out.append(converted)
                after_tool_results = False
        elif role == "toolResult":
            blocks = [b for b in message.get("content") or [] if isinstance(b, dict)]
            text = _text_of(blocks)
            tool: dict[str, Any] = {
                "role": "tool",
                "tool_call_id": message.get("toolCallId"),
                "content": text if js_trim(text) else EMPTY_TOOL_RESULT,
            }
            if compat.get("requiresToolResultName"):
                tool["name"] = message.get("toolName")
            out.append(tool)
            if model.supports_images:
                pending_images.extend(_image_part(b) for b in blocks if b.get("type") == "image")
            after_tool_results = True
    flush_images()
    return out


def _apply_anthropic_cache_markers(
    messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None, cache: dict[str, str]
) -> None:
    for message in messages:
        if message["role"] in ("system", "developer"):
            _mark_text(message, cache)
            break
    if tools:
        tools[-1]["cache_control"] = cache
    for message in reversed(messages):
        if message["role"] in ("user", "assistant", "tool") and _mark_text(message, cache):
            break


def _mark_text(message: dict[str, Any], cache: dict[str, str]) -> bool:
    content = message.get("content")
    if isinstance(content, str) and content:
        message["content"] = [{"type": "text", "text": content, "cache_control": cache}]
        return True
    if isinstance(content, list):
        for part in reversed(content):
            if part.get("type") == "text":
                part["cache_control"] = cache
                return True
    return False


def _reasoning_fields(
    model: Model, options: StreamOptions, compat: Mapping[str, Any], max_tokens: int
) -> dict[str, Any]:
    if not model.reasoning:
        return {}
    level = resolve_level(model, options.thinking_level)
    mapping = model.thinking_level_map or {}
    fields: dict[str, Any] = {}
    style = compat.get("thinkingFormat")
    effort = mapping.get(level, level) if level != "off" else None
    if style == "openrouter":
        off_value = mapping.get("off", "none")
        fields["reasoning"] = {"effort": effort if effort is not None else (off_value or "none")}
    elif style == "openai" and compat.get("supportsReasoningEffort", True) is not False:
        if effort is not None:
            fields["reasoning_effort"] = effort
        elif isinstance(mapping.get("off"), str):
            fields["reasoning_effort"] = mapping["off"]
    budget_field = compat.get("thinkingTokenBudgetField")
    if budget_field and level != "off":
        budget = min(budget_for(level, options.thinking_budgets), max(0, max_tokens - MIN_ANSWER_TOKENS))
        if budget > 0:
            fields[str(budget_field)] = budget
    return fields


def build_request(model: Model, context: LlmContext, options: StreamOptions) -> HttpRequest:
    compat = detect_compat(model)
    messages = convert_messages(context, model, compat)
    requested = options.max_tokens if options.max_tokens is not None else model.max_tokens
    max_tokens = clamp_max_tokens(model.context_window, estimate_context(context), requested)
    body: dict[str, Any] = {"model": model.id, "messages": messages, "stream": True}
    if compat.get("supportsUsageInStreaming", True):
        body["stream_options"] = {"include_usage": True}
    tools: list[dict[str, Any]] | None = None
    if context.tools:
        tools = []
        for spec in context.tools:
            function: dict[str, Any] = {
                "name": spec.name,
                "description": spec.description,
                "parameters": dict(spec.parameters),
            }
            if compat.get("supportsStrictMode", True):
                function["strict"] = False
            tools.append({"type": "function", "function": function})
        body["tools"] = tools
    elif any(m.get("tool_calls") for m in messages) or any(m["role"] == "tool" for m in messages):
        body["tools"] = []
    body[str(compat.get("maxTokensField") or "max_tokens")] = max_tokens
    if options.temperature is not None:
        body["temperature"] = options.temperature
    body.update(_reasoning_fields(model, options, compat, max_tokens))
    if compat.get("supportsStore"):
        body["store"] = False
    if compat.get("promptCacheKey") and options.session_id and options.cache_retention != "none":
        body["prompt_cache_key"] = options.session_id[:64]
    if compat.get("cacheControlFormat") == "anthropic" and options.cache_retention != "none":
        cache = {"type": "ephemeral"}
        if options.cache_retention == "long" and compat.get("supportsLongCacheRetention", True):
            cache["ttl"] = "1h"
        _apply_anthropic_cache_markers(messages, tools, cache)
    if compat.get("openRouterRouting"):
        body["provider"] = compat["openRouterRouting"]
    body.update(dict(model.sampling_params))
    body.update(dict(options.sampling_params or {}))
    return HttpRequest(
        url=model.base_url.rstrip("/") + "/chat/completions",
        headers=_headers(model, options),
        body=strip_surrogates(body),
        secrets=(options.api_key,) if options.api_key else (),
    )


def _headers(model: Model, options: StreamOptions) -> dict[str, str]:
    headers = {
        "content-type": "application/json",
        "accept": "text/event-stream",
        "user-agent": f"piwork/{__version__}",
    }
    if options.api_key:
        headers["authorization"] = f"Bearer {options.api_key}"
    for extra in (model.headers, options.headers or {}):
        for name, value in extra.items():
            headers[name.lower()] = value
    return headers
