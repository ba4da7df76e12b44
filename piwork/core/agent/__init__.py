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

from typing import TYPE_CHECKING

from piwork.core.lazy_exports import lazy_exports

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

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(
        __name__,
        {
            "AgentEnd": "piwork.core.agent.events",
            "AgentEvent": "piwork.core.agent.events",
            "AgentSettled": "piwork.core.agent.events",
            "AgentStart": "piwork.core.agent.events",
            "AutoRetryEnd": "piwork.core.agent.events",
            "AutoRetryStart": "piwork.core.agent.events",
            "CompactionEnd": "piwork.core.agent.events",
            "CompactionStart": "piwork.core.agent.events",
            "ErrorNotice": "piwork.core.agent.events",
            "Listener": "piwork.core.agent.events",
            "MessageEnd": "piwork.core.agent.events",
            "MessageStart": "piwork.core.agent.events",
            "MessageUpdate": "piwork.core.agent.events",
            "ModelChanged": "piwork.core.agent.events",
            "QueueUpdate": "piwork.core.agent.events",
            "ThinkingLevelChanged": "piwork.core.agent.events",
            "ToolExecutionEnd": "piwork.core.agent.events",
            "ToolExecutionStart": "piwork.core.agent.events",
            "ToolExecutionUpdate": "piwork.core.agent.events",
            "TreeNavigated": "piwork.core.agent.events",
            "TurnStart": "piwork.core.agent.events",
            "UserCommandEnd": "piwork.core.agent.events",
            "UserCommandStart": "piwork.core.agent.events",
            "UserCommandUpdate": "piwork.core.agent.events",
            "event_to_json": "piwork.core.agent.events",
            "SAVE_FAILED": "piwork.core.agent.session",
            "AgentSession": "piwork.core.agent.session",
            "NoModel": "piwork.core.agent.session",
            "prompt_parts_for": "piwork.core.agent.system_prompt",
        },
    )
