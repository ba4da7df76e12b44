"""The agent: a session that prompts the model, runs its tools and persists every step.

Public API:
- ``create_runtime`` (given ``RuntimeOptions``) -> ``AgentRuntime``: a ready ``AgentSession`` for a folder
  (store, model registry, credentials, resources, tools); ``NoModel`` when no model can be chosen.
- ``AgentSession``: prompt, steer, follow up, abort, switch models and thinking levels, compact.
- The typed events an ``AgentSession`` emits (``AgentEvent`` is their union): ``AgentStart``,
  ``TurnStart``, ``MessageStart`` / ``MessageUpdate`` / ``MessageEnd``, ``ToolExecutionStart`` /
  ``ToolExecutionUpdate`` / ``ToolExecutionEnd``, ``QueueUpdate``, ``CompactionStart`` /
  ``CompactionEnd``, ``AutoRetryStart`` / ``AutoRetryEnd``, ``ModelChanged``,
  ``ThinkingLevelChanged``, ``TreeNavigated``, ``ErrorNotice``, ``AgentEnd``, ``AgentSettled``.

The loop, queues, retry and checkpoint modules behind these stay internal.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from piwork.core.lazy_exports import load_export

if TYPE_CHECKING:
    from piwork.core.agent.events import (
        AgentEnd,
        AgentEvent,
        AgentSettled,
        AgentStart,
        AutoRetryEnd,
        AutoRetryStart,
        CompactionEnd,
        CompactionStart,
        ErrorNotice,
        MessageEnd,
        MessageStart,
        MessageUpdate,
        ModelChanged,
        QueueUpdate,
        ThinkingLevelChanged,
        ToolExecutionEnd,
        ToolExecutionStart,
        ToolExecutionUpdate,
        TreeNavigated,
        TurnStart,
    )
    from piwork.core.agent.runtime import AgentRuntime, RuntimeOptions, create_runtime
    from piwork.core.agent.session import AgentSession, NoModel

__all__ = [
    "AgentEnd",
    "AgentEvent",
    "AgentRuntime",
    "AgentSession",
    "AgentSettled",
    "AgentStart",
    "AutoRetryEnd",
    "AutoRetryStart",
    "CompactionEnd",
    "CompactionStart",
    "ErrorNotice",
    "MessageEnd",
    "MessageStart",
    "MessageUpdate",
    "ModelChanged",
    "NoModel",
    "QueueUpdate",
    "RuntimeOptions",
    "ThinkingLevelChanged",
    "ToolExecutionEnd",
    "ToolExecutionStart",
    "ToolExecutionUpdate",
    "TreeNavigated",
    "TurnStart",
    "create_runtime",
]

# Each public name is loaded from its module on first use (see piwork.core.lazy_exports).
_EXPORTS: dict[str, tuple[str, str]] = {
    "AgentEnd": ("events", "AgentEnd"),
    "AgentEvent": ("events", "AgentEvent"),
    "AgentRuntime": ("runtime", "AgentRuntime"),
    "AgentSession": ("session", "AgentSession"),
    "AgentSettled": ("events", "AgentSettled"),
    "AgentStart": ("events", "AgentStart"),
    "AutoRetryEnd": ("events", "AutoRetryEnd"),
    "AutoRetryStart": ("events", "AutoRetryStart"),
    "CompactionEnd": ("events", "CompactionEnd"),
    "CompactionStart": ("events", "CompactionStart"),
    "ErrorNotice": ("events", "ErrorNotice"),
    "MessageEnd": ("events", "MessageEnd"),
    "MessageStart": ("events", "MessageStart"),
    "MessageUpdate": ("events", "MessageUpdate"),
    "ModelChanged": ("events", "ModelChanged"),
    "NoModel": ("session", "NoModel"),
    "QueueUpdate": ("events", "QueueUpdate"),
    "RuntimeOptions": ("runtime", "RuntimeOptions"),
    "ThinkingLevelChanged": ("events", "ThinkingLevelChanged"),
    "ToolExecutionEnd": ("events", "ToolExecutionEnd"),
    "ToolExecutionStart": ("events", "ToolExecutionStart"),
    "ToolExecutionUpdate": ("events", "ToolExecutionUpdate"),
    "TreeNavigated": ("events", "TreeNavigated"),
    "TurnStart": ("events", "TurnStart"),
    "create_runtime": ("runtime", "create_runtime"),
}


def __getattr__(name: str) -> object:
    return load_export(__name__, _EXPORTS, name)
