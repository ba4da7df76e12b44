"""Retry policy, queues and the JSON form of events."""

from __future__ import annotations

import json

from piwork.core.agent.events import AgentEnd, MessageUpdate, ToolExecutionEnd, event_to_json
from piwork.core.agent.queues import MessageQueue
from piwork.core.agent.retry import RetrySettings, backoff_delay_ms, decide_retry
from piwork.core.llm.types import TextDeltaEvent
from piwork.core.settings_schema import STEERING_MODE
from piwork.core.settings_values import SettingValues


def test_retry_settings_from_mapping_ignore_bad_values() -> None:
    settings = RetrySettings.from_mapping(
        {"enabled": "yes", "maxRetries": 5, "baseDelayMs": True, "provider": {"maxRetryDelayMs": 1000}}
    )
    assert settings == RetrySettings(enabled=True, max_retries=5, base_delay_ms=2000, max_retry_delay_ms=1000)
    assert RetrySettings.from_mapping(None) == RetrySettings()


def test_retry_settings_survive_numbers_json_cannot_make_whole() -> None:
    huge = json.loads('{"maxRetries": 1e999, "baseDelayMs": -5, "provider": {"maxRetryDelayMs": 1e999}}')
    settings = RetrySettings.from_mapping(huge)
    assert settings == RetrySettings(max_retries=3, base_delay_ms=2000, max_retry_delay_ms=60000)
    assert RetrySettings.from_mapping({"maxRetries": float("nan")}).max_retries == 3


def test_backoff_and_retry_after() -> None:
    settings = RetrySettings()
    assert [backoff_delay_ms(a, settings) for a in (1, 2, 3)] == [2000, 4000, 8000]
    assert decide_retry(1, settings, None).delay_ms == 2000
    assert decide_retry(2, settings, 10_000).delay_ms == 10_000  # the server's wait is longer
    assert decide_retry(3, settings, 1_000).delay_ms == 8000  # the backoff is longer
    assert not decide_retry(4, settings, None).retry
    refused = decide_retry(1, settings, 120_000)
    assert not refused.retry and refused.refused_reason and "120 s" in refused.refused_reason
    assert decide_retry(1, RetrySettings(max_retry_delay_ms=0), 120_000).delay_ms == 120_000
    assert not decide_retry(1, RetrySettings(enabled=False), None).retry


def test_queue_modes() -> None:
    queue = MessageQueue(SettingValues.of({"steeringMode": "bogus"}).value(STEERING_MODE))
    assert queue.mode == STEERING_MODE.default == "one-at-a-time"
    for n in range(3):
        queue.enqueue({"n": n})
    assert queue.drain() == [{"n": 0}]
    queue.mode = SettingValues.of({"steeringMode": "all"}).value(STEERING_MODE)
    assert queue.drain() == [{"n": 1}, {"n": 2}] and not queue and queue.drain() == []


def test_event_json_uses_camel_case_and_drops_partials() -> None:
    partial = {"role": "assistant", "content": [{"type": "text", "text": "hi"}], "usage": {"input": 1}}
    update = event_to_json(MessageUpdate(partial, TextDeltaEvent(0, "hi", partial)))
    assert update == {
        "type": "message_update",
        "usage": {"input": 1},
        "assistantMessageEvent": {"contentIndex": 0, "delta": "hi", "type": "text_delta"},
    }
    end = event_to_json(ToolExecutionEnd("c1", "read", {"content": []}, False))
    assert end == {
        "type": "tool_execution_end",
        "toolCallId": "c1",
        "toolName": "read",
        "result": {"content": []},
        "isError": False,
    }
    assert json.dumps(event_to_json(AgentEnd([partial], True)))
