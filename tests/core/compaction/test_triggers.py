"""Checkpoint decisions: thresholds, stale usage, overflow recovery and the same-model guard."""

from __future__ import annotations

from typing import Any

from piwork.core.compaction.settings import CompactionSettings
from piwork.core.compaction.triggers import (
    LENGTH_RECOVERY_FAILED,
    OVERFLOW_RECOVERY_FAILED,
    CompactionCheck,
    check_after_response,
    due_before_next_response,
)
from piwork.core.llm.types import Model

from .builders import assistant, user

MODEL = Model(
    id="m1",
    name="M",
    api="anthropic-messages",
    provider="test",
    base_url="http://x",
    context_window=100_000,
    max_tokens=8000,
)
SETTINGS = CompactionSettings()  # threshold: 100000 - 16384 = 83616


def check(message: dict[str, Any], **overrides: Any) -> CompactionCheck:
    args: dict[str, Any] = {
        "model": MODEL,
        "settings": SETTINGS,
        "messages": [user("hi"), message],
        "latest_compaction_ms": None,
        "skip_aborted": True,
        "recovery_attempted": False,
        "strict_pi": False,
    }
    args.update(overrides)
    return check_after_response(message, **args)


def test_threshold_from_the_last_response_usage() -> None:
    assert check(assistant("x", usage=83_616)).action == "none"
    assert check(assistant("x", usage=83_617)) == CompactionCheck("compact", "threshold")
    assert check(assistant("x", usage=10**6), settings=CompactionSettings(enabled=False)).action == "none"


def test_stale_usage_from_before_the_latest_compaction_is_ignored() -> None:
    message = assistant("x", usage=10**6, ts=5)
    assert check(message, latest_compaction_ms=message["timestamp"]).action == "none"
    assert check(message, latest_compaction_ms=message["timestamp"] - 1).action == "compact"


def test_errored_response_falls_back_to_estimates_unless_usage_is_stale() -> None:
    old = assistant("x", usage=90_000, ts=1)
    failed = {**assistant("", ts=9), "stopReason": "error", "errorMessage": "500 server error"}
    messages = [user("hi"), old, failed]
    assert check(failed, messages=messages) == CompactionCheck("compact", "threshold")
    assert check(failed, messages=messages, latest_compaction_ms=old["timestamp"]).action == "none"


def test_overflow_error_compacts_and_retries_once() -> None:
    failed = {
        **assistant("", ts=9),
        "stopReason": "error",
        "errorMessage": "prompt is too long: 213462 tokens > 200000",
    }
    first = check(failed, skip_aborted=False)
    assert first == CompactionCheck("compact", "overflow", will_retry=True, drop_failed_message=True)
    second = check(failed, recovery_attempted=True)
    assert second == CompactionCheck("recovery_failed", "overflow", error_message=OVERFLOW_RECOVERY_FAILED)


def test_silent_overflow_compacts_without_retry() -> None:
    message = assistant("done", usage=0)
    message["usage"]["input"] = 100_001
    assert check(message) == CompactionCheck("compact", "overflow")


def test_length_stop_below_the_models_cap_is_recoverable() -> None:
    truncated = assistant("partial", usage=5000, stop="length")
    truncated["usage"]["output"] = 100
    assert check(truncated).will_retry
    assert check(truncated, recovery_attempted=True).error_message == LENGTH_RECOVERY_FAILED
    truncated["usage"]["output"] = 8000  # hit the model's own cap: a normal length stop
    assert check(truncated).action == "none"


def test_overflow_from_another_model_gets_only_the_threshold_check() -> None:
    failed = {
        **assistant("", ts=9),
        "stopReason": "error",
        "errorMessage": "prompt is too long",
        "model": "other-model",
    }
    assert check(failed).action == "none"


def test_aborted_and_unknown_window() -> None:
    aborted = {**assistant("x", usage=10**6), "stopReason": "aborted"}
    assert check(aborted).action == "none"
    assert check(aborted, skip_aborted=False).action == "compact"  # checkpoint C still looks at it
    no_window = Model(**{**MODEL.__dict__, "context_window": 0})
    message = assistant("x", usage=10)
    assert check(message, model=no_window).action == "none"
    # the reference compares against a negative threshold and compacts after every run
    assert check(message, model=no_window, strict_pi=True).action == "compact"
    assert check(message, model=None).action == "none"


def test_checkpoint_a_uses_the_context_estimate() -> None:
    messages = [user("hi"), assistant("x", usage=83_000), user("y" * 4000)]
    assert due_before_next_response(messages, MODEL, SETTINGS)
    assert not due_before_next_response(messages[:2], MODEL, SETTINGS)
    assert not due_before_next_response(messages, None, SETTINGS)


def test_context_edits_replace_the_replys_usage_in_the_threshold() -> None:
    # the reply measured 90,000 tokens, but an edit left most of it out since
    assert check(assistant("x", usage=90_000), edited_context_tokens=20_000).action == "none"
    assert check(assistant("x", usage=10), edited_context_tokens=83_617) == CompactionCheck(
        "compact", "threshold"
    )


def test_model_overrides_give_per_model_token_settings() -> None:
    settings = {
        "compaction": {
            "reserveTokens": 10_000,
            "keepRecentTokens": 5_000,
            "modelOverrides": {
                "anthropic/claude-sonnet-4-5": {"reserveTokens": 30_000},
                "openai/gpt": {"keepRecentTokens": 1_000, "reserveTokens": -1},
            },
        }
    }
    sonnet = CompactionSettings.from_settings(settings, "anthropic/claude-sonnet-4-5")
    assert (sonnet.reserve_tokens, sonnet.keep_recent_tokens) == (30_000, 5_000)
    gpt = CompactionSettings.from_settings(settings, "openai/gpt")
    assert (gpt.reserve_tokens, gpt.keep_recent_tokens) == (10_000, 1_000)  # a negative override is ignored
    other = CompactionSettings.from_settings(settings, "x/y")
    assert (other.reserve_tokens, other.keep_recent_tokens) == (10_000, 5_000)
