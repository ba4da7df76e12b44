"""The low-level agent loop: prompt → stream → run tool calls → append results → repeat.

It works on Pi-shaped message dicts and turns them into LLM messages only at the request boundary
(``convert_to_llm``, then the optional per-request ``transform_context``). It never raises for provider
failures: a failed or aborted stream ends the run with that assistant message. Everything the outside
world needs (model, prompt, tools, queues, hooks) comes through :class:`LoopConfig` so the same loop serves
the GUI, headless mode and tests.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace

from piwork.core.agent.abort import Aborted, AbortSignal
from piwork.core.agent.events import (
    AgentEnd,
    AgentStart,
    Emit,
    Message,
    MessageEnd,
    MessageStart,
    MessageUpdate,
    TurnEnd,
    TurnStart,
)
from piwork.core.agent.tool_calls import (
    AfterToolCall,
    BeforeToolCall,
    ToolBatch,
    ToolExecution,
    tool_calls_of,
)
from piwork.core.errors import PiworkError
from piwork.core.llm.types import (
    AssistantEvent,
    DoneEvent,
    ErrorEvent,
    ErrorInfo,
    LlmContext,
    Model,
    StartEvent,
    StreamOptions,
    ToolSpec,
    empty_usage,
)
from piwork.core.tools.base import ToolContext, ToolRegistry

StreamFn = Callable[[Model, LlmContext, StreamOptions], AsyncIterator[AssistantEvent]]
ABORTED_MESSAGE = "The request was aborted."
# After an abort a provider gets this long to close its response and report what had streamed.
ABORT_GRACE_SECONDS = 2.0


@dataclass(frozen=True)
class RequestSetup:
    """What the next provider request uses; read fresh before every request, so changes apply next turn."""

    model: Model
    system_prompt: str
    tools: Sequence[ToolSpec]
    options: StreamOptions
    registry: ToolRegistry
    tool_context: ToolContext


@dataclass
class CompletedTurn:
    message: Message
    tool_results: list[Message]
    messages: list[Message]  # the run's working context after this turn
    will_continue: bool  # the loop is about to ask the model again


@dataclass(frozen=True)
class CallRecord:
    """One provider call, for telemetry (kept outside the transcript)."""

    message: Message
    started_ms: int
    first_token_ms: int | None
    ended_ms: int
    error: ErrorInfo | None


@dataclass
class LoopConfig:
    stream_fn: StreamFn
    setup: Callable[[], Awaitable[RequestSetup]]
    convert_to_llm: Callable[[list[Message]], list[Message]]
    get_steering: Callable[[], list[Message]] = list
    get_follow_up: Callable[[], list[Message]] = list
    # Per-request view of the context (e.g. context governance); never changes the transcript.
    transform_context: Callable[[list[Message], AbortSignal], Awaitable[list[Message]]] | None = None
    # The context governor's view of the request (after ``transform_context``): the messages to send, or
    # None to withhold the request, which ends the run without asking the model.
    shape_request: Callable[[list[Message], RequestSetup], list[Message] | None] | None = None
    # Awaited just before ``shape_request`` with the same arguments: slow preparation of its decision (token
    # counts of messages not counted yet) done off the event loop, so the decision itself stays quick.
    before_shape: Callable[[list[Message], RequestSetup], Awaitable[None]] | None = None
    # Between a tool batch and the next request (compaction checkpoint A); may return new working messages.
    prepare_next_turn: Callable[[CompletedTurn], Awaitable[list[Message] | None]] | None = None
    before_tool_call: BeforeToolCall | None = None
    after_tool_call: AfterToolCall | None = None
    tool_execution: ToolExecution = "parallel"
    on_call: Callable[[CallRecord], None] | None = None
    # Records an ended message (in the session file) before its message_end is emitted; awaited, so the
    # writing may run in a worker thread while the run waits for it.
    persist: Callable[[Message], Awaitable[None]] | None = None
    abort_grace_seconds: float = ABORT_GRACE_SECONDS
    now_ms: Callable[[], int] = field(default=lambda: int(time.time() * 1000))


class AgentLoop:
    """One run. ``run`` returns the messages the run added (prompts, assistant replies, tool results)."""

    def __init__(self, config: LoopConfig, emit: Emit, signal: AbortSignal) -> None:
        self._config = config
        self._emit = emit
        self._signal = signal
        self.new_messages: list[Message] = []
        self.last_error: ErrorInfo | None = None  # classification of the failed final message, if any
        self._last_setup: RequestSetup

    async def run(
        self, prompts: list[Message], context: list[Message], *, skip_initial_steering: bool = False
    ) -> list[Message]:
        messages = [*context, *prompts]
        self.new_messages = list(prompts)
        self._emit(AgentStart())
        self._emit(TurnStart())
        for prompt in prompts:
            self._emit(MessageStart(prompt))
            await self._end(prompt)
        await self._loop(messages, skip_initial_steering)
        return self.new_messages

    async def resume(self, context: list[Message]) -> list[Message]:
        """Continue from a context ending with a user or tool-result message (retries, overflow recovery)."""
        if not context:
            raise ValueError("Cannot continue: no messages in context")
        if context[-1].get("role") == "assistant":
            raise ValueError("Cannot continue from an assistant message")
        self.new_messages = []
        self._emit(AgentStart())
        self._emit(TurnStart())
        await self._loop(list(context), False)
        return self.new_messages

    async def _loop(self, messages: list[Message], skip_initial_steering: bool) -> None:
        config = self._config
        pending = [] if skip_initial_steering else config.get_steering()
        last_turn: CompletedTurn | None = None
        while True:
            more_tool_calls = True
            while more_tool_calls or pending:
                if last_turn is not None:
                    if config.prepare_next_turn is not None:
                        replaced = await config.prepare_next_turn(last_turn)
                        if replaced is not None:
                            messages = replaced
                    if not pending:  # preparation may take a while: pick up steering typed meanwhile
                        pending = config.get_steering()
                    self._emit(TurnStart())
                for message in pending:
                    self._emit(MessageStart(message))
                    await self._end(message)
                    messages.append(message)
                    self.new_messages.append(message)
                pending = []

                assistant = await self._stream_assistant(messages)
                if assistant is None:  # withheld: the run ends here, nothing was sent
                    self._emit(AgentEnd(list(self.new_messages)))
                    return
                messages.append(assistant)
                self.new_messages.append(assistant)
                if assistant.get("stopReason") in ("error", "aborted"):
                    self._emit(TurnEnd(assistant, []))
                    self._emit(AgentEnd(list(self.new_messages)))
                    return

                calls = tool_calls_of(assistant)
                results: list[Message] = []
                more_tool_calls = False
                if calls:
                    batch_runner = ToolBatch(
                        self._last_setup.registry,
                        self._last_setup.tool_context,
                        self._emit,
                        self._signal,
                        config.before_tool_call,
                        config.tool_execution,
                        config.now_ms,
                        self._end,
                        config.after_tool_call,
                    )
                    if assistant.get("stopReason") == "length":
                        batch = await batch_runner.fail_truncated(calls)
                    else:
                        batch = await batch_runner.run(calls)
                    results = batch.messages
                    more_tool_calls = not batch.terminate
                    messages.extend(results)
                    self.new_messages.extend(results)
                self._emit(TurnEnd(assistant, results))
                if self._signal.aborted:
                    self._emit(AgentEnd(list(self.new_messages)))
                    return
                pending = config.get_steering()
                last_turn = CompletedTurn(assistant, results, messages, more_tool_calls or bool(pending))
            follow_ups = config.get_follow_up()
            if not follow_ups:
                break
            pending = follow_ups
        self._emit(AgentEnd(list(self.new_messages)))

    async def _end(self, message: Message) -> None:
        """A message ended: have it recorded, then tell the subscribers."""
        if self._config.persist is not None:
            await self._config.persist(message)
        self._emit(MessageEnd(message))

    async def _stream_assistant(self, messages: list[Message]) -> Message | None:
        config = self._config
        try:
            setup = self._last_setup = await config.setup()
        except PiworkError as err:  # e.g. the model lost its key mid-run: end the run with the reason
            failed = _failed_message(None, None, str(err))
            self._emit(MessageStart(dict(failed)))
            await self._end(failed)
            return failed
        request_messages = messages
        if config.transform_context is not None:
            request_messages = await config.transform_context(messages, self._signal)
        if config.shape_request is not None:
            if config.before_shape is not None:
                await config.before_shape(request_messages, setup)
            shaped = config.shape_request(request_messages, setup)
            if shaped is None:
                return None
            request_messages = shaped
        llm_context = LlmContext(
            setup.system_prompt, config.convert_to_llm(request_messages), list(setup.tools)
        )
        state = _StreamState(config.now_ms())
        options = replace(setup.options, abort=self._signal.event)
        try:
            if self._signal.aborted:  # stopped before the request went out: do not send it
                raise Aborted()
            events = config.stream_fn(setup.model, llm_context, options)
            await self._signal.run_cooperative(self._consume(events, state), config.abort_grace_seconds)
        except Aborted:
            state.final = _aborted_message(setup.model, state.partial, config.now_ms())
        except Exception as exc:  # a provider bug: end the run with a readable error, keep the session sane
            state.final = _failed_message(setup.model, state.partial, f"{type(exc).__name__}: {exc}")
        final = state.final
        if final is None:
            final = _failed_message(setup.model, state.partial, "The provider ended without a final message.")
        self.last_error = state.error
        if state.partial is None:
            self._emit(MessageStart(dict(final)))
        await self._end(final)
        if config.on_call is not None:
            config.on_call(
                CallRecord(final, state.started_ms, state.first_token_ms, config.now_ms(), state.error)
            )
        return final

    async def _consume(self, events: AsyncIterator[AssistantEvent], state: _StreamState) -> None:
        emit = self._emit
        now_ms = self._config.now_ms
        async for event in events:
            if isinstance(event, DoneEvent | ErrorEvent):
                state.final = event.message
                if isinstance(event, ErrorEvent):
                    state.error = event.error
                return
            if isinstance(event, StartEvent):
                state.partial = event.partial
                emit(MessageStart(dict(event.partial)))
                continue
            if state.partial is None:
                continue
            if state.first_token_ms is None:
                state.first_token_ms = now_ms()
            emit(MessageUpdate(dict(event.partial), event))


@dataclass
class _StreamState:
    started_ms: int
    partial: Message | None = None
    final: Message | None = None
    error: ErrorInfo | None = None
    first_token_ms: int | None = None


def _base_message(model: Model | None, partial: Message | None, now: int) -> Message:
    if partial is not None:
        return dict(partial)
    return {
        "role": "assistant",
        "content": [],
        "api": model.api if model is not None else "",
        "provider": model.provider if model is not None else "",
        "model": model.id if model is not None else "",
        "usage": empty_usage(),
        "stopReason": "stop",
        "timestamp": now,
    }


def _aborted_message(model: Model, partial: Message | None, now: int) -> Message:
    message = _base_message(model, partial, now)
    message["stopReason"] = "aborted"
    message["errorMessage"] = ABORTED_MESSAGE
    return message


def _failed_message(model: Model | None, partial: Message | None, text: str) -> Message:
    message = _base_message(model, partial, int(time.time() * 1000))
    message["stopReason"] = "error"
    message["errorMessage"] = text
    return message
