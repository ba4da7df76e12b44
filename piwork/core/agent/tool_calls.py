"""Executing the tool calls of one assistant message (Pi's parallel/sequential batch semantics).

For each call, in source order: ``tool_execution_start``, look the tool up, validate the arguments, ask the
``before_tool_call`` hook (:func:`chain_hooks` makes one of several). Allowed calls then run concurrently (or one by one when the session asks for
sequential execution or a tool in the batch is marked ``sequential``); ``tool_execution_end`` fires as each
finishes and the ``toolResult`` messages are produced in source order once all are done.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from piwork.core.agent.abort import Aborted, AbortSignal
from piwork.core.agent.events import (
    Emit,
    Message,
    MessageEnd,
    MessageStart,
    ToolExecutionEnd,
    ToolExecutionStart,
    ToolExecutionUpdate,
)
from piwork.core.tools.base import (
    Tool,
    ToolContext,
    ToolError,
    ToolOutcome,
    ToolRegistry,
    ToolResult,
    error_outcome,
    length_stopped_message,
    unknown_tool_message,
    validate_arguments,
)

ToolExecution = Literal["parallel", "sequential"]
ABORTED_TEXT = "Operation aborted"


@dataclass(frozen=True)
class BlockDecision:
    """What a ``before_tool_call`` hook returns to stop a call."""

    reason: str = "Tool execution was blocked"
    terminate: bool = False


# (tool_call block, validated args) -> None to allow the call, or a BlockDecision
BeforeToolCall = Callable[[dict[str, Any], dict[str, Any]], Awaitable[BlockDecision | None]]
# (tool_call block, validated args), awaited once an allowed call has finished (checkpoints of its files)
AfterToolCall = Callable[[dict[str, Any], dict[str, Any]], Awaitable[None]]


def chain_hooks(*hooks: BeforeToolCall | None) -> BeforeToolCall | None:
    """One hook asking each of ``hooks`` in order: the first to block decides, and the later ones never
    see that call (approvals come first, so a snapshot before a change is taken only for allowed calls)."""
    present = [hook for hook in hooks if hook is not None]
    if len(present) < 2:
        return present[0] if present else None

    async def chained(call: dict[str, Any], args: dict[str, Any]) -> BlockDecision | None:
        for hook in present:
            decision = await hook(call, args)
            if decision is not None:
                return decision
        return None

    return chained


@dataclass(frozen=True)
class Finished:
    call: dict[str, Any]
    outcome: ToolOutcome
    terminate: bool = False


@dataclass
class _Prepared:
    call: dict[str, Any]
    tool: Tool
    args: dict[str, Any]


@dataclass
class BatchResult:
    messages: list[Message] = field(default_factory=list)
    terminate: bool = False


def tool_calls_of(message: Message) -> list[dict[str, Any]]:
    content = message.get("content")
    if not isinstance(content, list):
        return []
    return [b for b in content if isinstance(b, dict) and b.get("type") == "toolCall"]


def result_message(call: dict[str, Any], outcome: ToolOutcome, now_ms: int) -> Message:
    """A ``toolResult`` message with Pi's key order (details omitted when absent)."""
    message: Message = {
        "role": "toolResult",
        "toolCallId": str(call.get("id", "")),
        "toolName": str(call.get("name", "")),
        "content": outcome.content,
    }
    if outcome.details is not None:
        message["details"] = outcome.details
    message["isError"] = outcome.is_error
    message["timestamp"] = now_ms
    return message


def outcome_json(outcome: ToolOutcome) -> dict[str, Any]:
    result: dict[str, Any] = {"content": outcome.content}
    if outcome.details is not None:
        result["details"] = outcome.details
    return result


def _ids(call: dict[str, Any]) -> tuple[str, str]:
    return str(call.get("id", "")), str(call.get("name", ""))


class ToolBatch:
    """Runs one assistant message's tool calls against a registry, emitting Pi's events."""

    def __init__(
        self,
        registry: ToolRegistry,
        context: ToolContext,
        emit: Emit,
        signal: AbortSignal,
        before_tool_call: BeforeToolCall | None = None,
        mode: ToolExecution = "parallel",
        now_ms: Callable[[], int] = lambda: int(time.time() * 1000),
        end_message: Callable[[Message], Awaitable[None]] | None = None,
        after_tool_call: AfterToolCall | None = None,
    ) -> None:
        self._after = after_tool_call
        # how a tool result's message ends (the loop records it first); by default it is just announced
        self._end_message = end_message or self._announce_end
        self._registry = registry
        self._context = context
        self._emit = emit
        self._signal = signal
        self._before = before_tool_call
        self._mode = mode
        self._now_ms = now_ms

    async def fail_truncated(self, calls: Sequence[dict[str, Any]]) -> BatchResult:
        """A ``length`` stop: none of the calls runs; each gets an error result."""
        finished, messages = [], []
        for call in calls:
            self._start(call)
            done = Finished(call, error_outcome(length_stopped_message(_ids(call)[1])))
            self._end(done)
            finished.append(done)
            messages.append(await self._publish(done))
        return _batch(finished, messages)

    async def run(self, calls: Sequence[dict[str, Any]]) -> BatchResult:
        sequential = self._mode == "sequential" or any(
            getattr(self._registry.get(_ids(c)[1]), "sequential", False) for c in calls
        )
        if sequential:
            return await self._run_sequential(calls)
        return await self._run_parallel(calls)

    async def _run_sequential(self, calls: Sequence[dict[str, Any]]) -> BatchResult:
        finished: list[Finished] = []
        messages: list[Message] = []
        for call in calls:
            self._start(call)
            prepared = await self._prepare(call)
            done = prepared if isinstance(prepared, Finished) else await self._execute(prepared)
            self._end(done)
            finished.append(done)
            messages.append(await self._publish(done))
        return _batch(finished, messages)

    async def _run_parallel(self, calls: Sequence[dict[str, Any]]) -> BatchResult:
        slots: list[Finished | _Prepared] = []
        for call in calls:
            self._start(call)
            prepared = await self._prepare(call)
            if isinstance(prepared, Finished):
                self._end(prepared)
            slots.append(prepared)

        async def finish(item: _Prepared) -> Finished:
            if self._signal.aborted:
                done = Finished(item.call, error_outcome(ABORTED_TEXT, aborted=True))
            else:
                done = await self._execute(item)
            self._end(done)
            return done

        ran = iter(await asyncio.gather(*(finish(s) for s in slots if isinstance(s, _Prepared))))
        finished = [s if isinstance(s, Finished) else next(ran) for s in slots]
        return _batch(finished, [await self._publish(done) for done in finished])

    async def _prepare(self, call: dict[str, Any]) -> Finished | _Prepared:
        if self._signal.aborted:  # once stopped, no hook is asked; every call still gets its result
            return Finished(call, error_outcome(ABORTED_TEXT, aborted=True))
        name = _ids(call)[1]
        tool = self._registry.get(name)
        if tool is None:
            return Finished(call, error_outcome(unknown_tool_message(name)))
        try:
            args = validate_arguments(tool, call.get("arguments"))
            # a hook may wait (for the user's approval): Stop ends the wait with the aborted result
            decision = await self._signal.run(self._before(call, args)) if self._before is not None else None
        except Aborted:
            return Finished(call, error_outcome(ABORTED_TEXT, aborted=True))
        except ToolError as err:
            return Finished(call, error_outcome(str(err), err.details))
        except Exception as err:  # a hook that fails blocks the call, with its message
            return Finished(call, error_outcome(str(err) or type(err).__name__))
        if self._signal.aborted:
            return Finished(call, error_outcome(ABORTED_TEXT, aborted=True))
        if decision is not None:
            return Finished(call, error_outcome(decision.reason), decision.terminate)
        return _Prepared(call, tool, args)

    async def _execute(self, prepared: _Prepared) -> Finished:
        call_id, name = _ids(prepared.call)
        accepting = True

        def emit_update(partial: ToolResult) -> None:
            if accepting:
                self._emit(
                    ToolExecutionUpdate(call_id, name, prepared.call.get("arguments"), partial.to_json())
                )

        async def execute() -> ToolOutcome:
            try:
                result = await prepared.tool.execute(call_id, prepared.args, self._context, emit_update)
            except ToolError as err:
                return error_outcome(str(err), err.details, aborted=err.aborted)
            return ToolOutcome(result.content, result.details, False)

        try:
            outcome = await self._signal.run(execute())
        except Aborted:
            outcome = error_outcome(ABORTED_TEXT, aborted=True)
        except Exception as err:  # a tool bug becomes a visible error result, not a dead run
            outcome = error_outcome(str(err) or type(err).__name__)
        finally:
            accepting = False
        if self._after is not None and not self._signal.aborted:  # a stopped run records its results first
            with contextlib.suppress(Exception):  # an after step never changes what the call did
                await self._after(prepared.call, prepared.args)
        return Finished(prepared.call, outcome)

    def _start(self, call: dict[str, Any]) -> None:
        call_id, name = _ids(call)
        self._emit(ToolExecutionStart(call_id, name, call.get("arguments")))

    def _end(self, done: Finished) -> None:
        call_id, name = _ids(done.call)
        self._emit(ToolExecutionEnd(call_id, name, outcome_json(done.outcome), done.outcome.is_error))

    async def _publish(self, done: Finished) -> Message:
        message = result_message(done.call, done.outcome, self._now_ms())
        self._emit(MessageStart(message))
        await self._end_message(message)
        return message

    async def _announce_end(self, message: Message) -> None:
        self._emit(MessageEnd(message))


def _batch(finished: list[Finished], messages: list[Message]) -> BatchResult:
    return BatchResult(messages, bool(finished) and all(d.terminate for d in finished))
