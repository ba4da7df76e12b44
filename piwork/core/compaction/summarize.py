"""One summarization request: prompt in, checked summary text and usage out.

The model is reached through a ``CompleteFn`` (``piwork.core.llm.streaming.complete`` in the app,
any coroutine with the same signature in tests), so this module never needs a network.

A response is accepted only when it ended normally: an ``error`` stop, a ``length`` stop (the
summary would be cut off) or a tool call make the request fail with ``SummaryFailed`` and nothing
is written by the callers. An ``aborted`` stop raises ``SummaryCancelled``. Transient provider
errors are retried with the agent's retry settings; each retry is reported to ``on_retry`` and the
end of a retried request (success, final failure or cancellation) to ``on_retry_end``.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import piwork.core.compaction.prompts as prompts
from piwork.core.compaction.retry_policy import RetryPolicy
from piwork.core.compaction.serialize import serialize_conversation
from piwork.core.errors import PiworkError
from piwork.core.llm.errors import is_retryable_text
from piwork.core.llm.types import LlmContext, Message, Model, StreamOptions, ThinkingLevel
from piwork.core.messages import convert_to_llm

CompleteFn = Callable[[Model, LlmContext, StreamOptions], Awaitable[Message]]
SummarySource = Literal["compaction", "branchSummary"]


class SummaryFailed(PiworkError):
    """The summarizer could not produce a usable summary; the message is written for users."""


class SummaryCancelled(PiworkError):
    """The request was aborted (by the user or a hook) before a summary arrived."""

    def __init__(self, message: str = "Summarization cancelled") -> None:
        super().__init__(message)


@dataclass(frozen=True)
class SummaryRetry:
    """A failed summary request will be tried again after ``delay_ms``."""

    source: SummarySource
    attempt: int
    max_attempts: int
    delay_ms: int
    error_message: str


@dataclass(frozen=True)
class SummaryRetryEnd:
    """A summary request that was retried has finished (``final_error`` when it still failed)."""

    source: SummarySource
    attempt: int
    success: bool
    final_error: str | None = None


async def _sleep_seconds(seconds: float) -> None:
    await asyncio.sleep(seconds)


@dataclass(frozen=True)
class Summarizer:
    """Everything needed to ask a model for a summary.

    ``base_options`` carries transport settings (timeouts, proxy); the summarizer sets the output
    cap, reasoning level, api key/headers, disables prompt caching and uses a fresh session id per
    request.
    """

    model: Model
    complete: CompleteFn
    api_key: str | None = None
    headers: Mapping[str, str] | None = None
    thinking_level: ThinkingLevel = "off"
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    on_retry: Callable[[SummaryRetry], None] | None = None
    on_retry_end: Callable[[SummaryRetryEnd], None] | None = None
    base_options: StreamOptions = field(default_factory=StreamOptions)
    sleep: Callable[[float], Awaitable[None]] = _sleep_seconds


@dataclass(frozen=True)
class SummaryText:
    text: str
    usage: dict[str, Any] | None


def _request_context(prompt_text: str) -> LlmContext:
    user = {
        "role": "user",
        "content": [{"type": "text", "text": prompt_text}],
        "timestamp": int(time.time() * 1000),
    }
    return LlmContext(system_prompt=prompts.SYSTEM_PROMPT, messages=[user], tools=[])


def _options(summarizer: Summarizer, max_tokens: int | None, use_reasoning: bool) -> StreamOptions:
    level: ThinkingLevel = "off"
    if use_reasoning and summarizer.model.reasoning and summarizer.thinking_level != "off":
        level = summarizer.thinking_level
    return replace(
        summarizer.base_options,
        api_key=summarizer.api_key,
        headers=summarizer.headers,
        max_tokens=None if max_tokens is None else max(1, max_tokens),
        thinking_level=level,
        cache_retention="none",
        session_id=str(uuid.uuid4()),
    )


async def _complete_with_retry(
    summarizer: Summarizer, context: LlmContext, options: StreamOptions, source: SummarySource
) -> Message:
    policy = summarizer.retry
    max_attempts = policy.max_retries if policy.enabled else 0
    attempt = 0

    def retry_ended(success: bool, final_error: str | None) -> None:
        if attempt > 0 and summarizer.on_retry_end is not None:
            summarizer.on_retry_end(SummaryRetryEnd(source, attempt, success, final_error))

    try:
        while True:
            response = await summarizer.complete(summarizer.model, context, options)
            error_text = str(response.get("errorMessage") or "")
            failed = response.get("stopReason") == "error"
            if not failed or attempt >= max_attempts or not is_retryable_text(error_text):
                retry_ended(not failed, (error_text or "Unknown error") if failed else None)
                return response
            attempt += 1
            delay_ms = policy.backoff_ms(attempt)
            if summarizer.on_retry is not None:
                summarizer.on_retry(
                    SummaryRetry(source, attempt, max_attempts, delay_ms, error_text or "Unknown error")
                )
            await summarizer.sleep(delay_ms / 1000)
    except asyncio.CancelledError:
        retry_ended(False, "Retry cancelled")
        raise


def check_response(response: Mapping[str, Any], label: str) -> str:
    """The summary text of an acceptable response; raises for anything that must not be saved."""
    stop = response.get("stopReason")
    if stop == "aborted":
        raise SummaryCancelled()
    if stop == "error":
        raise SummaryFailed(f"{label} failed: {response.get('errorMessage') or 'Unknown error'}")
    if stop == "length":
        raise SummaryFailed(f"{label} failed: generation hit the token cap and the summary is incomplete")
    content = response.get("content")
    blocks = content if isinstance(content, list) else []
    if any(isinstance(b, Mapping) and b.get("type") == "toolCall" for b in blocks):
        raise SummaryFailed(f"{label} attempted to call a tool")
    if isinstance(content, str):
        return content
    return "\n".join(
        b["text"]
        for b in blocks
        if isinstance(b, Mapping) and b.get("type") == "text" and isinstance(b.get("text"), str)
    )


async def request_summary(
    summarizer: Summarizer,
    prompt_text: str,
    *,
    max_tokens: int | None = None,
    label: str,
    source: SummarySource,
    use_reasoning: bool,
) -> SummaryText:
    """Send one summary request and return its checked text and usage.

    Without ``max_tokens`` the request asks for the model's own output limit: a summary cut short
    by a smaller cap would be rejected as incomplete.
    """
    context = _request_context(prompt_text)
    options = _options(summarizer, max_tokens, use_reasoning)
    response = await _complete_with_retry(summarizer, context, options, source)
    text = check_response(response, label)
    usage = response.get("usage")
    return SummaryText(text, dict(usage) if isinstance(usage, Mapping) else None)


# ---- prompt assembly (pure) ---------------------------------------------------------------------


def serialize_messages(messages: Sequence[Mapping[str, Any]]) -> str:
    """Agent messages → LLM messages → summarizer text."""
    return serialize_conversation(convert_to_llm([dict(m) for m in messages]))


def history_prompt(
    messages: Sequence[Mapping[str, Any]], custom_instructions: str | None, previous_summary: str | None
) -> str:
    """Prompt of a compaction summary: first checkpoint, or an update of ``previous_summary``."""
    instructions = prompts.UPDATE_INSTRUCTIONS if previous_summary else prompts.COMPACTION_INSTRUCTIONS
    return (
        prompts.conversation_block(serialize_messages(messages))
        + prompts.previous_summary_block(previous_summary)
        + instructions
        + prompts.focus_suffix(custom_instructions)
    )


def turn_prefix_prompt(messages: Sequence[Mapping[str, Any]], custom_instructions: str | None = None) -> str:
    return (
        prompts.conversation_block(serialize_messages(messages))
        + prompts.TURN_PREFIX_INSTRUCTIONS
        + prompts.focus_suffix(custom_instructions)
    )


def branch_prompt(
    messages: Sequence[Mapping[str, Any]], custom_instructions: str | None, replace_instructions: bool
) -> str:
    return prompts.conversation_block(serialize_messages(messages)) + prompts.branch_instructions(
        custom_instructions, replace_instructions
    )
