"""Summary requests in isolation: response checks, retries, options, usage arithmetic, prompts."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any

import pytest

from piwork.core.compaction import prompts
from piwork.core.compaction.summarize import (
    RetryPolicy,
    Summarizer,
    SummaryCancelled,
    SummaryFailed,
    SummaryRetry,
    SummaryRetryEnd,
    branch_prompt,
    check_response,
    history_prompt,
    request_summary,
)
from piwork.core.llm.streaming import complete
from piwork.core.llm.types import Model
from piwork.core.usage import combine_usage
from tests.support.loopback_server import Failure, LoopbackServer, Text, Turn

from .builders import user

pytestmark = pytest.mark.anyio

MODEL = Model(id="m", name="M", api="anthropic-messages", provider="p", base_url="http://x", max_tokens=0)


def test_response_checks_in_order() -> None:
    with pytest.raises(SummaryFailed, match=r"^Summarization failed: Unknown error$"):
        check_response({"stopReason": "error", "content": []}, "Summarization")
    with pytest.raises(SummaryCancelled):
        check_response({"stopReason": "aborted", "content": []}, "Summarization")
    with pytest.raises(SummaryFailed, match="attempted to call a tool"):
        check_response(
            {"stopReason": "stop", "content": [{"type": "toolCall", "name": "x"}]}, "Summarization"
        )
    ok = {
        "stopReason": "stop",
        "content": [
            {"type": "thinking", "thinking": "t"},
            {"type": "text", "text": "a"},
            {"type": "text", "text": "b"},
        ],
    }
    assert check_response(ok, "Summarization") == "a\nb"


def test_retry_policy_from_settings() -> None:
    assert RetryPolicy.from_settings({"enabled": False, "maxRetries": 5, "baseDelayMs": "x"}) == RetryPolicy(
        enabled=False, max_retries=5, base_delay_ms=2000
    )
    assert RetryPolicy.from_settings(None) == RetryPolicy()


def test_usage_is_summed_field_by_field() -> None:
    a = {
        "input": 1,
        "output": 2,
        "cacheRead": 3,
        "cacheWrite": 4,
        "totalTokens": 10,
        "reasoning": 1,
        "cost": {"input": 0.1, "output": 0.2, "cacheRead": 0, "cacheWrite": 0, "total": 0.3},
    }
    b = {
        "input": 10,
        "output": 20,
        "cacheRead": 30,
        "cacheWrite": 40,
        "totalTokens": 100,
        "cost": {"input": 1, "output": 2, "cacheRead": 0, "cacheWrite": 0, "total": 3},
    }
    total = combine_usage(a, b)
    assert total is not None
    assert (total["input"], total["output"], total["totalTokens"], total["reasoning"]) == (11, 22, 110, 1)
    assert "cacheWrite1h" not in total and total["cost"]["total"] == pytest.approx(3.3)
    assert combine_usage(None, b) == b and combine_usage(None, None) is None


def test_prompt_assembly() -> None:
    messages = [user("fix the bug")]
    first = history_prompt(messages, None, None)
    assert (
        first == "<conversation>\n[User]: fix the bug\n</conversation>\n\n" + prompts.COMPACTION_INSTRUCTIONS
    )
    update = history_prompt(messages, "tests", "OLD")
    assert update.index("</conversation>") < update.index("<previous-summary>\nOLD\n</previous-summary>\n\n")
    assert update.endswith(prompts.UPDATE_INSTRUCTIONS + "\n\nAdditional focus: tests")
    assert branch_prompt(messages, "mine", True).endswith("</conversation>\n\nmine")
    assert branch_prompt(messages, None, True).endswith(prompts.BRANCH_INSTRUCTIONS)
    for skeleton in (prompts.COMPACTION_INSTRUCTIONS, prompts.UPDATE_INSTRUCTIONS):
        for heading in (
            "## Goal",
            "## Constraints & Preferences",
            "## Progress",
            "### Done",
            "### In Progress",
            "### Blocked",
            "## Key Decisions",
            "## Next Steps",
            "## Critical Context",
        ):
            assert heading in skeleton
    assert "## Critical Context" not in prompts.BRANCH_INSTRUCTIONS
    for heading in ("## Original Request", "## Early Progress", "## Context for Suffix"):
        assert heading in prompts.TURN_PREFIX_INSTRUCTIONS


def _summarizer(loopback: LoopbackServer, retries: list[SummaryRetry], **kw: Any) -> Summarizer:
    async def no_wait(seconds: float) -> None:
        return None

    return Summarizer(
        model=loopback.anthropic_model(**kw),
        complete=complete,
        api_key="k",
        retry=RetryPolicy(True, 2, 100),
        on_retry=retries.append,
        sleep=no_wait,
        thinking_level="high",
    )


OVERLOADED = '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}'


async def test_retries_stop_after_the_budget(loopback: LoopbackServer) -> None:
    retries: list[SummaryRetry] = []
    loopback.script(*[Turn(failure=Failure.http(529, OVERLOADED)) for _ in range(3)])
    with pytest.raises(SummaryFailed, match="Summarization failed: 529"):
        await request_summary(
            _summarizer(loopback, retries),
            "p",
            max_tokens=100,
            label="Summarization",
            source="compaction",
            use_reasoning=True,
        )
    assert [r.delay_ms for r in retries] == [100, 200] and len(loopback.requests) == 3


async def test_non_retryable_errors_fail_at_once(loopback: LoopbackServer) -> None:
    retries: list[SummaryRetry] = []
    loopback.script(
        Turn(failure=Failure.http(401, '{"type":"error","error":{"type":"authentication_error"}}'))
    )
    with pytest.raises(SummaryFailed):
        await request_summary(
            _summarizer(loopback, retries),
            "p",
            max_tokens=100,
            label="Summarization",
            source="compaction",
            use_reasoning=True,
        )
    assert retries == [] and len(loopback.requests) == 1


async def test_reasoning_follows_the_thinking_level_and_key_stays_out_of_the_body(
    loopback: LoopbackServer,
) -> None:
    loopback.script(Turn([Text("ok")]), Turn([Text("ok")]))
    summarizer = _summarizer(loopback, [])
    await request_summary(
        summarizer, "p", max_tokens=2000, label="S", source="compaction", use_reasoning=True
    )
    await request_summary(
        summarizer, "p", max_tokens=2000, label="S", source="branchSummary", use_reasoning=False
    )
    with_reasoning, without = (r.body for r in loopback.requests)
    assert with_reasoning["thinking"]["type"] == "enabled"
    assert without.get("thinking", {"type": "disabled"}) == {"type": "disabled"}
    assert loopback.requests[0].headers["x-api-key"] == "k" and "k" not in str(with_reasoning["messages"])


async def test_cancelling_during_the_backoff_ends_the_retry(loopback: LoopbackServer) -> None:
    waiting = asyncio.Event()

    async def wait_forever(seconds: float) -> None:
        waiting.set()
        await asyncio.Event().wait()

    ends: list[SummaryRetryEnd] = []
    summarizer = replace(_summarizer(loopback, []), sleep=wait_forever, on_retry_end=ends.append)
    loopback.script(Turn(failure=Failure.http(529, OVERLOADED)))
    task = asyncio.ensure_future(
        request_summary(
            summarizer, "p", max_tokens=100, label="Summarization", source="compaction", use_reasoning=True
        )
    )
    await waiting.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert ends == [SummaryRetryEnd("compaction", 1, False, "Retry cancelled")]


async def test_summary_requests_ask_for_the_models_own_output_limit(loopback: LoopbackServer) -> None:
    loopback.script(Turn([Text("ok")]))
    summarizer = replace(_summarizer(loopback, [], max_tokens=30000), thinking_level="off")
    await request_summary(summarizer, "p", label="S", source="compaction", use_reasoning=True)
    assert loopback.requests[0].body["max_tokens"] == 30000  # not a share of reserveTokens
