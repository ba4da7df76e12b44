"""Request-side normalisation (spec §1.1), independent of either wire format."""

from __future__ import annotations

import copy
from typing import Any

from piwork.core.llm.normalize import (
    MISSING_RESULT_TEXT,
    USER_IMAGE_PLACEHOLDER,
    anthropic_tool_id,
    normalize_messages,
    strip_surrogates,
)
from piwork.core.llm.types import ANTHROPIC_MESSAGES, Model

TARGET = Model("claude-x", "X", ANTHROPIC_MESSAGES, "anthropic", "https://a", input=("text",))
IMAGE = {"type": "image", "data": "AA==", "mimeType": "image/png"}


def assistant(model_id: str, *blocks: dict[str, Any], stop: str = "stop") -> dict[str, Any]:
    return {"role": "assistant", "content": list(blocks), "api": ANTHROPIC_MESSAGES, "provider": "anthropic",
            "model": model_id, "stopReason": stop}  # fmt: skip


def test_same_model_keeps_signed_thinking_even_if_empty_and_redacted() -> None:
    blocks = [
        {"type": "thinking", "thinking": "", "thinkingSignature": "sig"},
        {"type": "thinking", "thinking": "[hidden]", "thinkingSignature": "opaque", "redacted": True},
        {"type": "thinking", "thinking": "   "},
    ]
    out = normalize_messages([assistant("claude-x", *blocks)], TARGET)
    assert out[0]["content"] == blocks[:2]


def test_other_model_thinking_is_left_out() -> None:
    """Pi 1.6 leaves another model's thinking out (0.85 replayed it as text)."""
    blocks = [
        {"type": "thinking", "thinking": "idea", "thinkingSignature": "sig"},
        {"type": "thinking", "thinking": "[hidden]", "thinkingSignature": "opaque", "redacted": True},
        {"type": "thinking", "thinking": ""},
        {"type": "text", "text": "answer", "textSignature": "t"},
    ]
    out = normalize_messages([assistant("other", *blocks)], TARGET)
    assert out[0]["content"] == [{"type": "text", "text": "answer"}]


def test_images_runs_become_one_placeholder_and_inputs_are_not_mutated() -> None:
    messages = [
        {"role": "user", "content": [IMAGE, IMAGE, {"type": "text", "text": "see"}, IMAGE]},
        {"role": "user"},
    ]
    before = copy.deepcopy(messages)
    out = normalize_messages(messages, TARGET)
    assert out[0]["content"] == [
        {"type": "text", "text": USER_IMAGE_PLACEHOLDER},
        {"type": "text", "text": "see"},
        {"type": "text", "text": USER_IMAGE_PLACEHOLDER},
    ]
    assert out[1]["content"] == []
    assert messages == before


def test_orphan_tool_calls_get_synthetic_results_in_place() -> None:
    call = {"type": "toolCall", "id": "a", "name": "read", "arguments": {}}
    call_b = {"type": "toolCall", "id": "b", "name": "ls", "arguments": {}}
    messages = [
        assistant("claude-x", call, call_b, stop="toolUse"),
        {"role": "toolResult", "toolCallId": "b", "toolName": "ls", "content": [], "isError": False},
        {"role": "user", "content": "go on"},
        assistant("claude-x", {**call, "id": "c"}, stop="toolUse"),
    ]
    out = normalize_messages(messages, TARGET)
    assert [m["role"] for m in out] == [
        "assistant",
        "toolResult",
        "toolResult",
        "user",
        "assistant",
        "toolResult",
    ]
    assert out[2]["toolCallId"] == "a" and out[2]["isError"] is True
    assert out[2]["content"] == [{"type": "text", "text": MISSING_RESULT_TEXT}]
    assert out[5]["toolCallId"] == "c"


def test_id_rewriting_and_surrogates() -> None:
    assert anthropic_tool_id("call|" + "x" * 100) == "call_" + "x" * 59
    assert strip_surrogates({"k\ud800": ["a\udc00b", 1, None]}) == {"k": ["ab", 1, None]}
    assert strip_surrogates("🐍") == "🐍"


def test_openai_tool_ids_from_the_responses_api() -> None:
    from piwork.core.llm.normalize import openai_tool_id

    assert openai_tool_id("call_1|fc_2", False) == "call_1_fc_2"
    long_id = "call_abc|" + "x+/=" * 120
    rewritten = openai_tool_id(long_id, False)
    assert (
        len(rewritten) <= 40
        and rewritten.startswith("call_abc_")
        and rewritten == openai_tool_id(long_id, True)
    )
    assert openai_tool_id("y" * 50, True) == "y" * 40 and openai_tool_id("y" * 50, False) == "y" * 50


def test_surrogates_are_stripped_from_a_value_json_cannot_write() -> None:
    marker = object()
    body = {"keep": marker, "messages": [{"content": "a\udc00b"}, ("t\ud800",)]}
    stripped = strip_surrogates(body)
    assert stripped["keep"] is marker and stripped["messages"][0] == {"content": "ab"}
    clean = {"messages": [{"content": "plain 🐍"}] * 3}
    assert strip_surrogates(clean) is clean  # nothing to strip: the value itself, not a copy


def test_unchanged_messages_are_passed_on_not_copied_and_inputs_stay_as_they_were() -> None:
    """A long session's replies are nearly all the same model's, with nothing to change: they go on as
    they are; a reply that loses a block is a copy, and nothing given is mutated."""
    user = {"role": "user", "content": [{"type": "text", "text": "hi"}, IMAGE]}
    kept = assistant(
        "claude-x", {"type": "text", "text": "ok"}, {"type": "toolCall", "id": "c1", "name": "ls"}
    )
    result = {
        "role": "toolResult",
        "toolCallId": "c1",
        "toolName": "ls",
        "content": [{"type": "text", "text": "."}],
    }
    empty_thinking = assistant(
        "claude-x", {"type": "thinking", "thinking": " "}, {"type": "text", "text": "b"}
    )
    other = assistant("gpt-y", {"type": "text", "text": "c", "textSignature": "s"})
    given = [user, kept, result, empty_thinking, other]
    before = copy.deepcopy(given)
    images = Model("claude-x", "X", ANTHROPIC_MESSAGES, "anthropic", "https://a", input=("text", "image"))
    out = normalize_messages(given, images)
    assert out[0] is user and out[1] is kept and out[2] is result
    assert out[3] is not empty_thinking and out[3]["content"] == [{"type": "text", "text": "b"}]
    assert out[4] is not other and out[4]["content"] == [{"type": "text", "text": "c"}]
    assert normalize_messages(given, TARGET)[0]["content"] == [
        given[0]["content"][0],
        {"type": "text", "text": USER_IMAGE_PLACEHOLDER},
    ]
    assert given == before
