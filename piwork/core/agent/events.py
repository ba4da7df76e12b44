"""Typed events the agent engine emits, and the small bus that delivers them.

Every event is a frozen dataclass with a ``type`` literal, and ``AgentEvent`` is the closed union of them:
listeners take an ``AgentEvent`` and tell events apart by class (``match``/``isinstance``); the ``type``
names are for the JSON output and logs. Messages travel as Pi-shaped dicts (snapshots: a
listener may keep them, the engine never mutates a dict after emitting it, except the live ``message``
of ``message_update`` which is re-snapshotted on each update).
"""

from __future__ import annotations

import dataclasses
import functools
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from piwork.core.context.records import BilledSample, GovernorDecision, OccupancySample
from piwork.core.llm.types import AssistantEvent

Message = dict[str, Any]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class AgentStart:
    type: Literal["agent_start"] = "agent_start"


@dataclass(frozen=True)
class AgentEnd:
    messages: list[Message] = field(default_factory=list)
    will_retry: bool = False
    type: Literal["agent_end"] = "agent_end"


@dataclass(frozen=True)
class AgentSettled:
    """The run, its retries and any post-run compaction have all finished; the session is idle."""

    type: Literal["agent_settled"] = "agent_settled"


@dataclass(frozen=True)
class TurnStart:
    type: Literal["turn_start"] = "turn_start"


@dataclass(frozen=True)
class TurnEnd:
    message: Message
    tool_results: list[Message] = field(default_factory=list)
    type: Literal["turn_end"] = "turn_end"


@dataclass(frozen=True)
class MessageStart:
    message: Message
    type: Literal["message_start"] = "message_start"


@dataclass(frozen=True)
class MessageUpdate:
    """A streaming assistant message changed; ``provider_event`` is the provider's event that changed it."""

    message: Message
    provider_event: AssistantEvent
    type: Literal["message_update"] = "message_update"


@dataclass(frozen=True)
class MessageEnd:
    message: Message
    type: Literal["message_end"] = "message_end"


@dataclass(frozen=True)
class ToolExecutionStart:
    tool_call_id: str
    tool_name: str
    args: Any
    type: Literal["tool_execution_start"] = "tool_execution_start"


@dataclass(frozen=True)
class ToolExecutionUpdate:
    tool_call_id: str
    tool_name: str
    args: Any
    partial_result: Any
    type: Literal["tool_execution_update"] = "tool_execution_update"


@dataclass(frozen=True)
class ToolExecutionEnd:
    tool_call_id: str
    tool_name: str
    result: dict[str, Any]
    is_error: bool
    type: Literal["tool_execution_end"] = "tool_execution_end"


@dataclass(frozen=True)
class QueueUpdate:
    steering: list[str]
    follow_up: list[str]
    type: Literal["queue_update"] = "queue_update"


CompactionReason = Literal["manual", "threshold", "overflow", "governor"]


@dataclass(frozen=True)
class CompactionStart:
    reason: CompactionReason
    type: Literal["compaction_start"] = "compaction_start"


@dataclass(frozen=True)
class CompactionEnd:
    reason: CompactionReason
    result: dict[str, Any] | None = None
    aborted: bool = False
    will_retry: bool = False
    error_message: str | None = None
    type: Literal["compaction_end"] = "compaction_end"


@dataclass(frozen=True)
class AutoRetryStart:
    attempt: int
    max_attempts: int
    delay_ms: int
    error_message: str
    type: Literal["auto_retry_start"] = "auto_retry_start"


@dataclass(frozen=True)
class AutoRetryEnd:
    success: bool
    attempt: int
    final_error: str | None = None
    type: Literal["auto_retry_end"] = "auto_retry_end"


@dataclass(frozen=True)
class ErrorNotice:
    """Something went wrong that does not end the run (a hook failed, a skill file was unreadable...)."""

    message: str
    source: str = "agent"
    type: Literal["error"] = "error"


@dataclass(frozen=True)
class ModelChanged:
    provider: str
    model_id: str
    type: Literal["model_changed"] = "model_changed"


@dataclass(frozen=True)
class ThinkingLevelChanged:
    level: str
    type: Literal["thinking_level_changed"] = "thinking_level_changed"


@dataclass(frozen=True)
class TreeNavigated:
    new_leaf_id: str | None
    old_leaf_id: str | None
    summary_entry: dict[str, Any] | None = None
    type: Literal["session_tree"] = "session_tree"


@dataclass(frozen=True)
class UserCommandStart:
    """A ``!cmd`` (or ``!!cmd``: its output is not sent to the model) the user runs started."""

    run_id: int
    command: str
    exclude_from_context: bool
    type: Literal["user_command_start"] = "user_command_start"


@dataclass(frozen=True)
class UserCommandUpdate:
    run_id: int
    delta: str  # display-clean output text, as it arrives
    type: Literal["bash_execution_update"] = "bash_execution_update"


@dataclass(frozen=True)
class UserCommandEnd:
    """The command ended; ``message`` is its ``bashExecution`` message, recorded in the session at once,
    or after the agent's run when it ended while the agent worked (``deferred``)."""

    run_id: int
    message: dict[str, Any]
    deferred: bool
    type: Literal["user_command_end"] = "user_command_end"


@dataclass(frozen=True)
class GovernorEvent:
    """The context governor decided something about one provider call's working set (a log row)."""

    decision: GovernorDecision
    type: Literal["governor"] = "governor"


@dataclass(frozen=True)
class OccupancyEvent:
    """A ``contextOccupancy`` sample: what the next (or last) request holds."""

    sample: OccupancySample
    type: Literal["context_occupancy"] = "context_occupancy"


@dataclass(frozen=True)
class BilledEvent:
    """A ``billedTraffic`` sample: what one provider call was charged."""

    sample: BilledSample
    type: Literal["billed_traffic"] = "billed_traffic"


# every event the engine emits (tests hold this list to the dataclasses above)
AgentEvent = (
    AgentStart
    | AgentEnd
    | AgentSettled
    | TurnStart
    | TurnEnd
    | MessageStart
    | MessageUpdate
    | MessageEnd
    | ToolExecutionStart
    | ToolExecutionUpdate
    | ToolExecutionEnd
    | QueueUpdate
    | CompactionStart
    | CompactionEnd
    | AutoRetryStart
    | AutoRetryEnd
    | ErrorNotice
    | ModelChanged
    | ThinkingLevelChanged
    | TreeNavigated
    | UserCommandStart
    | UserCommandUpdate
    | UserCommandEnd
    | GovernorEvent
    | OccupancyEvent
    | BilledEvent
)

Listener = Callable[[AgentEvent], None]
Emit = Listener


class EventBus:
    """Synchronous fan-out to listeners, in subscription order, on the caller's (the asyncio loop's) thread.

    A listener that raises is logged and skipped: one broken view must not stop the engine.
    """

    def __init__(self) -> None:
        self._listeners: list[Listener] = []

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        self._listeners.append(listener)

        def unsubscribe() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return unsubscribe

    def emit(self, event: AgentEvent) -> None:
        for listener in list(self._listeners):
            try:
                listener(event)
            except Exception:
                log.exception("event listener failed on %s", event.type)


@functools.lru_cache(maxsize=256)
def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.capitalize() for part in rest)


def _plain(value: Any) -> Any:
    """Dataclasses (provider events) to JSON-ready dicts with camelCase keys; dict/list pass through."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = value.__dict__ if hasattr(value, "__dict__") else dataclasses.asdict(value)
        # the full partial message is redundant in a delta line
        return {_camel(k): _plain(v) for k, v in fields.items() if k != "partial"}
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def event_to_json(event: AgentEvent) -> dict[str, Any]:
    """A JSON-ready dict for one event (``--mode json``): Pi's camelCase field names, ``type`` first.

    ``message_update`` carries only the usage and the provider delta, not the whole growing message,
    so a long stream stays linear in size.
    """
    if isinstance(event, MessageUpdate):
        return {
            "type": event.type,
            "usage": event.message.get("usage"),
            "assistantMessageEvent": _plain(event.provider_event),
        }
    if isinstance(event, GovernorEvent):
        return {"type": event.type, **event.decision.to_json()}
    if isinstance(event, OccupancyEvent | BilledEvent):
        return {"type": event.type, **event.sample.to_json()}
    data = _plain(event)
    return {"type": event.type, **{k: v for k, v in data.items() if k != "type"}}
