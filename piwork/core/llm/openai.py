"""OpenAI Chat Completions adapter (also OpenAI-compatible servers): chunks → events.

This protocol has no per-block end events, so every ``*_end`` event fires when the stream finishes.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from piwork.core.llm.errors import classify
from piwork.core.llm.lenient_json import StreamingArguments
from piwork.core.llm.openai_request import REASONING_FIELDS, build_request, detect_compat
from piwork.core.llm.reply_text import ReplyText
from piwork.core.llm.sse import SseEvent
from piwork.core.llm.transport import StreamFailure, stream_request
from piwork.core.llm.types import (
    AssistantEvent,
    ErrorInfo,
    ErrorKind,
    LlmContext,
    Message,
    Model,
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

_FINISH_REASONS = {
    "stop": "stop",
    "end": "stop",
    "length": "length",
    "tool_calls": "toolUse",
    "function_call": "toolUse",
}


def _int(value: Any) -> int | None:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


class OpenAIParser:
    """Builds one assistant message from Chat Completions chunks."""

    def __init__(self, model: Model, infer_finish_reason: bool = False) -> None:
        self.model = model
        self.message: Message = new_assistant_message(model)
        self._infer_finish = infer_finish_reason
        self._text_index: int | None = None
        self._thinking_index: int | None = None
        self._calls: dict[Any, int] = {}  # stream index (or id) -> content index
        self._json: dict[int, StreamingArguments] = {}
        self._size = ReplyText()  # grows text and thinking in linear time, up to a size limit
        self._finish: str | None = None
        self._done = False

    def feed(self, event: SseEvent) -> list[AssistantEvent]:
        data_text = event.data.strip()
        if self._done or not data_text or event.event not in ("message", "chunk"):
            if event.event == "error":
                raise StreamFailure(event.data or "error event without details")
            return []
        if data_text == "[DONE]":
            self._done = True
            return []
        try:
            chunk = json.loads(data_text)
        except ValueError:
            shown = data_text if len(data_text) <= 200 else data_text[:200] + "…"
            raise StreamFailure(
                f"Malformed stream: a data line is not valid JSON: {shown}",
                ErrorInfo(ErrorKind.MALFORMED_STREAM),
            ) from None
        if not isinstance(chunk, dict):
            return []
        if chunk.get("error"):
            error = chunk["error"]
            raise StreamFailure(
                json.dumps(error, ensure_ascii=False) if not isinstance(error, str) else error
            )
        return self._on_chunk(chunk)

    def _on_chunk(self, chunk: dict[str, Any]) -> list[AssistantEvent]:
        if chunk.get("id") and "responseId" not in self.message:
            self.message["responseId"] = str(chunk["id"])
        if chunk.get("model") and chunk["model"] != self.model.id:
            self.message["responseModel"] = str(chunk["model"])
        choices = chunk.get("choices") or []
        choice = choices[0] if choices and isinstance(choices[0], dict) else {}
        usage = chunk.get("usage") or choice.get("usage")
        if isinstance(usage, dict):
            self._apply_usage(usage)
        if "finish_reason" in choice and choice["finish_reason"] is not None:
            self._finish = str(choice["finish_reason"])
        delta = choice.get("delta") or {}
        events: list[AssistantEvent] = []
        text = delta.get("content")
        if isinstance(text, str) and text:
            events.extend(self._text(text))
        for field_name in REASONING_FIELDS:
            value = delta.get(field_name)
            if isinstance(value, str) and value:
                events.extend(self._thinking(value, field_name))
                break
        for call in delta.get("tool_calls") or []:
            if isinstance(call, dict):
                events.extend(self._tool_call(call))
        return events

    def _apply_usage(self, raw: dict[str, Any]) -> None:
        prompt_details = raw.get("prompt_tokens_details") or {}
        cache_read = _int(prompt_details.get("cached_tokens"))
        if cache_read is None:
            cache_read = _int(raw.get("prompt_cache_hit_tokens"))
        if cache_read is None:
            cache_read = _int(raw.get("cached_tokens")) or 0
        cache_write = _int(prompt_details.get("cache_write_tokens")) or 0
        usage = self.message["usage"]
        usage["cacheRead"] = cache_read
        usage["cacheWrite"] = cache_write
        usage["input"] = max(0, (_int(raw.get("prompt_tokens")) or 0) - cache_read - cache_write)
        usage["output"] = _int(raw.get("completion_tokens")) or 0
        # a subset of the output; written always (0 when the server does not say), as Pi 1.6 does
        details = raw.get("completion_tokens_details") or {}
        usage["reasoning"] = _int(details.get("reasoning_tokens")) or _int(raw.get("reasoning_tokens")) or 0
        finish_usage(self.model, usage)

    def _text(self, text: str) -> list[AssistantEvent]:
        events: list[AssistantEvent] = []
        content = self.message["content"]
        if self._text_index is None:
            self._text_index = len(content)
            content.append({"type": "text", "text": ""})
            events.append(TextStartEvent(self._text_index, self.message))
        text = self._size.add(content[self._text_index], "text", text)
        events.append(TextDeltaEvent(self._text_index, text, self.message))
        return events

    def _thinking(self, text: str, field_name: str) -> list[AssistantEvent]:
        events: list[AssistantEvent] = []
        content = self.message["content"]
        if self._thinking_index is None:
            self._thinking_index = len(content)
            content.append({"type": "thinking", "thinking": "", "thinkingSignature": field_name})
            events.append(ThinkingStartEvent(self._thinking_index, self.message))
        text = self._size.add(content[self._thinking_index], "thinking", text)
        events.append(ThinkingDeltaEvent(self._thinking_index, text, self.message))
        return events

    def _tool_call(self, call: dict[str, Any]) -> list[AssistantEvent]:
        events: list[AssistantEvent] = []
        key: Any = call.get("index")
        if key is None:
            # No index: match by id; a fragment with neither continues the latest call.
            key = call.get("id") or (next(reversed(self._calls)) if self._calls else 0)
        function = call.get("function") or {}
        content = self.message["content"]
        index = self._calls.get(key)
        if index is None:
            index = len(content)
            self._calls[key] = index
            self._json[index] = StreamingArguments()
            content.append(
                {
                    "type": "toolCall",
                    "id": call.get("id") or "",
                    "name": function.get("name") or "",
                    "arguments": {},
                }
            )
            events.append(ToolCallStartEvent(index, self.message))
        block = content[index]
        if call.get("id") and not block["id"]:
            block["id"] = call["id"]
        if function.get("name") and not block["name"]:
            block["name"] = function["name"]
        fragment = function.get("arguments")
        if isinstance(fragment, str) and fragment:
            if self._json[index].append(fragment):
                block["arguments"] = self._json[index].value
            events.append(ToolCallDeltaEvent(index, fragment, self.message))
        return events

    def finish(self) -> list[AssistantEvent]:
        if self._finish is None:
            if not self._infer_finish:
                raise StreamFailure(
                    "stream ended without finish_reason",
                    ErrorInfo(ErrorKind.MALFORMED_STREAM, retryable=True),
                )
            self._finish = "tool_calls" if self._calls else "stop"
        events = self._end_events()
        self.message["rawStopReason"] = self._finish
        mapped = _FINISH_REASONS.get(self._finish)
        if mapped is None:
            text = f"finish_reason: {self._finish}"
            info = ErrorInfo(ErrorKind.REFUSAL) if self._finish == "content_filter" else classify(text)
            raise StreamFailure(text, info)
        self.message["stopReason"] = mapped
        return events

    def _end_events(self) -> list[AssistantEvent]:
        events: list[AssistantEvent] = []
        for index, block in enumerate(self.message["content"]):
            if block["type"] == "text":
                events.append(TextEndEvent(index, block["text"], self.message))
            elif block["type"] == "thinking":
                events.append(ThinkingEndEvent(index, block["thinking"], self.message))
            elif block["type"] == "toolCall":
                arguments = self._json.get(index)
                block["arguments"] = arguments.final() if arguments is not None else {}
                events.append(ToolCallEndEvent(index, block, self.message))
        return events


class OpenAIProvider:
    def stream(
        self, model: Model, context: LlmContext, options: StreamOptions
    ) -> AsyncIterator[AssistantEvent]:
        infer = detect_compat(model).get("supportsFinishReason", True) is False
        return stream_request(
            model, options, lambda: build_request(model, context, options), OpenAIParser(model, infer)
        )


PROVIDER = OpenAIProvider()
