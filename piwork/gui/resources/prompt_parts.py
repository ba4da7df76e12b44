"""Feeding the Resources panel's system-prompt tab from a live session.

`show_system_prompt` splits the prompt the session sends into its named parts (the same inputs
the runtime assembles: loaded resources, active tools, their snippets and guidelines) and hands
them to the panel with a token counter for the session's model. Tokenizer files are verified and
loaded once, in an executor.
"""

from __future__ import annotations

import shiboken6

from piwork.core.agent import AgentSession
from piwork.core.llm import Tokenizers
from piwork.core.resources import LoadedResources, PromptPart, prompt_input_for, system_prompt_parts
from piwork.gui.resources.panel import ResourcePanel


def session_prompt_parts(session: AgentSession, resources: LoadedResources) -> list[PromptPart]:
    """The system prompt of `session`'s next request, part by part (joined, they are that prompt).

    A session built by the runtime sends exactly its parts joined; one built with a plain prompt
    callable is split here from the same inputs the runtime assembles."""
    if session.has_prompt_parts:
        return session.system_prompt_parts()
    registry = session.registry
    names = session.tool_names()
    return system_prompt_parts(prompt_input_for(resources, names, registry.snippets(), registry.guidelines()))


async def show_system_prompt(
    panel: ResourcePanel, session: AgentSession, resources: LoadedResources, tokenizers: Tokenizers
) -> None:
    parts = session_prompt_parts(session, resources)
    await tokenizers.load_async()
    if not shiboken6.isValid(panel):  # the window closed meanwhile
        return
    model = session.model
    panel.set_system_prompt(parts, tokenizers.counter_for(model.id if model is not None else ""))
