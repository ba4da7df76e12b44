"""The agent: a session that prompts the model, runs its tools and persists every step.

Public API:
- ``AgentSession``: prompt, steer, follow up, abort, switch models and thinking levels, compact;
  ``NoModel`` when no model can be chosen (a ready session for a folder is ``piwork.core.workflows``'
  ``create_runtime``).
- The typed events an ``AgentSession`` emits (``AgentEvent`` is their union): ``AgentStart``,
  ``TurnStart``, ``MessageStart`` / ``MessageUpdate`` / ``MessageEnd``, ``ToolExecutionStart`` /
  ``ToolExecutionUpdate`` / ``ToolExecutionEnd``, ``QueueUpdate``, ``CompactionStart`` /
  ``CompactionEnd``, ``AutoRetryStart`` / ``AutoRetryEnd``, ``ModelChanged``,
  ``ThinkingLevelChanged``, ``TreeNavigated``, ``UserCommandStart`` / ``UserCommandUpdate`` /
  ``UserCommandEnd`` (a ``!cmd`` the user runs), ``ErrorNotice``, ``AgentEnd``, ``AgentSettled``;
  a subscriber is a ``Listener``; ``event_to_json`` writes one as Pi's JSON event; an ``ErrorNotice``
  whose source is ``SAVE_FAILED`` says an entry could not be written to the session file.
- ``prompt_parts_for``: the system prompt a session sends for loaded resources and active tools, by part.

The loop, queues, retry and checkpoint modules behind these stay internal.
"""

from __future__ import annotations

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
    Listener,
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
    UserCommandEnd,
    UserCommandStart,
    UserCommandUpdate,
    event_to_json,
)
from piwork.core.agent.session import SAVE_FAILED, AgentSession, NoModel
from piwork.core.agent.system_prompt import prompt_parts_for

__all__ = [
    "SAVE_FAILED",
    "AgentEnd",
    "AgentEvent",
    "AgentSession",
    "AgentSettled",
    "AgentStart",
    "AutoRetryEnd",
    "AutoRetryStart",
    "CompactionEnd",
    "CompactionStart",
    "ErrorNotice",
    "Listener",
    "MessageEnd",
    "MessageStart",
    "MessageUpdate",
    "ModelChanged",
    "NoModel",
    "QueueUpdate",
    "ThinkingLevelChanged",
    "ToolExecutionEnd",
    "ToolExecutionStart",
    "ToolExecutionUpdate",
    "TreeNavigated",
    "TurnStart",
    "UserCommandEnd",
    "UserCommandStart",
    "UserCommandUpdate",
    "event_to_json",
    "prompt_parts_for",
]
