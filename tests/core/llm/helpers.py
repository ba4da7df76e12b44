"""Small helpers for provider tests: run a stream to its end and keep every event."""

from __future__ import annotations

import asyncio
from typing import Any

from piwork.core.llm.streaming import stream
from piwork.core.llm.types import AssistantEvent, LlmContext, Model, StreamOptions, ToolSpec

READ_TOOL = ToolSpec(
    "read",
    "Read a file",
    {
        "type": "object",
        "properties": {"path": {"type": "string"}},
        "required": ["path"],
        "additionalProperties": False,
    },
)


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text, "timestamp": 1}


def context(
    *messages: dict[str, Any], tools: list[ToolSpec] | None = None, system: str = "Be brief."
) -> LlmContext:
    return LlmContext(system, list(messages) or [user("hi")], tools if tools is not None else [READ_TOOL])


async def collect_async(model: Model, ctx: LlmContext, options: StreamOptions) -> list[AssistantEvent]:
    return [event async for event in stream(model, ctx, options)]


def collect(
    model: Model, ctx: LlmContext | None = None, options: StreamOptions | None = None
) -> list[AssistantEvent]:
    return asyncio.run(
        asyncio.wait_for(
            collect_async(model, ctx or context(), options or StreamOptions(api_key="sk-test")), 30
        )
    )


def types_of(events: list[AssistantEvent]) -> list[str]:
    return [e.type for e in events]
