"""Request bodies and headers for both protocols (snapshots of what goes on the wire)."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest

from piwork.core.llm import anthropic_request, openai_request
from piwork.core.llm.types import (
    ANTHROPIC_MESSAGES,
    OPENAI_COMPLETIONS,
    LlmContext,
    Model,
    StreamOptions,
    ToolSpec,
)

TOOL = ToolSpec(
    "read",
    "Read a file",
    {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"], "$schema": "x"},
)
CLAUDE = Model("claude-sonnet-4-5", "Claude", ANTHROPIC_MESSAGES, "anthropic", "https://api.anthropic.com",
               reasoning=True, input=("text", "image"), context_window=200000, max_tokens=64000)  # fmt: skip
GPT = Model("gpt-5.4", "GPT", OPENAI_COMPLETIONS, "openai", "https://api.openai.com/v1",
            reasoning=True, input=("text", "image"), context_window=400000, max_tokens=128000)  # fmt: skip


def assistant(model: Model, *blocks: dict[str, Any], stop: str = "toolUse") -> dict[str, Any]:
    return {"role": "assistant", "content": list(blocks), "api": model.api, "provider": model.provider,
            "model": model.id, "stopReason": stop, "usage": {}, "timestamp": 2}  # fmt: skip


def result(call_id: str, text: str, *, images: int = 0, error: bool = False) -> dict[str, Any]:
    content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    content += [{"type": "image", "data": "AAAA", "mimeType": "image/png"}] * images
    return {
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": "read",
        "content": content,
        "isError": error,
        "timestamp": 3,
    }


def call(call_id: str, path: str = "t.py") -> dict[str, Any]:
    return {"type": "toolCall", "id": call_id, "name": "read", "arguments": {"path": path}}


HISTORY = [
    {"role": "user", "content": "Fix the test", "timestamp": 1},
    assistant(CLAUDE, {"type": "thinking", "thinking": "look", "thinkingSignature": "SIG"},
              {"type": "text", "text": "Reading."}, {"type": "text", "text": "  "}, call("toolu_1"), call("toolu_2", "u.py")),
    result("toolu_1", "line1"),
    result("toolu_2", "a\nb"),
]  # fmt: skip


# ---- Anthropic -----------------------------------------------------------------------------------


def test_anthropic_body_snapshot() -> None:
    request = anthropic_request.build_request(
        CLAUDE, LlmContext("SYS", HISTORY, [TOOL]), StreamOptions(api_key="sk-ant-x", thinking_level="medium")
    )
    assert request.url == "https://api.anthropic.com/v1/messages"
    body = request.body
    assert body["system"] == [{"type": "text", "text": "SYS", "cache_control": {"type": "ephemeral"}}]
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 8192, "display": "summarized"}
    assert body["max_tokens"] == 64000 and body["stream"] is True and "temperature" not in body
    assert body["messages"] == [
        {"role": "user", "content": "Fix the test"},
        {"role": "assistant", "content": [
            {"type": "thinking", "thinking": "look", "signature": "SIG"},
            {"type": "text", "text": "Reading."},
            {"type": "tool_use", "id": "toolu_1", "name": "read", "input": {"path": "t.py"}},
            {"type": "tool_use", "id": "toolu_2", "name": "read", "input": {"path": "u.py"}}]},
        {"role": "user", "content": [  # consecutive tool results merge into one user message
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": "line1", "is_error": False},
            {"type": "tool_result", "tool_use_id": "toolu_2", "content": "a\nb", "is_error": False,
             "cache_control": {"type": "ephemeral"}}]},
    ]  # fmt: skip
    assert body["tools"] == [{"name": "read", "description": "Read a file", "eager_input_streaming": True,
                              "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
                              "cache_control": {"type": "ephemeral"}}]  # fmt: skip
    headers = request.headers
    assert headers["x-api-key"] == "sk-ant-x" and headers["anthropic-version"] == "2023-06-01"
    assert headers["anthropic-beta"] == "interleaved-thinking-2025-05-14"
    assert headers["user-agent"].startswith("piwork/")


def test_anthropic_thinking_off_long_cache_and_temperature() -> None:
    ctx = LlmContext("S", [{"role": "user", "content": "hi", "timestamp": 1}], [TOOL])
    body = anthropic_request.build_request(
        CLAUDE, ctx, StreamOptions(thinking_level="off", cache_retention="long", temperature=0.2)
    ).body
    assert body["thinking"] == {"type": "disabled"} and body["temperature"] == 0.2
    assert body["system"][0]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}
    assert body["messages"] == [
        {
            "role": "user",
            "content": [{"type": "text", "text": "hi", "cache_control": {"type": "ephemeral", "ttl": "1h"}}],
        }
    ]
    none = anthropic_request.build_request(CLAUDE, ctx, StreamOptions(cache_retention="none")).body
    assert "cache_control" not in str(none)


def test_anthropic_adaptive_thinking_and_beta_for_tools_without_eager_streaming() -> None:
    model = Model(
        **{
            **CLAUDE.__dict__,
            "compat": {"forceAdaptiveThinking": True, "supportsEagerToolInputStreaming": False},
        }
    )
    ctx = LlmContext("S", [{"role": "user", "content": "hi", "timestamp": 1}], [TOOL])
    request = anthropic_request.build_request(
        model, ctx, StreamOptions(thinking_level="low", temperature=1.0)
    )
    assert request.body["thinking"] == {"type": "adaptive", "display": "summarized"}
    assert request.body["output_config"] == {"effort": "low"} and "temperature" not in request.body
    assert request.headers["anthropic-beta"] == "fine-grained-tool-streaming-2025-05-14"
    assert "eager_input_streaming" not in request.body["tools"][0]
    caller = anthropic_request.build_request(model, ctx, StreamOptions(headers={"Anthropic-Beta": "mine"}))
    assert caller.headers["anthropic-beta"] == "mine"


def test_anthropic_budget_fits_a_small_max_tokens() -> None:
    ctx = LlmContext("S", [{"role": "user", "content": "hi", "timestamp": 1}])
    body = anthropic_request.build_request(
        CLAUDE, ctx, StreamOptions(max_tokens=1000, thinking_level="high")
    ).body
    assert body["max_tokens"] == 17384 and body["thinking"]["budget_tokens"] == 16360
    small = Model(**{**CLAUDE.__dict__, "max_tokens": 4000})
    body = anthropic_request.build_request(small, ctx, StreamOptions(thinking_level="high")).body
    assert body["max_tokens"] == 4000 and body["thinking"]["budget_tokens"] == 2976


def test_anthropic_max_tokens_clamped_to_the_context_window() -> None:
    model = Model(**{**CLAUDE.__dict__, "context_window": 10000, "reasoning": False})
    ctx = LlmContext("", [{"role": "user", "content": "x" * 7000, "timestamp": 1}])  # ~2000 tokens
    assert (
        anthropic_request.build_request(model, ctx, StreamOptions()).body["max_tokens"] == 10000 - 2000 - 4096
    )


def test_anthropic_cross_model_history_is_normalised() -> None:
    other = Model("gpt-5.4", "GPT", OPENAI_COMPLETIONS, "openai", "https://api.openai.com/v1")
    history = [
        {"role": "user", "content": [{"type": "text", "text": "hi"}, {"type": "text", "text": " "}], "timestamp": 1},
        assistant(other, {"type": "thinking", "thinking": "reasoned", "thinkingSignature": "reasoning_content"},
                  {"type": "thinking", "thinking": "", "thinkingSignature": "x"}, call("call|weird/id")),
        result("call|weird/id", "ok"),
        assistant(CLAUDE, {"type": "text", "text": "broken"}, stop="error"),
        assistant(CLAUDE, call("toolu_orphan")),
        {"role": "user", "content": "next", "timestamp": 5},
    ]  # fmt: skip
    messages = anthropic_request.build_request(
        CLAUDE, LlmContext("", history), StreamOptions(cache_retention="none")
    ).body["messages"]
    assert messages[0] == {"role": "user", "content": [{"type": "text", "text": "hi"}]}
    # another model's thinking is left out (Pi 1.6; 0.85 sent it as text)
    assert messages[1]["content"] == [{"type": "tool_use", "id": "call_weird_id", "name": "read", "input": {"path": "t.py"}}]  # fmt: skip
    assert messages[2]["content"][0]["tool_use_id"] == "call_weird_id"
    assert messages[3]["content"][0]["id"] == "toolu_orphan"  # the errored assistant message is gone
    synthetic = messages[4]["content"][0]
    assert synthetic["tool_use_id"] == "toolu_orphan" and synthetic["is_error"] is True
    assert messages[5] == {"role": "user", "content": "next"}


def test_anthropic_tool_result_images() -> None:
    history = [
        {"role": "user", "content": "x", "timestamp": 1},
        assistant(CLAUDE, call("t1")),
        result("t1", "", images=1),
    ]
    messages = anthropic_request.build_request(
        CLAUDE, LlmContext("", history), StreamOptions(cache_retention="none")
    ).body["messages"]
    content = messages[2]["content"][0]["content"]
    assert content[0]["type"] == "text" and content[1]["type"] == "image"
    text_only = Model(**{**CLAUDE.__dict__, "input": ("text",)})
    messages = anthropic_request.build_request(
        text_only, LlmContext("", history), StreamOptions(cache_retention="none")
    ).body["messages"]
    assert "cannot read images" in messages[2]["content"][0]["content"]


def test_unpaired_surrogates_are_removed() -> None:
    ctx = LlmContext("a\ud800b", [{"role": "user", "content": "ok 🐍 \udfff!", "timestamp": 1}])
    body = anthropic_request.build_request(CLAUDE, ctx, StreamOptions(cache_retention="none")).body
    assert body["system"][0]["text"] == "ab" and body["messages"][0]["content"] == "ok 🐍 !"


# ---- OpenAI --------------------------------------------------------------------------------------


def gpt_history() -> list[dict[str, Any]]:
    return [
        {"role": "user", "content": [{"type": "text", "text": "Fix it"}, {"type": "image", "data": "QQ==", "mimeType": "image/png"}], "timestamp": 1},
        assistant(GPT, {"type": "thinking", "thinking": "r1", "thinkingSignature": "reasoning_content"},
                  {"type": "text", "text": "Reading."}, {"type": "text", "text": " Now."}, call("call_1")),
        result("call_1", "contents", images=1),
        {"role": "user", "content": "thanks", "timestamp": 4},
    ]  # fmt: skip


def test_openai_body_snapshot() -> None:
    request = openai_request.build_request(
        GPT,
        LlmContext("SYS", gpt_history(), [TOOL]),
        StreamOptions(api_key="sk-o", thinking_level="medium", session_id="s" * 80),
    )
    assert request.url == "https://api.openai.com/v1/chat/completions"
    body = request.body
    assert body["messages"] == [
        {"role": "developer", "content": "SYS"},
        {"role": "user", "content": [{"type": "text", "text": "Fix it"}, {"type": "image_url", "image_url": {"url": "data:image/png;base64,QQ=="}}]},
        {"role": "assistant", "content": "Reading. Now.", "reasoning_content": "r1",
         "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "read", "arguments": '{"path":"t.py"}'}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "contents"},
        {"role": "user", "content": [{"type": "text", "text": "Images returned by the tool:"}, {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}]},
        {"role": "user", "content": "thanks"},
    ]  # fmt: skip
    assert body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "read",
                "description": "Read a file",
                "parameters": dict(TOOL.parameters),
            },
        }
    ]  # no "strict": the model's compat does not say it takes strict schemas
    assert body["max_completion_tokens"] == 128000 and "max_tokens" not in body
    assert body["reasoning_effort"] == "medium" and body["store"] is False
    assert body["prompt_cache_key"] == "s" * 64
    assert body["stream_options"] == {"include_usage": True}
    assert request.headers["authorization"] == "Bearer sk-o"


def test_openai_non_reasoning_model_uses_system_role() -> None:
    model = Model(**{**GPT.__dict__, "reasoning": False})
    body = openai_request.build_request(
        model, LlmContext("SYS", [{"role": "user", "content": "x", "timestamp": 1}]), StreamOptions()
    ).body
    assert body["messages"][0] == {"role": "system", "content": "SYS"} and "reasoning_effort" not in body


def test_local_server_defaults_match_pi() -> None:
    """A models.json server without ``compat`` gets the request Pi sends for the same entry."""
    local = Model("qwen", "Qwen", OPENAI_COMPLETIONS, "ollama", "http://localhost:11434/v1", reasoning=True)
    request = openai_request.build_request(
        local, LlmContext("SYS", gpt_history()[3:]), StreamOptions(thinking_level="high")
    )
    body = request.body
    assert body["messages"][0]["role"] == "system"  # the developer role is for OpenAI's own API
    assert body["store"] is False and body["reasoning_effort"] == "high" and "prompt_cache_key" not in body
    assert body["max_completion_tokens"] == 16384 and "max_tokens" not in body
    assert "authorization" not in request.headers


def test_compat_switches_turn_off_what_a_local_server_rejects() -> None:
    compat = {"supportsDeveloperRole": False, "supportsStore": False, "supportsReasoningEffort": False,
              "maxTokensField": "max_tokens", "supportsUsageInStreaming": False, "supportsStrictMode": False}  # fmt: skip
    local = Model("qwen", "Qwen", OPENAI_COMPLETIONS, "ollama", "http://localhost:11434/v1", reasoning=True,
                  compat=compat)  # fmt: skip
    ctx = LlmContext("SYS", gpt_history()[3:], [TOOL])
    body = openai_request.build_request(local, ctx, StreamOptions(thinking_level="high")).body
    assert body["messages"][0]["role"] == "system"
    assert "store" not in body and "reasoning_effort" not in body and "stream_options" not in body
    assert body["max_tokens"] == 16384 and "max_completion_tokens" not in body
    assert "strict" not in body["tools"][0]["function"]


@pytest.mark.parametrize(
    ("provider", "base_url", "expected"),
    [
        ("deepseek", "https://api.deepseek.com/v1",
         {"store": None, "role": "system", "max": "max_tokens", "thinking": {"type": "enabled"}}),
        ("together", "https://api.together.xyz/v1",
         {"store": None, "role": "system", "max": "max_tokens", "reasoning": {"enabled": True}}),
        ("xai", "https://api.x.ai/v1",
         {"store": None, "role": "system", "max": "max_completion_tokens", "reasoning_effort": None}),
        ("custom", "https://gateway.example.com/v1",
         {"store": False, "role": "system", "max": "max_completion_tokens", "reasoning_effort": "high"}),
    ],
)  # fmt: skip
def test_known_partial_endpoints(provider: str, base_url: str, expected: dict[str, Any]) -> None:
    model = Model("m", "m", OPENAI_COMPLETIONS, provider, base_url, reasoning=True)
    body = openai_request.build_request(
        model, LlmContext("SYS", gpt_history()[3:]), StreamOptions(thinking_level="high")
    ).body
    assert body.get("store") == expected["store"]
    assert body["messages"][0]["role"] == expected["role"]
    assert expected["max"] in body
    for key in ("thinking", "reasoning", "reasoning_effort"):
        if key in expected:
            assert body.get(key) == expected[key]


def test_deepseek_replays_assistant_turns_with_reasoning_content() -> None:
    model = Model("deepseek-reasoner", "R", OPENAI_COMPLETIONS, "deepseek", "https://api.deepseek.com/v1",
                  reasoning=True)  # fmt: skip
    body = openai_request.build_request(
        model, LlmContext("SYS", gpt_history()[1:]), StreamOptions(thinking_level="high")
    ).body
    assistants = [m for m in body["messages"] if m["role"] == "assistant"]
    assert assistants and all("reasoning_content" in m for m in assistants)


def test_session_affinity_headers_when_asked() -> None:
    ctx = LlmContext("S", [{"role": "user", "content": "x", "timestamp": 1}])
    plain = Model("q", "q", OPENAI_COMPLETIONS, "local", "http://127.0.0.1:8000/v1")
    headers = openai_request.build_request(plain, ctx, StreamOptions(session_id="s1")).headers
    assert "x-session-affinity" not in headers
    asked = Model(**{**plain.__dict__, "compat": {"sendSessionAffinityHeaders": True}})
    headers = openai_request.build_request(asked, ctx, StreamOptions(session_id="s1")).headers
    assert headers["session_id"] == headers["x-client-request-id"] == headers["x-session-affinity"] == "s1"
    router = Model(**{**asked.__dict__, "provider": "openrouter"})
    headers = openai_request.build_request(router, ctx, StreamOptions(session_id="s1")).headers
    assert headers["x-session-id"] == "s1" and "session_id" not in headers


def test_local_compat_flags() -> None:
    compat = {"requiresToolResultName": True, "requiresAssistantAfterToolResult": True,
              "thinkingTokenBudgetField": "thinking_budget_tokens", "supportsReasoningEffort": True}  # fmt: skip
    local = Model("qwen", "Qwen", OPENAI_COMPLETIONS, "llama", "http://127.0.0.1:8080/v1", reasoning=True,
                  max_tokens=4096, compat=compat, sampling_params={"top_k": 20, "temperature": 0.6})  # fmt: skip
    body = openai_request.build_request(
        local,
        LlmContext("", gpt_history()[1:]),
        StreamOptions(thinking_level="medium", sampling_params={"top_k": 40}),
    ).body
    roles = [m["role"] for m in body["messages"]]
    assert roles == ["assistant", "tool", "assistant", "user"]
    assert body["messages"][1]["name"] == "read"
    assert body["thinking_budget_tokens"] == 4096 - 1024 and body["reasoning_effort"] == "medium"
    assert body["top_k"] == 40 and body["temperature"] == 0.6
    assert "tools" not in body  # tool calls in history but no active tools: [] only when compat asks
    asked = dataclasses.replace(local, compat={**compat, "requiresToolsWithToolHistory": True})
    assert (
        openai_request.build_request(asked, LlmContext("", gpt_history()[1:]), StreamOptions()).body["tools"]
        == []
    )


def test_openrouter_anthropic_models_get_cache_markers_and_reasoning_object() -> None:
    model = Model("anthropic/claude-sonnet-4.5", "C", OPENAI_COMPLETIONS, "openrouter", "https://openrouter.ai/api/v1",
                  reasoning=True, compat={"openRouterRouting": {"order": ["anthropic"]}})  # fmt: skip
    ctx = LlmContext("SYS", [{"role": "user", "content": "hi", "timestamp": 1}], [TOOL])
    body = openai_request.build_request(model, ctx, StreamOptions(thinking_level="off")).body
    assert body["messages"][0] == {
        "role": "system",
        "content": [{"type": "text", "text": "SYS", "cache_control": {"type": "ephemeral"}}],
    }
    assert body["messages"][1]["content"] == [
        {"type": "text", "text": "hi", "cache_control": {"type": "ephemeral"}}
    ]
    assert body["tools"][-1]["cache_control"] == {"type": "ephemeral"}
    assert body["reasoning"] == {"effort": "none"} and body["provider"] == {"order": ["anthropic"]}
    assert body["store"] is False and body["max_completion_tokens"] == 16384


def test_thinking_level_map_and_fallback_to_a_supported_level() -> None:
    model = Model(**{**GPT.__dict__, "thinking_level_map": {"minimal": None, "xhigh": "xhigh"}})
    ctx = LlmContext("", [{"role": "user", "content": "x", "timestamp": 1}])
    assert (
        openai_request.build_request(model, ctx, StreamOptions(thinking_level="minimal")).body[
            "reasoning_effort"
        ]
        == "low"
    )
    assert (
        openai_request.build_request(model, ctx, StreamOptions(thinking_level="max")).body["reasoning_effort"]
        == "xhigh"
    )


def test_openai_provider_behind_a_proxy_keeps_openai_defaults() -> None:
    proxied = Model(**{**GPT.__dict__, "base_url": "https://proxy.example.com/v1"})
    body = openai_request.build_request(
        proxied, LlmContext("S", [{"role": "user", "content": "x", "timestamp": 1}]), StreamOptions()
    ).body
    assert (
        "max_completion_tokens" in body
        and body["messages"][0]["role"] == "developer"
        and body["store"] is False
    )


def test_openai_long_cache_retention() -> None:
    ctx = LlmContext("S", [{"role": "user", "content": "x", "timestamp": 1}])
    body = openai_request.build_request(GPT, ctx, StreamOptions(session_id="s1", cache_retention="long")).body
    assert body["prompt_cache_key"] == "s1" and body["prompt_cache_retention"] == "24h"
    local = Model("q", "q", OPENAI_COMPLETIONS, "local", "http://127.0.0.1:8000/v1")
    body = openai_request.build_request(
        local, ctx, StreamOptions(session_id="s1", cache_retention="long")
    ).body
    assert body["prompt_cache_retention"] == "24h" and body["prompt_cache_key"] == "s1"
    opted_out = Model(**{**local.__dict__, "compat": {"supportsLongCacheRetention": False}})
    body = openai_request.build_request(
        opted_out, ctx, StreamOptions(session_id="s1", cache_retention="long")
    ).body
    assert "prompt_cache_key" not in body and "prompt_cache_retention" not in body
    body = openai_request.build_request(GPT, ctx, StreamOptions(session_id="s1", cache_retention="none")).body
    assert "prompt_cache_key" not in body and "prompt_cache_retention" not in body


EDIT_TOOL = ToolSpec(
    "edit",
    "Edit a file",
    {
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "edits": {
                "type": "array",
                "items": {"type": "object", "properties": {"oldText": {"type": "string"}}},
            },
            "limit": {"type": "number"},
        },
        "required": ["path", "edits"],
    },
    strict=True,
)
STRICT_EDIT_SCHEMA = {
    "type": "object",
    "properties": {
        "path": {"type": "string"},
        "edits": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"oldText": {"anyOf": [{"type": "string"}, {"type": "null"}]}},
                "required": ["oldText"],
                "additionalProperties": False,
            },
        },
        "limit": {"anyOf": [{"type": "number"}, {"type": "null"}]},
    },
    "required": ["path", "edits", "limit"],
    "additionalProperties": False,
}


def test_openai_strict_schemas_only_where_compat_takes_them() -> None:
    ctx = LlmContext("SYS", [{"role": "user", "content": "x", "timestamp": 1}], [EDIT_TOOL, TOOL])
    plain = openai_request.build_request(GPT, ctx, StreamOptions()).body["tools"]
    assert all("strict" not in t["function"] for t in plain)
    assert plain[0]["function"]["parameters"] == dict(EDIT_TOOL.parameters)
    strict_model = dataclasses.replace(GPT, compat={"supportsStrictMode": True})
    tools = openai_request.build_request(strict_model, ctx, StreamOptions()).body["tools"]
    assert tools[0]["function"]["strict"] is True and tools[0]["function"]["parameters"] == STRICT_EDIT_SCHEMA
    # a tool that does not ask for strict sampling is sent strict: false with its own schema
    assert tools[1]["function"]["strict"] is False and tools[1]["function"]["parameters"] == dict(
        TOOL.parameters
    )
    unsupported = ToolSpec("x", "x", {"type": "object", "properties": {"a": {"$ref": "#/x"}}}, strict=True)
    fallback = openai_request.build_request(strict_model, LlmContext("", [], [unsupported]), StreamOptions())
    assert fallback.body["tools"][0]["function"]["strict"] is False


def test_anthropic_strict_tools_where_the_model_takes_them() -> None:
    ctx = LlmContext("SYS", [{"role": "user", "content": "x", "timestamp": 1}], [EDIT_TOOL, TOOL])
    plain = anthropic_request.build_request(CLAUDE, ctx, StreamOptions()).body["tools"]
    assert all("strict" not in t for t in plain)
    assert plain[1]["input_schema"] == {
        "type": "object",
        "properties": {"path": {"type": "string"}},
        "required": ["path"],
    }
    no_required = ToolSpec("ls", "List", {"type": "object", "properties": {}})
    listed = anthropic_request.build_request(CLAUDE, LlmContext("", [], [no_required]), StreamOptions()).body
    assert listed["tools"][0]["input_schema"] == {"type": "object", "properties": {}, "required": []}
    strict_model = dataclasses.replace(CLAUDE, compat={"supportsStrictTools": True})
    tools = anthropic_request.build_request(strict_model, ctx, StreamOptions()).body["tools"]
    assert tools[0]["strict"] is True and tools[0]["input_schema"] == STRICT_EDIT_SCHEMA
    assert "strict" not in tools[1]
    bounded = ToolSpec(
        "b", "b", {"type": "object", "properties": {"n": {"type": "number", "minimum": 1}}}, strict=True
    )
    kept = anthropic_request.build_request(strict_model, LlmContext("", [], [bounded]), StreamOptions()).body
    assert "strict" not in kept["tools"][0]  # Anthropic's strict mode refuses minimum: sent as before


def test_anthropic_error_result_images_follow_the_tool_results() -> None:
    history = [
        {"role": "user", "content": "go", "timestamp": 1},
        assistant(CLAUDE, call("toolu_1"), call("toolu_2")),
        result("toolu_1", "broken", images=2, error=True),
        result("toolu_2", "fine", images=1),
    ]
    body = anthropic_request.build_request(
        CLAUDE, LlmContext("", history), StreamOptions(cache_retention="none")
    ).body
    assert body["messages"][2]["content"] == [
        {"type": "tool_result", "tool_use_id": "toolu_1", "is_error": True,
         "content": "broken\n(image attached after the tool results)"},
        {"type": "tool_result", "tool_use_id": "toolu_2", "is_error": False,
         "content": [{"type": "text", "text": "fine"},
                     {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"}}]},
        {"type": "text", "text": "Images from the error result of tool call toolu_1 (read):"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"}},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"}},
    ]  # fmt: skip


def test_openai_thinking_as_text_and_non_null_content() -> None:
    local = Model("m", "m", OPENAI_COMPLETIONS, "vllm", "http://127.0.0.1:8000/v1", reasoning=True,
                  compat={"requiresThinkingAsText": True})  # fmt: skip
    history = [
        {"role": "user", "content": "q", "timestamp": 1},
        assistant(local, {"type": "thinking", "thinking": "t1"}, {"type": "thinking", "thinking": "t2"},
                  {"type": "text", "text": "A"}, {"type": "text", "text": " "}, stop="stop"),
        assistant(local, call("c1")),
        result("c1", "  "),
    ]  # fmt: skip
    messages = openai_request.build_request(local, LlmContext("", history), StreamOptions()).body["messages"]
    assert messages[1]["content"] == [{"type": "text", "text": "t1\n\nt2"}, {"type": "text", "text": "A"}]
    assert messages[2]["content"] is None
    assert messages[3]["content"] == "(no output)"  # a result of only whitespace reads as no output
    non_null = dataclasses.replace(local, compat={"requiresNonNullAssistantContent": True})
    messages = openai_request.build_request(non_null, LlmContext("", history), StreamOptions()).body[
        "messages"
    ]
    assert messages[2]["content"] == ""


def test_long_cache_retention_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    ctx = LlmContext("SYS", [{"role": "user", "content": "hi", "timestamp": 1}], [TOOL])
    assert (
        "ttl"
        not in anthropic_request.build_request(CLAUDE, ctx, StreamOptions()).body["system"][0][
            "cache_control"
        ]
    )
    monkeypatch.setenv("PI_CACHE_RETENTION", "long")
    body = anthropic_request.build_request(CLAUDE, ctx, StreamOptions()).body
    assert body["system"][0]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}
    assert body["tools"][-1]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}
    openai = openai_request.build_request(GPT, ctx, StreamOptions(session_id="s1")).body
    assert openai["prompt_cache_key"] == "s1" and openai["prompt_cache_retention"] == "24h"
    local = Model("m", "m", OPENAI_COMPLETIONS, "vllm", "http://127.0.0.1:8000/v1")
    assert (
        openai_request.build_request(local, ctx, StreamOptions(session_id="s1")).body["prompt_cache_key"]
        == "s1"
    )
    explicit = anthropic_request.build_request(CLAUDE, ctx, StreamOptions(cache_retention="short")).body
    assert explicit["system"][0]["cache_control"] == {"type": "ephemeral"}  # an explicit choice wins


def test_sampling_params_by_thinking_level_merge_over_the_models() -> None:
    model = dataclasses.replace(
        GPT,
        sampling_params={"top_p": 0.8, "top_k": 20},
        sampling_params_by_level={"high": {"top_p": 0.95}, "off": {"temperature": 0.2}},
    )
    ctx = LlmContext("", [{"role": "user", "content": "x", "timestamp": 1}])
    high = openai_request.build_request(model, ctx, StreamOptions(thinking_level="high")).body
    assert (high["top_p"], high["top_k"]) == (0.95, 20) and "temperature" not in high
    off = openai_request.build_request(model, ctx, StreamOptions(sampling_params={"top_k": 5})).body
    assert (off["top_p"], off["top_k"], off["temperature"]) == (0.8, 5, 0.2)


@pytest.mark.parametrize("module", [openai_request, anthropic_request])
def test_a_built_request_carries_its_body_serialised_once(module: Any) -> None:
    """What is sent is the JSON of the body checked for surrogates (one serialisation of a whole request);
    a body that had one to strip is left for the sender to serialise, stripped."""
    model = GPT if module is openai_request else CLAUDE
    request = module.build_request(
        model, LlmContext("SYS", [{"role": "user", "content": "hi 🐍", "timestamp": 1}]), StreamOptions()
    )
    assert request.content == json.dumps(request.body, ensure_ascii=False).encode("utf-8")
    odd = module.build_request(
        model, LlmContext("SYS", [{"role": "user", "content": "a\udc00b", "timestamp": 1}]), StreamOptions()
    )
    assert odd.content is None and "a\udc00b" not in json.dumps(odd.body) and "ab" in json.dumps(odd.body)
