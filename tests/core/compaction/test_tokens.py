from __future__ import annotations

import math

import pytest

from piwork.core.compaction.settings import BranchSummarySettings, CompactionSettings
from piwork.core.compaction.tokens import estimate_context_tokens, estimate_tokens, should_compact
from piwork.core.usage import calculate_context_tokens

from .builders import assistant, call, result, user


def test_chars_are_utf16_units_rounded_up() -> None:
    assert estimate_tokens(user("")) == 0
    assert estimate_tokens(user("abcd")) == 1
    assert estimate_tokens(user("abcde")) == 2
    assert estimate_tokens(user("🙂🙂")) == 1  # 4 UTF-16 units, len() would say 2


def test_images_count_4800_chars_and_empty_text_is_skipped() -> None:
    message = {
        "role": "user",
        "content": [{"type": "image", "data": "x"}, {"type": "text"}, {"type": "text", "text": "a"}],
    }
    assert estimate_tokens(message) == math.ceil(4801 / 4)


def test_tool_call_arguments_use_javascript_json() -> None:
    # JSON.stringify: no spaces, 1.0 -> 1, 1e21 -> 1e+21, -0 -> 0, non-ASCII raw
    message = assistant("", call("read", path="é", n=1.0, big=1e21, z=-0.0))
    expected = len("read") + len('{"path":"é","n":1,"big":1e+21,"z":0}')
    assert estimate_tokens(message) == math.ceil(expected / 4)


def test_other_roles() -> None:
    assert estimate_tokens({"role": "bashExecution", "command": "ls", "output": "a\nb"}) == 2
    assert estimate_tokens({"role": "compactionSummary", "summary": "s" * 9}) == 3
    assert estimate_tokens({"role": "system", "content": "x" * 100}) == 25
    system = {"role": "system", "content": "", "sections": {"rules": "r" * 10, "gone": None}}
    system["toolsAdded"] = [{"name": "read"}]  # + len('[{"name":"read"}]') = 17
    assert estimate_tokens(system) == 7
    assert estimate_tokens({"role": "other", "content": "x" * 100}) == 0
    assert estimate_tokens({"role": "assistant", "content": "plain string"}) == 0


@pytest.mark.parametrize(
    "message",
    [
        {"role": "user", "content": None},
        {"role": "assistant", "content": [{"type": "toolCall", "id": "1", "name": "read"}]},
        {"role": "bashExecution", "command": "ls"},
    ],
)
def test_structurally_broken_messages_raise(message: dict) -> None:
    with pytest.raises(TypeError):
        estimate_tokens(message)


def test_calculate_context_tokens() -> None:
    assert (
        calculate_context_tokens({"input": 1, "output": 2, "cacheRead": 3, "cacheWrite": 4, "totalTokens": 0})
        == 10
    )
    assert (
        calculate_context_tokens({"input": 1, "output": 2, "cacheRead": 3, "cacheWrite": 4, "totalTokens": 7})
        == 7
    )
    assert math.isnan(calculate_context_tokens({"input": 5, "output": 0}))


def test_context_estimate_uses_last_valid_usage_plus_trailing_estimates() -> None:
    messages = [
        user("x" * 40),
        assistant("a", usage=500),
        assistant("b", usage=900, stop="error"),  # errored usage is not trusted
        result("y" * 8),
    ]
    estimate = estimate_context_tokens(messages)
    assert estimate.last_usage_index == 1
    assert estimate.usage_tokens == 500
    assert estimate.trailing_tokens == estimate_tokens(messages[2]) + 2
    assert estimate.tokens == 500 + estimate.trailing_tokens


def test_context_estimate_without_usage_estimates_everything() -> None:
    messages = [user("x" * 40), assistant("a", usage=0)]
    estimate = estimate_context_tokens(messages)
    assert estimate.to_json() == {
        "tokens": 11,
        "usageTokens": 0,
        "trailingTokens": 11,
        "lastUsageIndex": None,
    }


def test_should_compact_is_strict_and_respects_enabled() -> None:
    settings = CompactionSettings()
    assert not should_compact(200000 - 16384, 200000, settings)
    assert should_compact(200000 - 16383, 200000, settings)
    assert not should_compact(10**9, 200000, CompactionSettings(enabled=False))


def test_settings_from_mapping_fall_back_on_bad_values() -> None:
    settings = CompactionSettings.from_settings(
        {"compaction": {"enabled": False, "reserveTokens": "lots", "keepRecentTokens": 5000}}
    )
    assert settings == CompactionSettings(enabled=False, reserve_tokens=16384, keep_recent_tokens=5000)
    assert CompactionSettings.from_settings(None) == CompactionSettings()
    assert CompactionSettings.from_settings({"compaction": []}) == CompactionSettings()
    branch = BranchSummarySettings.from_settings(
        {"branchSummary": {"reserveTokens": 1000, "skipPrompt": True}}
    )
    assert branch == BranchSummarySettings(reserve_tokens=1000, skip_prompt=True)
