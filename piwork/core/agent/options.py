"""What an AgentSession is built from, and small provider helpers it shares with compaction."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from piwork.core.agent.abort import AbortSignal
from piwork.core.agent.events import Message
from piwork.core.agent.loop import StreamFn
from piwork.core.agent.telemetry import UsageTelemetry
from piwork.core.agent.tool_calls import BeforeToolCall, ToolExecution
from piwork.core.llm.streaming import stream
from piwork.core.llm.types import DoneEvent, ErrorEvent, LlmContext, Model, StreamOptions, ThinkingLevel
from piwork.core.resources.system_prompt import PromptPart
from piwork.core.session.tree import SessionTree
from piwork.core.tools.base import ToolRegistry

if TYPE_CHECKING:
    from piwork.core.agent.checkpoints import CompactionPort
    from piwork.core.checkpoints import Checkpointer
    from piwork.core.compaction.hooks import CompactionHooks
    from piwork.core.context.task_exclusions import TaskExclusions
    from piwork.core.context.telemetry import ContextTelemetry
    from piwork.core.llm.tokens import TokenCounter


def _now_ms() -> int:
    return int(time.time() * 1000)


@dataclass
class AgentSessionOptions:
    """Everything an AgentSession is built from; the caller (GUI, headless, tests) assembles it."""

    tree: SessionTree  # the session being continued; messages, model and thinking changes go here
    registry: ToolRegistry
    cwd: str
    model: Model | None
    api_key_for: Callable[[Model], str | None]
    system_prompt_for: Callable[[Sequence[str]], str]
    # the same prompt as named parts (each context file, the skills index...); when given, the prompt
    # sent is these parts joined, so a breakdown of it always adds up to what is sent
    system_prompt_parts_for: Callable[[Sequence[str]], list[PromptPart]] | None = None
    messages: list[Message] = field(default_factory=list)  # the session's current context
    thinking_level: ThinkingLevel = "off"
    settings: Mapping[str, Any] = field(default_factory=dict)
    active_tools: Sequence[str] | None = None  # None = every registered tool
    # the tools a session that records none runs with in either program (the ``defaultTools``
    # selection): a tool set equal to it needs no system message (None: only a branch that already
    # records its tools gets their changes)
    unrecorded_tools: Sequence[str] | None = None
    expand_input: Callable[[str], str] = lambda text: text  # /skill: and prompt templates
    stream_fn: StreamFn | None = None  # None = piwork.core.llm.streaming.stream
    base_options: StreamOptions = field(default_factory=StreamOptions)
    session_id: str | None = None
    session_file: Path | None = None
    log_dir: Path | None = None
    tool_execution: ToolExecution = "parallel"
    before_tool_call: BeforeToolCall | None = None  # asked first (approvals); then the checkpointer
    # snapshots the project's files before and after each allowed call that can change them
    checkpointer: Checkpointer | None = None
    transform_context: Callable[[list[Message], AbortSignal], Awaitable[list[Message]]] | None = None
    telemetry: UsageTelemetry | None = None
    hooks: CompactionHooks | None = None
    # None = the built-in engine over ``tree`` (compaction_port.TreeCompactionPort)
    compaction: CompactionPort | None = None
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep
    now_ms: Callable[[], int] = _now_ms
    # context governor: the tokenizer its estimates use (None: chars/4), where its telemetry goes, and the
    # registered verifier commands (Task Contract ``verify``, profile ``verify[]``)
    token_counter: TokenCounter | None = None
    # when given, the tokenizer follows the model: the counter for the model of each request
    token_counter_for: Callable[[Model], TokenCounter] | None = None
    context_telemetry: ContextTelemetry | None = None
    verifier_commands: Callable[[], Sequence[str]] = tuple
    # whether the project's layer files (profile, index, snapshot...) may be read: decided by trust
    project_trusted: Callable[[], bool] = lambda: False
    # why the session file takes no new entries (another piwork holds it...); None while it is writable
    read_only_reason: Callable[[], str | None] = lambda: None
    # API keys to mask in tool output before it is kept (session file, logs) or shown
    known_secrets: Callable[[], tuple[str, ...]] = tuple
    # raises OSError when a new session's file could not be written (checked before the first request)
    check_can_save: Callable[[], None] = lambda: None
    # the parts of the task's context the person excluded (None: followed over ``tree`` by the session);
    # the runtime shares one with the system prompt it builds, which leaves excluded context files out
    task_exclusions: TaskExclusions | None = None


def default_stream_fn() -> StreamFn:
    return stream


def complete_through(
    stream_fn: StreamFn,
) -> Callable[[Model, LlmContext, StreamOptions], Awaitable[Message]]:
    """``complete`` over the session's stream function, so summaries use the same provider path."""

    async def complete(model: Model, context: LlmContext, options: StreamOptions) -> Message:
        final: Message | None = None
        async for event in stream_fn(model, context, options):
            if isinstance(event, DoneEvent | ErrorEvent):
                final = event.message
        if final is None:
            return {"role": "assistant", "content": [], "stopReason": "error", "errorMessage": "No reply"}
        return final

    return complete
