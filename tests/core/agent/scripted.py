"""A scripted provider for loop tests: yields the real event types of ``piwork.core.llm.types``.

Each reply is a list of content blocks plus a stop reason (or an error text). Text is streamed in
small deltas so ``message_update`` ordering is exercised. ``hold`` makes a reply wait mid-stream on an
event, so tests can abort at a known point without sleeping.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from piwork.core.context.estimate import CHARS4
from piwork.core.llm.errors import classify
from piwork.core.llm.types import (
    AssistantEvent,
    DoneEvent,
    ErrorEvent,
    ErrorInfo,
    ErrorKind,
    LlmContext,
    Model,
    StartEvent,
    StreamOptions,
    TextDeltaEvent,
    TextEndEvent,
    TextStartEvent,
    ToolCallDeltaEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
    empty_usage,
)

MODEL = Model(
    id="scripted-1",
    name="Scripted",
    api="anthropic-messages",
    provider="scripted",
    base_url="http://127.0.0.1:9",
    context_window=200000,
    max_tokens=8000,
)


@dataclass
class Reply:
    blocks: list[dict[str, Any]] = field(default_factory=list)
    stop: str = "stop"
    error: str | None = None
    usage: dict[str, int] | None = None
    hold: asyncio.Event | None = None  # wait on it after the first text delta
    retry_after_ms: int | None = None


def text(t: str, **kw: Any) -> Reply:
    return Reply([{"type": "text", "text": t}], **kw)


def calls(*specs: tuple[str, str, dict[str, Any]], stop: str = "toolUse") -> Reply:
    return Reply([{"type": "toolCall", "id": i, "name": n, "arguments": a} for i, n, a in specs], stop)


async def _first(*aws: Any) -> None:
    tasks = [asyncio.ensure_future(a) for a in aws]
    await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    for task in tasks:
        task.cancel()


class ScriptedProvider:
    def __init__(self, replies: list[Reply]) -> None:
        self.replies = list(replies)
        self.requests: list[LlmContext] = []
        self.options: list[StreamOptions] = []
        self.started = asyncio.Event()
        self.ignore_abort = False  # behave like a provider that never looks at options.abort
        # replies without a usage of their own report the request they answer as their input count
        # (chars/4 of the request, as a real provider counts what it received) instead of a fixed 100
        self.count_requests = False

    def _input_count(self, context: LlmContext) -> int:
        return CHARS4.count_context(context) if self.count_requests else 100

    async def stream(
        self, model: Model, context: LlmContext, options: StreamOptions
    ) -> AsyncIterator[AssistantEvent]:
        self.requests.append(context)
        self.options.append(options)
        reply = self.replies.pop(0) if self.replies else text("(no more replies)")
        partial: dict[str, Any] = {
            "role": "assistant",
            "content": [],
            "api": model.api,
            "provider": model.provider,
            "model": model.id,
            "usage": empty_usage(),
            "stopReason": "stop",
            "timestamp": 1,
        }
        usage = reply.usage or {"input": self._input_count(context), "output": 20}
        partial["usage"].update(usage)
        partial["usage"]["totalTokens"] = sum(
            partial["usage"][k] for k in ("input", "output", "cacheRead", "cacheWrite")
        )
        yield StartEvent(partial)
        self.started.set()
        for block in reply.blocks:
            index = len(partial["content"])
            if block["type"] == "text":
                partial["content"].append({"type": "text", "text": ""})
                yield TextStartEvent(index, partial)
                words = block["text"].split(" ")
                for n, word in enumerate(words):
                    delta = word if n == 0 else " " + word
                    partial["content"][index]["text"] += delta
                    yield TextDeltaEvent(index, delta, partial)
                    if reply.hold is not None and not self.ignore_abort and options.abort is not None:
                        await _first(reply.hold.wait(), options.abort.wait())
                        if options.abort.is_set():
                            partial["stopReason"] = "aborted"
                            partial["errorMessage"] = "Request aborted by the user."
                            yield ErrorEvent("aborted", partial, ErrorInfo(ErrorKind.ABORTED))
                            return
                    elif reply.hold is not None:
                        await reply.hold.wait()
                yield TextEndEvent(index, block["text"], partial)
            else:
                tc = {"type": "toolCall", "id": block["id"], "name": block["name"], "arguments": {}}
                partial["content"].append(tc)
                yield ToolCallStartEvent(index, partial)
                raw = json.dumps(block["arguments"])
                tc["arguments"] = block["arguments"]
                yield ToolCallDeltaEvent(index, raw, partial)
                yield ToolCallEndEvent(index, dict(tc), partial)
        if reply.error is not None:
            partial["stopReason"] = "error"
            partial["errorMessage"] = reply.error
            info = classify(reply.error, retry_after_ms=reply.retry_after_ms)
            yield ErrorEvent("error", partial, info)
            return
        partial["stopReason"] = reply.stop
        yield DoneEvent(reply.stop, partial)  # type: ignore[arg-type]
