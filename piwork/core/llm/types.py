"""The provider streaming contract: models, request context, options and the events a stream yields.

A provider turns ``(Model, LlmContext, StreamOptions)`` into an async iterator of ``AssistantEvent``s.
Every stream ends with exactly one ``DoneEvent`` or ``ErrorEvent`` whose ``message`` is the complete
assistant message dict, in Pi's JSON shape so sessions interoperate. Providers never raise
for request failures (HTTP errors, broken streams, timeouts, cancellation): they end with ``ErrorEvent``
whose message has ``stopReason`` ``"error"`` or ``"aborted"`` and an ``errorMessage`` written for people.

Stopping a request: set ``StreamOptions.abort`` (an ``asyncio.Event``); the adapter closes the HTTP
response and the stream ends with an ``ErrorEvent`` (``stopReason`` ``"aborted"``) carrying whatever had
arrived. Plain cancellation of the task iterating the stream also works: the response is closed and
``CancelledError`` propagates as usual (no final event in that case).

``partial`` on the events is the live message being built (the same dict every time, mutated as
deltas arrive), so consumers that keep it must copy it.
"""

from __future__ import annotations

import asyncio
import enum
import os
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from piwork.core.llm.reply_limits import ReplyBudget
from piwork.core.settings_schema import HTTP_IDLE_TIMEOUT_MS, PROVIDER_MAX_RETRY_DELAY_MS, PROVIDER_TIMEOUT_MS
from piwork.core.vocabulary import (
    ANTHROPIC_MESSAGES,
    OPENAI_COMPLETIONS,
    SUPPORTED_APIS,
    THINKING_LEVELS,
    CacheRetention,
    ThinkingLevel,
)

# The words are the vocabulary's; they are named here too for the modules that speak of models.
__all__ = [
    "ANTHROPIC_MESSAGES",
    "OPENAI_COMPLETIONS",
    "SUPPORTED_APIS",
    "THINKING_LEVELS",
    "CacheRetention",
    "ThinkingLevel",
]

# Pi-shaped JSON objects (messages, content blocks, usage) are plain dicts at the edges.
Message = dict[str, Any]


@dataclass(frozen=True)
class CostTier:
    """Prices applied to a whole request whose prompt exceeds ``input_tokens_above`` tokens."""

    input_tokens_above: int
    input: float
    output: float
    cache_read: float
    cache_write: float


@dataclass(frozen=True)
class ModelCost:
    """USD per million tokens."""

    input: float = 0.0
    output: float = 0.0
    cache_read: float = 0.0
    cache_write: float = 0.0
    tiers: tuple[CostTier, ...] = ()


@dataclass(frozen=True)
class Model:
    """One model as the registry knows it (Pi's model JSON, in Python names)."""

    id: str
    name: str
    api: str
    provider: str
    base_url: str
    reasoning: bool = False
    input: tuple[str, ...] = ("text",)
    context_window: int = 128000
    max_tokens: int = 16384
    cost: ModelCost = field(default_factory=ModelCost)
    headers: Mapping[str, str] = field(default_factory=dict, repr=False)  # may carry credentials
    compat: Mapping[str, Any] = field(default_factory=dict)
    # Level -> provider value (str), None = unsupported; a missing level uses the default mapping.
    thinking_level_map: Mapping[str, str | None] | None = None
    sampling_params: Mapping[str, Any] = field(default_factory=dict)
    # per thinking level, merged over sampling_params (OpenAI-compatible requests)
    sampling_params_by_level: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    input_limits: Mapping[str, Any] = field(default_factory=dict)  # kept as models.json gives them
    prompt_cache: Mapping[str, Any] = field(default_factory=dict)

    def __hash__(self) -> int:  # the mapping fields are not hashable; identity is enough for sets/dicts
        return hash((self.provider, self.id, self.api, self.base_url))

    @property
    def supports_images(self) -> bool:
        return "image" in self.input

    @property
    def api_supported(self) -> bool:
        return self.api in SUPPORTED_APIS


@dataclass(frozen=True)
class ToolSpec:
    """A tool as the model sees it: name, description and a JSON schema for its arguments."""

    name: str
    description: str
    parameters: Mapping[str, Any]
    strict: bool = False  # prefers strict sampling: sent strict where the model's compat allows it


@dataclass(frozen=True)
class LlmContext:
    """What one request sends: system prompt, LLM messages (user/assistant/toolResult only), tools."""

    system_prompt: str
    messages: list[Message]
    tools: list[ToolSpec] = field(default_factory=list)


# The transport limits default to their settings' declarations.
def _seconds_or_none(ms: int) -> float | None:
    return ms / 1000 if ms > 0 else None


def default_cache_retention() -> CacheRetention:
    """``long`` when the environment asks for it (``PI_CACHE_RETENTION=long``, as Pi reads it), else
    ``short``: long keeps Anthropic's cache marks an hour and OpenAI's prompt cache a day."""
    return "long" if os.environ.get("PI_CACHE_RETENTION") == "long" else "short"


def _idle_timeout() -> float | None:
    return _seconds_or_none(HTTP_IDLE_TIMEOUT_MS.default)


def _total_timeout() -> float | None:
    return _seconds_or_none(PROVIDER_TIMEOUT_MS.default)


def _max_retry_delay_ms() -> int:
    return PROVIDER_MAX_RETRY_DELAY_MS.default


@dataclass(frozen=True)
class StreamOptions:
    """Per-request options. Times are seconds; ``None`` disables that limit."""

    api_key: str | None = field(default=None, repr=False)
    max_tokens: int | None = None  # None = the model's maxTokens (clamped to the context window)
    thinking_level: ThinkingLevel = "off"
    thinking_budgets: Mapping[str, int] | None = None  # minimal/low/medium/high overrides
    temperature: float | None = None
    headers: Mapping[str, str] | None = field(default=None, repr=False)  # caller headers win over the model's
    sampling_params: Mapping[str, Any] | None = None
    session_id: str | None = None  # OpenAI prompt_cache_key
    cache_retention: CacheRetention = field(default_factory=default_cache_retention)
    connect_timeout: float | None = 30.0
    idle_timeout: float | None = field(default_factory=_idle_timeout)  # longest wait for the next bytes
    total_timeout: float | None = field(default_factory=_total_timeout)  # the whole request
    max_retries: int = 0  # provider-level retries (retry.provider.maxRetries)
    max_retry_delay_ms: int = field(default_factory=_max_retry_delay_ms)  # 0 = no cap
    proxy: str | None = None
    # Set it to stop the request: the stream then ends with an ErrorEvent whose stopReason is "aborted".
    abort: asyncio.Event | None = field(default=None, compare=False)
    # The time limits shared by the attempts of one reply (None: this request is a reply of its own).
    reply: ReplyBudget | None = field(default=None, compare=False, repr=False)


class ErrorKind(enum.Enum):
    """Why a stream failed; the agent retries ``retryable`` kinds and compacts on ``CONTEXT_OVERFLOW``."""

    AUTH = "auth"
    RATE_LIMIT = "rate_limit"
    QUOTA = "quota"
    OVERLOADED = "overloaded"
    SERVER = "server"
    CONTEXT_OVERFLOW = "context_overflow"
    INVALID_REQUEST = "invalid_request"
    NETWORK = "network"
    TIMEOUT = "timeout"
    MALFORMED_STREAM = "malformed_stream"
    REFUSAL = "refusal"
    ABORTED = "aborted"
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class ErrorInfo:
    """Classification of a failed request. ``retry_after_ms`` comes from the server's headers."""

    kind: ErrorKind
    status: int | None = None
    retry_after_ms: int | None = None
    retryable: bool = False


# ---- events -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class StartEvent:
    partial: Message
    type: Literal["start"] = "start"


@dataclass(frozen=True)
class TextStartEvent:
    content_index: int
    partial: Message
    type: Literal["text_start"] = "text_start"


@dataclass(frozen=True)
class TextDeltaEvent:
    content_index: int
    delta: str
    partial: Message
    type: Literal["text_delta"] = "text_delta"


@dataclass(frozen=True)
class TextEndEvent:
    content_index: int
    content: str
    partial: Message
    type: Literal["text_end"] = "text_end"


@dataclass(frozen=True)
class ThinkingStartEvent:
    content_index: int
    partial: Message
    type: Literal["thinking_start"] = "thinking_start"


@dataclass(frozen=True)
class ThinkingDeltaEvent:
    content_index: int
    delta: str
    partial: Message
    type: Literal["thinking_delta"] = "thinking_delta"


@dataclass(frozen=True)
class ThinkingEndEvent:
    content_index: int
    content: str
    partial: Message
    type: Literal["thinking_end"] = "thinking_end"


@dataclass(frozen=True)
class ToolCallStartEvent:
    content_index: int
    partial: Message
    type: Literal["toolcall_start"] = "toolcall_start"


@dataclass(frozen=True)
class ToolCallDeltaEvent:
    content_index: int
    delta: str  # raw JSON fragment of the arguments; the block's "arguments" holds the lenient parse
    partial: Message
    type: Literal["toolcall_delta"] = "toolcall_delta"


@dataclass(frozen=True)
class ToolCallEndEvent:
    content_index: int
    tool_call: Message  # {"type": "toolCall", "id", "name", "arguments"}
    partial: Message
    type: Literal["toolcall_end"] = "toolcall_end"


@dataclass(frozen=True)
class DoneEvent:
    reason: Literal["stop", "length", "toolUse"]
    message: Message
    type: Literal["done"] = "done"


@dataclass(frozen=True)
class ErrorEvent:
    reason: Literal["error", "aborted"]
    message: Message  # stopReason "error"/"aborted", errorMessage set
    error: ErrorInfo
    type: Literal["error"] = "error"


AssistantEvent = (
    StartEvent
    | TextStartEvent
    | TextDeltaEvent
    | TextEndEvent
    | ThinkingStartEvent
    | ThinkingDeltaEvent
    | ThinkingEndEvent
    | ToolCallStartEvent
    | ToolCallDeltaEvent
    | ToolCallEndEvent
    | DoneEvent
    | ErrorEvent
)


class Provider(Protocol):
    """One wire protocol (``model.api``). ``stream`` never raises for request failures."""

    def stream(
        self, model: Model, context: LlmContext, options: StreamOptions
    ) -> AsyncIterator[AssistantEvent]: ...


def empty_usage() -> dict[str, Any]:
    return {
        "input": 0,
        "output": 0,
        "cacheRead": 0,
        "cacheWrite": 0,
        "totalTokens": 0,
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
    }
