"""Anthropic Messages adapter: SSE events → assistant events and the final message."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

from piwork.core.llm.anthropic_request import build_request, sends_strict_tools
from piwork.core.llm.errors import classify
from piwork.core.llm.lenient_json import StreamingArguments
from piwork.core.llm.reply_text import ReplyText
from piwork.core.llm.sse import SseEvent
from piwork.core.llm.transport import StreamFailure, stream_request
from piwork.core.llm.types import (
    AssistantEvent,
    ErrorEvent,
    ErrorInfo,
    ErrorKind,
    LlmContext,
    Message,
    Model,
    StartEvent,
    StreamOptions,
    TextDeltaEvent,
    TextEndEvent,
    TextStartEvent,
    ThinkingDeltaEvent,
    ThinkingEndEvent,
    ThinkingStartEvent,
    ToolCallDeltaEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
)
from piwork.core.llm.wire import finish_usage, new_assistant_message

REDACTED_THINKING_TEXT = "[reasoning hidden by the provider]"
_STOP_REASONS = {
    "end_turn": "stop",
    "pause_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "tool_use": "toolUse",
}
_EVENTS = frozenset(
    {
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    }
)
_USAGE_FIELDS = (
    ("input_tokens", "input"),
    ("output_tokens", "output"),
    ("cache_read_input_tokens", "cacheRead"),
    ("cache_creation_input_tokens", "cacheWrite"),
)


class AnthropicParser:
    """Builds one assistant message from Anthropic's stream events."""

    def __init__(self, model: Model) -> None:
        self.model = model
        self.message: Message = new_assistant_message(model)
        self._blocks: dict[int, int] = {}  # event index -> content index
        self._json: dict[int, StreamingArguments] = {}  # content index -> tool-argument JSON so far
        self._size = ReplyText()  # grows text and thinking in linear time, up to a size limit
        self._started = False
        self._stopped = False
        self._raw_stop: str | None = None
        self._failure: str | None = None

    def feed(self, event: SseEvent) -> list[AssistantEvent]:
        if event.event == "error":
            raise StreamFailure(event.data or "error event without details")
        named = event.event != "message"
        if named and event.event not in _EVENTS:
            return []  # ping and event types this version does not know
        try:
            data = json.loads(event.data) if event.data else {}
        except ValueError:
            if not named:
                return []  # an unnamed event is not part of this protocol: ignore it
            raise StreamFailure(
                f"Malformed stream: invalid JSON in a {event.event} event",
                ErrorInfo(ErrorKind.MALFORMED_STREAM),
            ) from None
        if not isinstance(data, dict):
            return []
        # Servers that omit "event:" lines still name the type inside the data.
        kind = event.event if named else str(data.get("type", ""))
        if kind == "error":
            raise StreamFailure(event.data)
        if kind not in _EVENTS:
            return []
        handler: Callable[[dict[str, Any]], list[AssistantEvent]] = getattr(self, "_on_" + kind)
        return handler(data)

    def finish(self) -> list[AssistantEvent]:
        if not self._started:
            raise StreamFailure(
                "Malformed stream: it ended before message_start", ErrorInfo(ErrorKind.MALFORMED_STREAM)
            )
        if not self._stopped:
            raise StreamFailure(
                "stream ended before message_stop", ErrorInfo(ErrorKind.MALFORMED_STREAM, retryable=True)
            )
        if self._raw_stop is None:
            raise StreamFailure(
                "stream ended without a stop reason", ErrorInfo(ErrorKind.MALFORMED_STREAM, retryable=True)
            )
        if self._failure is not None:
            info = (
                ErrorInfo(ErrorKind.REFUSAL)
                if self._raw_stop in ("refusal", "sensitive")
                else classify(self._failure)
            )
            raise StreamFailure(self._failure, info)
        return []

    # ---- event handlers -----------------------------------------------------------------------

    def _on_message_start(self, data: dict[str, Any]) -> list[AssistantEvent]:
        self._started = True
        msg = data.get("message") or {}
        if msg.get("id"):
            self.message["responseId"] = msg["id"]
        if msg.get("model") and msg["model"] != self.model.id:
            self.message["responseModel"] = msg["model"]  # e.g. a dated snapshot behind an alias
        self._apply_usage(msg.get("usage") or {}, start=True)
        return []

    def _apply_usage(self, raw: dict[str, Any], start: bool = False) -> None:
        """``message_start`` usage sets the 1-hour cache writes (0 when not given); later usage changes
        only the fields it carries."""
        usage = self.message["usage"]
        if start:
            usage["cacheWrite1h"] = 0
        for source, target in _USAGE_FIELDS:
            value = raw.get(source)
            if isinstance(value, int | float):
                usage[target] = int(value)
        creation = raw.get("cache_creation")
        if isinstance(creation, dict) and isinstance(creation.get("ephemeral_1h_input_tokens"), int | float):
            usage["cacheWrite1h"] = int(creation["ephemeral_1h_input_tokens"])
        details = raw.get("output_tokens_details")
        if isinstance(details, dict) and isinstance(details.get("thinking_tokens"), int | float):
            usage["reasoning"] = int(details["thinking_tokens"])
        finish_usage(self.model, usage)

    def _on_content_block_start(self, data: dict[str, Any]) -> list[AssistantEvent]:
        raw = data.get("content_block") or {}
        kind = raw.get("type")
        content = self.message["content"]
        index = len(content)
        block: dict[str, Any]
        event: AssistantEvent
        if kind == "text":
            block = {"type": "text", "text": raw.get("text") or ""}
            event = TextStartEvent(index, self.message)
        elif kind == "thinking":
            block = {
                "type": "thinking",
                "thinking": raw.get("thinking") or "",
                "thinkingSignature": raw.get("signature") or "",
            }
            event = ThinkingStartEvent(index, self.message)
        elif kind == "redacted_thinking":
            block = {
                "type": "thinking",
                "thinking": REDACTED_THINKING_TEXT,
                "thinkingSignature": raw.get("data") or "",
                "redacted": True,
            }
            event = ThinkingStartEvent(index, self.message)
        elif kind == "tool_use":
            block = {
                "type": "toolCall",
                "id": raw.get("id") or "",
                "name": raw.get("name") or "",
                "arguments": {},
            }
            self._json[index] = StreamingArguments()
            event = ToolCallStartEvent(index, self.message)
        else:
            return []
        self._blocks[int(data.get("index", index))] = index
        content.append(block)
        return [event]

    def _on_content_block_delta(self, data: dict[str, Any]) -> list[AssistantEvent]:
        index = self._blocks.get(int(data.get("index", -1)))
        if index is None:
            return []
        block = self.message["content"][index]
        delta = data.get("delta") or {}
        kind = delta.get("type")
        if kind == "text_delta" and block["type"] == "text":
            text = self._size.add(block, "text", delta.get("text") or "")
            return [TextDeltaEvent(index, text, self.message)]
        if kind == "thinking_delta" and block["type"] == "thinking":
            text = self._size.add(block, "thinking", delta.get("thinking") or "")
            return [ThinkingDeltaEvent(index, text, self.message)]
        if kind == "signature_delta" and block["type"] == "thinking":
            block["thinkingSignature"] = (block.get("thinkingSignature") or "") + (
                delta.get("signature") or ""
            )
            return []
        if kind == "input_json_delta" and block["type"] == "toolCall":
            fragment = delta.get("partial_json") or ""
            arguments = self._json[index]
            if arguments.append(fragment):
                block["arguments"] = arguments.value
            return [ToolCallDeltaEvent(index, fragment, self.message)]
        return []

    def _on_content_block_stop(self, data: dict[str, Any]) -> list[AssistantEvent]:
        index = self._blocks.pop(int(data.get("index", -1)), None)
        if index is None:
            return []
        block = self.message["content"][index]
        if block["type"] == "text":
            return [TextEndEvent(index, block["text"], self.message)]
        if block["type"] == "thinking":
            return [ThinkingEndEvent(index, block["thinking"], self.message)]
        arguments = self._json.pop(index, None)
        block["arguments"] = arguments.final() if arguments is not None else {}
        return [ToolCallEndEvent(index, block, self.message)]

    def _on_message_delta(self, data: dict[str, Any]) -> list[AssistantEvent]:
        delta = data.get("delta") or {}
        raw_stop = delta.get("stop_reason")
        if raw_stop:
            self._raw_stop = str(raw_stop)
            self.message["rawStopReason"] = self._raw_stop
            mapped = _STOP_REASONS.get(self._raw_stop)
            if mapped is not None:
                self.message["stopReason"] = mapped
                self._failure = None
            else:
                details = delta.get("stop_details") or data.get("stop_details") or {}
                explanation = details.get("explanation") if isinstance(details, dict) else None
                self._failure = explanation or f"The model stopped with reason: {self._raw_stop}"
        self._apply_usage(data.get("usage") or {})
        return []

    def _on_message_stop(self, data: dict[str, Any]) -> list[AssistantEvent]:
        self._stopped = True
        return []


# What Claude answers (HTTP 400, invalid_request_error) to a request whose strict tools exceed its limits
# (about 20 strict tools, or 16 optional or union-typed parameters across them)
STRICT_LIMIT_MESSAGES = (
    "The compiled grammar is too large",
    "Too many strict tools (",
    "Schemas contains too many parameters with union types (",
)
_MAX_REMEMBERED = 10_000


class AnthropicProvider:
    def __init__(self) -> None:
        # sessions whose strict tools were rejected: their later requests go non-strict at once (the tool
        # set rarely changes, and going back to strict would rewrite the tools and miss the prompt cache)
        self._over_strict_limits: dict[str, None] = {}

    def stream(
        self, model: Model, context: LlmContext, options: StreamOptions
    ) -> AsyncIterator[AssistantEvent]:
        strict = options.session_id not in self._over_strict_limits
        if not strict or not sends_strict_tools(model, context):
            return self._attempt(model, context, options, strict)
        return self._with_strict_fallback(model, context, options)

    def _attempt(
        self, model: Model, context: LlmContext, options: StreamOptions, strict: bool, parser: Any = None
    ) -> AsyncIterator[AssistantEvent]:
        return stream_request(
            model,
            options,
            lambda: build_request(model, context, options, strict),
            parser if parser is not None else AnthropicParser(model),
        )

    async def _with_strict_fallback(
        self, model: Model, context: LlmContext, options: StreamOptions
    ) -> AsyncIterator[AssistantEvent]:
        """The request with strict tools; when Claude rejects them for its limits before answering, the
        same request once more with every tool non-strict, the message noting the fallback."""
        held: StartEvent | None = None
        rejected: str | None = None
        async for event in self._attempt(model, context, options, True):
            if isinstance(event, StartEvent) and held is None and rejected is None:
                held = event  # said only once it is known that this attempt answers
                continue
            if held is not None and isinstance(event, ErrorEvent) and _over_strict_limits(event):
                rejected = str(event.message.get("errorMessage") or "")
                break
            if held is not None:
                yield held
                held = None
            yield event
        if rejected is None:
            if held is not None:
                yield held
            return
        if options.session_id is not None:
            self._remember_over_limits(options.session_id)
        parser = AnthropicParser(model)
        parser.message["diagnostics"] = [
            {
                "type": "anthropic_strict_tools_fallback",
                "timestamp": int(time.time() * 1000),
                "error": {"message": rejected},
                "details": {"reason": "strict_tool_limits_exceeded"},
            }
        ]
        async for event in self._attempt(model, context, options, False, parser):
            yield event

    def _remember_over_limits(self, session_id: str) -> None:
        self._over_strict_limits[session_id] = None
        if len(self._over_strict_limits) > _MAX_REMEMBERED:
            del self._over_strict_limits[next(iter(self._over_strict_limits))]


def _over_strict_limits(event: ErrorEvent) -> bool:
    text = str(event.message.get("errorMessage") or "")
    return (
        event.reason == "error"
        and event.error.kind is ErrorKind.INVALID_REQUEST
        and "invalid_request_error" in text
        and any(limit in text for limit in STRICT_LIMIT_MESSAGES)
    )


PROVIDER = AnthropicProvider()
