"""Anthropic Messages: building the request (headers and JSON body) from a context."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from piwork import __version__
from piwork.core.jscompat import js_trim
from piwork.core.llm.estimate import clamp_max_tokens, estimate_context
from piwork.core.llm.normalize import anthropic_tool_id, clean_body, normalize_messages
from piwork.core.llm.strict_schema import anthropic_rejects, strict_parameters
from piwork.core.llm.thinking import MIN_ANSWER_TOKENS, budget_for, mapped_value, resolve_level
from piwork.core.llm.transport import HttpRequest
from piwork.core.llm.types import LlmContext, Message, Model, StreamOptions, ToolSpec

API_VERSION = "2023-06-01"
INTERLEAVED_THINKING_BETA = "interleaved-thinking-2025-05-14"
FINE_GRAINED_TOOL_STREAMING_BETA = "fine-grained-tool-streaming-2025-05-14"
IMAGE_ONLY_PLACEHOLDER = "(image attached)"
_ADAPTIVE_EFFORT = {
    "minimal": "low",
    "low": "low",
    "medium": "medium",
    "high": "high",
    "xhigh": "xhigh",
    "max": "max",
}


def _image(block: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "image",
        "source": {"type": "base64", "media_type": block.get("mimeType"), "data": block.get("data")},
    }


def _user_content(content: Any) -> Any:
    if isinstance(content, str):
        return content if js_trim(content) else None
    blocks: list[dict[str, Any]] = []
    for block in content or []:
        kind = block.get("type")
        if kind == "text" and js_trim(block.get("text") or ""):
            blocks.append({"type": "text", "text": block["text"]})
        elif kind == "image":
            blocks.append(_image(block))
    return blocks or None


def _assistant_content(message: Message, allow_empty_signature: bool) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for block in message.get("content") or []:
        kind = block.get("type")
        if kind == "text":
            if js_trim(block.get("text") or ""):
                blocks.append({"type": "text", "text": block["text"]})
        elif kind == "thinking":
            signature = block.get("thinkingSignature")
            if block.get("redacted"):
                blocks.append({"type": "redacted_thinking", "data": signature or ""})
            elif signature or allow_empty_signature:
                thinking = block.get("thinking") or ""
                blocks.append({"type": "thinking", "thinking": thinking, "signature": signature or ""})
            elif js_trim(block.get("thinking") or ""):
                blocks.append({"type": "text", "text": block["thinking"]})
        elif kind == "toolCall":
            blocks.append(
                {
                    "type": "tool_use",
                    "id": block.get("id"),
                    "name": block.get("name"),
                    "input": block.get("arguments") or {},
                }
            )
    return blocks


ERROR_IMAGES_PLACEHOLDER = "(image attached after the tool results)"


def _split_error_images(message: Message) -> tuple[Message, list[dict[str, Any]]]:
    """An error result with images as Anthropic takes it: text only (each run of images becomes one
    placeholder), and the images with a caption to follow all tool results of the turn."""
    blocks = [b for b in message.get("content") or [] if isinstance(b, dict)]
    images = [b for b in blocks if b.get("type") == "image"]
    if not message.get("isError") or not images:
        return message, []
    kept: list[dict[str, Any]] = []
    for block in blocks:
        if block.get("type") == "image":
            if not (kept and kept[-1].get("text") == ERROR_IMAGES_PLACEHOLDER):
                kept.append({"type": "text", "text": ERROR_IMAGES_PLACEHOLDER})
            continue
        kept.append(block)
    caption = (
        f"Images from the error result of tool call {message.get('toolCallId')} ({message.get('toolName')}):"
    )
    return {**message, "content": kept}, [{"type": "text", "text": caption}, *(_image(b) for b in images)]


def _tool_result(message: Message) -> dict[str, Any]:
    parts = [b for b in message.get("content") or [] if b.get("type") in ("text", "image")]
    content: Any
    if not any(b["type"] == "image" for b in parts):
        content = "\n".join(b.get("text") or "" for b in parts)
    else:
        content = [
            {"type": "text", "text": b.get("text") or ""} if b["type"] == "text" else _image(b) for b in parts
        ]
        if not any(b["type"] == "text" for b in parts):
            content.insert(0, {"type": "text", "text": IMAGE_ONLY_PLACEHOLDER})
    return {
        "type": "tool_result",
        "tool_use_id": message.get("toolCallId"),
        "content": content,
        "is_error": bool(message.get("isError")),
    }


def convert_messages(messages: list[Message], model: Model) -> list[dict[str, Any]]:
    allow_empty = bool(model.compat.get("allowEmptySignature"))
    result: list[dict[str, Any]] = []
    previous_role = None
    error_images: list[dict[str, Any]] = []  # images of error results, after the run of tool results
    for message in normalize_messages(messages, model, anthropic_tool_id):
        if error_images and message.get("role") != "toolResult":
            result[-1]["content"].extend(error_images)
            error_images = []
        role = message.get("role")
        if role == "user":
            content = _user_content(message.get("content"))
            if content is not None:
                result.append({"role": "user", "content": content})
        elif role == "assistant":
            blocks = _assistant_content(message, allow_empty)
            if blocks:
                result.append({"role": "assistant", "content": blocks})
        elif role == "toolResult":
            sendable, images = _split_error_images(message)
            block = _tool_result(sendable)
            if previous_role == "toolResult":  # a run of tool results is one user message
                result[-1]["content"].append(block)
            else:
                result.append({"role": "user", "content": [block]})
            error_images.extend(images)
        previous_role = role
    if error_images:
        result[-1]["content"].extend(error_images)
    return result


def _cache_control(model: Model, retention: str) -> dict[str, str] | None:
    if retention == "none":
        return None
    if retention == "long" and model.compat.get("supportsLongCacheRetention", True) is not False:
        return {"type": "ephemeral", "ttl": "1h"}
    return {"type": "ephemeral"}


def _mark_last_user(messages: list[dict[str, Any]], cache: dict[str, str]) -> None:
    for item in reversed(messages):
        if item["role"] != "user":
            continue
        if isinstance(item["content"], str):
            item["content"] = [{"type": "text", "text": item["content"]}]
        if item["content"]:
            item["content"][-1]["cache_control"] = cache
        return


# Thinking is asked for as a summary at every level, so newer models (whose API default is to omit it)
# stream thinking the chat can show, like older ones.
THINKING_DISPLAY = "summarized"


def _thinking(
    model: Model, context: LlmContext, options: StreamOptions, base_max: int
) -> tuple[dict[str, Any], int]:
    """Thinking fields of the body and the final ``max_tokens``."""
    level = resolve_level(model, options.thinking_level)
    if model.compat.get("supportsMidConvoEffort") is True:
        # Models whose effort is managed server-side think adaptively at every level; a prefix that no
        # longer matches its thinking block drops the block instead of failing the request.
        return {
            "thinking": {
                "type": "adaptive",
                "display": THINKING_DISPLAY,
                "block_binding": {"prefix_mismatch_behavior": "drop_block"},
            },
            "output_config": {"effort": "high"},
        }, base_max
    if not model.reasoning:
        return {}, base_max
    if level == "off":
        map_ = model.thinking_level_map or {}
        if "off" in map_ and map_["off"] is None:
            return {}, base_max
        return {"thinking": {"type": "disabled"}}, base_max
    if model.compat.get("forceAdaptiveThinking"):
        effort = mapped_value(model, level) or _ADAPTIVE_EFFORT[level]
        return {
            "thinking": {"type": "adaptive", "display": THINKING_DISPLAY},
            "output_config": {"effort": effort},
        }, base_max
    budget = budget_for(level, options.thinking_budgets)
    max_tokens = min(base_max + budget, model.max_tokens)
    if max_tokens <= budget:
        budget = min(budget, max(0, max_tokens - MIN_ANSWER_TOKENS))
    max_tokens = clamp_max_tokens(model.context_window, estimate_context(context), max_tokens)
    budget_tokens = min(budget, max(0, max_tokens - MIN_ANSWER_TOKENS)) or 1024
    return {
        "thinking": {"type": "enabled", "budget_tokens": budget_tokens, "display": THINKING_DISPLAY}
    }, max_tokens


def _tool(tool: ToolSpec, eager: bool, strict_tools: bool) -> dict[str, Any]:
    """A tool definition; one that prefers strict sampling is sent strict when the model takes strict
    tools and its schema has only keywords Anthropic's strict mode accepts."""
    strict = strict_parameters(tool.parameters, anthropic_rejects) if strict_tools and tool.strict else None
    params: Mapping[str, Any] = strict if strict is not None else tool.parameters
    # shared definitions and additionalProperties are kept; other root keywords are refused by the API
    schema: dict[str, Any] = {
        "type": "object",
        "properties": params.get("properties", {}),
        "required": params.get("required", []),
    }
    for key in ("additionalProperties", "$defs", "definitions"):
        if key in params:
            schema[key] = params[key]
    entry: dict[str, Any] = {"name": tool.name, "description": tool.description}
    if eager:
        entry["eager_input_streaming"] = True
    if strict is not None:
        entry["strict"] = True
        schema = {**strict, **schema}
    entry["input_schema"] = schema
    return entry


def build_request(
    model: Model, context: LlmContext, options: StreamOptions, strict: bool = True
) -> HttpRequest:
    """The Messages API request; ``strict`` False sends every tool non-strict (the fallback when Claude
    rejects a request whose strict tools exceed its limits)."""
    cache = _cache_control(model, options.cache_retention)
    messages = convert_messages(context.messages, model)
    if cache is not None:
        _mark_last_user(messages, cache)
    requested = options.max_tokens if options.max_tokens is not None else model.max_tokens
    base_max = clamp_max_tokens(model.context_window, estimate_context(context), requested)
    thinking, max_tokens = _thinking(model, context, options, base_max)
    body: dict[str, Any] = {"model": model.id, "max_tokens": max_tokens, "stream": True}
    if context.system_prompt:
        system: dict[str, Any] = {"type": "text", "text": context.system_prompt}
        if cache is not None:
            system["cache_control"] = cache
        body["system"] = [system]
    body["messages"] = messages
    eager = model.compat.get("supportsEagerToolInputStreaming", True) is not False
    if context.tools:
        strict_tools = strict and model.compat.get("supportsStrictTools") is True
        tools = [_tool(tool, eager, strict_tools) for tool in context.tools]
        if cache is not None and model.compat.get("supportsCacheControlOnTools", True) is not False:
            tools[-1]["cache_control"] = cache
        body["tools"] = tools
    thinking_on = thinking.get("thinking", {}).get("type") in ("enabled", "adaptive")
    if (
        options.temperature is not None
        and not thinking_on
        and model.compat.get("supportsTemperature", True) is not False
    ):
        body["temperature"] = options.temperature
    body.update(thinking)
    betas: list[str] = []
    if context.tools and not eager:
        betas.append(FINE_GRAINED_TOOL_STREAMING_BETA)
    if thinking.get("thinking", {}).get("type") == "enabled":
        betas.append(INTERLEAVED_THINKING_BETA)
    body, content = clean_body(body)
    return HttpRequest(
        url=model.base_url.rstrip("/") + "/v1/messages",
        headers=_headers(model, options, betas),
        body=body,
        secrets=(options.api_key,) if options.api_key else (),
        api=model.api,
        content=content,
    )


def _headers(model: Model, options: StreamOptions, betas: list[str]) -> dict[str, str]:
    headers = {
        "anthropic-version": API_VERSION,
        "content-type": "application/json",
        "accept": "text/event-stream",
        "user-agent": f"piwork/{__version__}",
    }
    if options.api_key:
        headers["x-api-key"] = options.api_key
        if model.compat.get("authHeader"):
            headers["authorization"] = f"Bearer {options.api_key}"
    if betas:
        headers["anthropic-beta"] = ",".join(betas)
    for extra in (model.headers, options.headers or {}):
        for name, value in extra.items():
            headers[name.lower()] = value
    return headers


def sends_strict_tools(model: Model, context: LlmContext) -> bool:
    """Whether a request would send some tool strict (one prefers it and the model takes strict tools)."""
    return model.compat.get("supportsStrictTools") is True and any(
        tool.strict and strict_parameters(tool.parameters, anthropic_rejects) is not None
        for tool in context.tools
    )
