"""OpenAI Chat Completions (and compatible servers): compat detection and request building."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from piwork import __version__
from piwork.core.jscompat import js_trim
from piwork.core.llm.estimate import clamp_max_tokens, estimate_context
from piwork.core.llm.normalize import clean_body, normalize_messages, openai_tool_id
from piwork.core.llm.openai_reasoning import reasoning_fields
from piwork.core.llm.strict_schema import strict_parameters
from piwork.core.llm.thinking import resolve_level
from piwork.core.llm.transport import HttpRequest
from piwork.core.llm.types import LlmContext, Message, Model, StreamOptions, ToolSpec

REASONING_FIELDS = ("reasoning_content", "reasoning", "reasoning_text")
EMPTY_TOOL_RESULT = "(no output)"
TOOL_IMAGE_ONLY_RESULT = "(image attached)"
TOOL_IMAGES_INTRO = "Images returned by the tool:"
BRIDGE_AFTER_TOOL_RESULTS = "Tool results received."


def _endpoint(model: Model) -> set[str]:
    """The endpoint families a model's provider id or base URL belong to (substring match, as in Pi)."""
    provider, url = model.provider, model.base_url
    families: set[str] = set()
    by_provider_or_url = {
        "zai": (("zai", "zai-coding-cn"), ("api.z.ai", "open.bigmodel.cn")),
        "together": (("together",), ("api.together.ai", "api.together.xyz")),
        "moonshot": (("moonshotai", "moonshotai-cn"), ("api.moonshot.",)),
        "openrouter": (("openrouter",), ("openrouter.ai",)),
        "cloudflare-workers": (("cloudflare-workers-ai",), ("api.cloudflare.com",)),
        "cloudflare-gateway": (("cloudflare-ai-gateway",), ("gateway.ai.cloudflare.com",)),
        "nvidia": (("nvidia",), ("integrate.api.nvidia.com",)),
        "ant-ling": (("ant-ling",), ("api.ant-ling.com",)),
        "cerebras": (("cerebras",), ("cerebras.ai",)),
        "xai": (("xai",), ("api.x.ai",)),
        "opencode": (("opencode",), ("opencode.ai",)),
        "chutes": ((), ("chutes.ai",)),
    }
    for family, (providers, hosts) in by_provider_or_url.items():
        if provider in providers or any(host in url for host in hosts):
            families.add(family)
    if provider == "deepseek" or "deepseek.com" in url.lower():
        families.add("deepseek")
    return families


# Endpoints that take only part of OpenAI's request dialect (no ``store``, no ``developer`` role).
_NON_STANDARD = {
    "nvidia", "cerebras", "xai", "together", "chutes", "deepseek", "zai", "moonshot", "opencode",
    "cloudflare-workers", "cloudflare-gateway", "ant-ling",
}  # fmt: skip
_MAX_TOKENS_FIELD = {
    "chutes",
    "deepseek",
    "moonshot",
    "cloudflare-gateway",
    "together",
    "nvidia",
    "ant-ling",
    "zai",
}
_NO_REASONING_EFFORT = {"xai", "zai", "moonshot", "together", "cloudflare-gateway", "nvidia", "ant-ling"}
_NO_LONG_CACHE = {"together", "cloudflare-workers", "cloudflare-gateway", "nvidia", "ant-ling"}
_THINKING_FORMATS = (  # first match wins
    ("deepseek", "deepseek"), ("zai", "zai"), ("together", "together"), ("ant-ling", "ant-ling"),
    ("openrouter", "openrouter"),
)  # fmt: skip


def detect_compat(model: Model) -> dict[str, Any]:
    """What the endpoint accepts, detected as Pi detects it; explicit ``model.compat`` keys win.

    Any host that is not a known partial implementation is assumed to take ``store``,
    ``max_completion_tokens`` and ``reasoning_effort``, so the same ``models.json`` entry sends the same
    request from piwork and from Pi; the ``developer`` role goes to OpenAI's own API only, and strict
    tool schemas only where ``compat.supportsStrictMode`` says so. Local servers that reject part of
    it are configured with ``compat`` (the Providers settings page offers the switches).
    """
    families = _endpoint(model)
    non_standard = bool(families & _NON_STANDARD)
    openrouter = "openrouter" in families
    # the developer role is OpenAI's own: other hosts' chat templates often reject it, all take system
    openai_itself = model.provider == "openai" or "api.openai.com" in model.base_url
    detected: dict[str, Any] = {
        "supportsStore": not non_standard,
        "supportsDeveloperRole": openai_itself,
        "supportsReasoningEffort": not families & _NO_REASONING_EFFORT,
        "supportsUsageInStreaming": True,
        "supportsFinishReason": True,
        # OpenAI compatibility alone does not mean strict schemas are taken: only compat says so
        "supportsStrictMode": False,
        "supportsLongCacheRetention": not families & _NO_LONG_CACHE,
        "maxTokensField": "max_tokens" if families & _MAX_TOKENS_FIELD else "max_completion_tokens",
        "requiresToolResultName": False,
        "requiresAssistantAfterToolResult": False,
        "requiresNonNullAssistantContent": False,
        "requiresToolsWithToolHistory": False,
        "requiresThinkingAsText": False,
        "requiresReasoningContentOnAssistantMessages": "deepseek" in families,
        "thinkingFormat": next((fmt for family, fmt in _THINKING_FORMATS if family in families), "openai"),
        "cacheControlFormat": (
            "anthropic" if model.provider == "openrouter" and model.id.startswith("anthropic/") else None
        ),
        "sendSessionAffinityHeaders": openrouter,
        "sessionAffinityFormat": "openrouter" if openrouter else "openai",
        "chatTemplateKwargs": {},
        "chatTemplateArgs": {},
        "zaiToolStream": False,
    }
    merged = {**detected, **{k: v for k, v in dict(model.compat).items() if v is not None}}
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
        return {"role": "user", "content": content}
    parts: list[dict[str, Any]] = []
    for block in content or []:
        if block.get("type") == "text":
            if block.get("text"):
                parts.append({"type": "text", "text": block["text"]})
        elif block.get("type") == "image":
            parts.append(_image_part(block))
    return {"role": "user", "content": parts} if parts else None


def _assistant(message: Message, model: Model, compat: Mapping[str, Any]) -> dict[str, Any] | None:
    blocks: list[dict[str, Any]] = []
    texts: list[str] = []
    thinking: list[dict[str, Any]] = []
    calls: list[dict[str, Any]] = []
    for b in message.get("content") or []:  # one pass: a long session replays many replies
        if not isinstance(b, dict):
            continue
        blocks.append(b)
        kind = b.get("type")
        if kind == "text":
            if js_trim(piece := b.get("text") or ""):
                texts.append(piece)
        elif kind == "thinking":
            if js_trim(b.get("thinking") or ""):
                thinking.append(b)
        elif kind == "toolCall":
            function = {"name": b.get("name"), "arguments": _json(b.get("arguments") or {})}
            calls.append({"id": b.get("id"), "type": "function", "function": function})
    text = "".join(texts)
    non_null = compat.get("requiresAssistantAfterToolResult") or compat.get("requiresNonNullAssistantContent")
    result: dict[str, Any] = {"role": "assistant", "content": "" if non_null else None}
    if thinking and compat.get("requiresThinkingAsText"):
        # thinking replayed as a text part (no tags the model might imitate), then the answer's parts
        result["content"] = [
            {"type": "text", "text": "\n\n".join(b["thinking"] for b in thinking)},
            *(
                {"type": "text", "text": b.get("text") or ""}
                for b in blocks
                if b.get("type") == "text" and js_trim(b.get("text") or "")
            ),
        ]
    else:
        if text:
            result["content"] = text
        # Reasoning is replayed in the field it arrived in (named by the first block's signature).
        field_name = thinking[0].get("thinkingSignature") if thinking else None
        if field_name in REASONING_FIELDS:
            result[str(field_name)] = "\n".join(b["thinking"] for b in thinking)
    if calls:
        result["tool_calls"] = calls
    if (
        compat.get("requiresReasoningContentOnAssistantMessages")
        and model.reasoning
        and "reasoning_content" not in result
    ):
        result["reasoning_content"] = ""  # such servers reject a replayed assistant turn without it
    if not result["content"] and not calls:
        return None
    return result


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def convert_messages(context: LlmContext, model: Model, compat: Mapping[str, Any]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    if context.system_prompt:
        system_role = "developer" if model.reasoning and compat.get("supportsDeveloperRole") else "system"
        out.append({"role": system_role, "content": context.system_prompt})
    bridge = bool(compat.get("requiresAssistantAfterToolResult"))
    strict_ids = model.provider == "openai"
    messages = normalize_messages(context.messages, model, lambda i: openai_tool_id(i, strict_ids))
    last_role: str | None = None  # role of the last message sent ("toolResult" for a run of tool results)
    index = 0
    while index < len(messages):
        message = messages[index]
        role = message.get("role")
        index += 1
        if role == "user":
            converted = _user(message)
            if converted is None:
                continue
            if bridge and last_role == "toolResult":
                out.append({"role": "assistant", "content": BRIDGE_AFTER_TOOL_RESULTS})
            out.append(converted)
            last_role = "user"
        elif role == "assistant":
            converted = _assistant(message, model, compat)
            if converted is None:
                continue
            out.append(converted)
            last_role = "assistant"
        elif role == "toolResult":
            images: list[dict[str, Any]] = []
            run = [message]
            while index < len(messages) and messages[index].get("role") == "toolResult":
                run.append(messages[index])
                index += 1
            for result in run:
                blocks = [b for b in result.get("content") or [] if isinstance(b, dict)]
                text = _text_of(blocks)
                has_images = any(b.get("type") == "image" for b in blocks)
                tool: dict[str, Any] = {
                    "role": "tool",
                    "tool_call_id": result.get("toolCallId"),
                    "content": text
                    if js_trim(text)
                    else TOOL_IMAGE_ONLY_RESULT
                    if has_images
                    else EMPTY_TOOL_RESULT,
                }
                if compat.get("requiresToolResultName"):
                    tool["name"] = result.get("toolName")
                out.append(tool)
                if has_images and model.supports_images:
                    images.extend(_image_part(b) for b in blocks if b.get("type") == "image")
            last_role = "toolResult"
            if images:
                if bridge:
                    out.append({"role": "assistant", "content": BRIDGE_AFTER_TOOL_RESULTS})
                out.append(
                    {"role": "user", "content": [{"type": "text", "text": TOOL_IMAGES_INTRO}, *images]}
                )
                last_role = "user"
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


def _has_tool_history(messages: list[Message]) -> bool:
    for message in messages:
        if message.get("role") == "toolResult":
            return True
        if message.get("role") == "assistant" and any(
            isinstance(b, dict) and b.get("type") == "toolCall" for b in message.get("content") or []
        ):
            return True
    return False


def _tool(spec: ToolSpec, supports_strict: bool) -> dict[str, Any]:
    """A function tool; ``strict`` only where the endpoint takes it (some reject unknown fields), true
    with a strict schema for a tool that prefers it when its schema allows."""
    strict = strict_parameters(spec.parameters) if supports_strict and spec.strict else None
    function: dict[str, Any] = {
        "name": spec.name,
        "description": spec.description,
        "parameters": strict if strict is not None else dict(spec.parameters),
    }
    if supports_strict:
        function["strict"] = strict is not None
    return {"type": "function", "function": function}


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
        tools = [_tool(spec, bool(compat.get("supportsStrictMode"))) for spec in context.tools]
        body["tools"] = tools
    elif compat.get("requiresToolsWithToolHistory") and _has_tool_history(context.messages):
        body["tools"] = []  # such servers reject tool calls in the history of a request without tools
    body[str(compat.get("maxTokensField") or "max_tokens")] = max_tokens
    if options.temperature is not None:
        body["temperature"] = options.temperature
    body.update(reasoning_fields(model, options, compat, max_tokens))
    if compat.get("supportsStore"):
        body["store"] = False
    if compat.get("zaiToolStream") and tools:
        body["tool_stream"] = True
    if compat.get("vllmPriority") is not None:
        body["priority"] = compat["vllmPriority"]
    long_cache = options.cache_retention == "long" and bool(compat.get("supportsLongCacheRetention"))
    openai_host = "api.openai.com" in model.base_url
    if options.session_id and ((openai_host and options.cache_retention != "none") or long_cache):
        body["prompt_cache_key"] = options.session_id[:64]
    if long_cache:
        body["prompt_cache_retention"] = "24h"
    if compat.get("cacheControlFormat") == "anthropic" and options.cache_retention != "none":
        cache = {"type": "ephemeral"}
        if long_cache:
            cache["ttl"] = "1h"
        _apply_anthropic_cache_markers(messages, tools, cache)
    routing = model.compat.get("openRouterRouting")
    if routing is not None and routing is not False:
        body["provider"] = routing
    gateway = model.compat.get("vercelGatewayRouting")
    if isinstance(gateway, Mapping) and (gateway.get("only") or gateway.get("order")):
        body["providerOptions"] = {
            "gateway": {key: gateway[key] for key in ("only", "order") if gateway.get(key)}
        }
    # last, so sampling parameters win over named fields: the model's, its thinking level's, the request's
    body.update(dict(model.sampling_params))
    body.update(dict(model.sampling_params_by_level.get(resolve_level(model, options.thinking_level)) or {}))
    body.update(dict(options.sampling_params or {}))
    body, content = clean_body(body)
    return HttpRequest(
        url=model.base_url.rstrip("/") + "/chat/completions",
        headers=_headers(model, options, compat),
        body=body,
        secrets=(options.api_key,) if options.api_key else (),
        api=model.api,
        content=content,
    )


def _headers(model: Model, options: StreamOptions, compat: Mapping[str, Any]) -> dict[str, str]:
    headers = {
        "content-type": "application/json",
        "accept": "text/event-stream",
        "user-agent": f"piwork/{__version__}",
    }
    if options.api_key:
        headers["authorization"] = f"Bearer {options.api_key}"
    session_id = options.session_id
    if session_id and compat.get("sendSessionAffinityHeaders") and options.cache_retention != "none":
        if compat.get("sessionAffinityFormat") == "openrouter":
            headers["x-session-id"] = session_id
        else:
            if compat.get("sessionAffinityFormat") == "openai":
                headers["session_id"] = session_id
            headers["x-client-request-id"] = session_id
            headers["x-session-affinity"] = session_id
    for extra in (model.headers, options.headers or {}):
        for name, value in extra.items():
            headers[name.lower()] = value
    return headers
