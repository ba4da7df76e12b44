"""Entry points: ``stream`` dispatches on ``model.api``; ``complete`` drains a stream into the final message."""

from __future__ import annotations

import importlib
from collections.abc import AsyncIterator

from piwork.core.llm.types import (
    ANTHROPIC_MESSAGES,
    OPENAI_COMPLETIONS,
    AssistantEvent,
    DoneEvent,
    ErrorEvent,
    ErrorInfo,
    ErrorKind,
    LlmContext,
    Message,
    Model,
    Provider,
    StreamOptions,
)
from piwork.core.llm.wire import error_message

# api -> module exporting PROVIDER (imported on first use so a missing optional part never breaks startup)
_PROVIDER_MODULES = {
    ANTHROPIC_MESSAGES: "piwork.core.llm.anthropic",
    OPENAI_COMPLETIONS: "piwork.core.llm.openai",
}


def provider_for(api: str) -> Provider | None:
    module_name = _PROVIDER_MODULES.get(api)
    if module_name is None:
        return None
    provider: Provider = importlib.import_module(module_name).PROVIDER
    return provider


async def stream(model: Model, context: LlmContext, options: StreamOptions) -> AsyncIterator[AssistantEvent]:
    """Stream one assistant message. Always ends with one ``DoneEvent`` or ``ErrorEvent``."""
    provider = provider_for(model.api)
    if provider is None:
        text = f'piwork cannot talk to API "{model.api}" (model {model.provider}/{model.id})'
        yield ErrorEvent("error", error_message(model, text), ErrorInfo(ErrorKind.INVALID_REQUEST))
        return
    async for event in provider.stream(model, context, options):
        yield event


async def complete(model: Model, context: LlmContext, options: StreamOptions) -> Message:
    """Run a request to its end and return the final assistant message (``stopReason`` tells how it went)."""
    final: Message | None = None
    async for event in stream(model, context, options):
        if isinstance(event, DoneEvent | ErrorEvent):
            final = event.message
    if final is None:  # a provider bug; still answer with a message rather than raising
        return error_message(model, "the provider ended without a final message")
    return final
