"""Feeding the Resources panel's system-prompt tab from a live session.

`show_system_prompt` takes the prompt the session sends as its named parts (the engine's own split:
loaded resources, active tools, their snippets and guidelines) and hands them to the panel with a token counter for the session's model. Tokenizer files are verified and
loaded once, in an executor.
"""

from __future__ import annotations

import asyncio

import shiboken6

from piwork.core.agent import AgentSession, prompt_parts_for
from piwork.core.llm import Tokenizers
from piwork.core.resources import LoadedResources, PromptPart
from piwork.gui.resources.panel import ResourcePanel


def session_prompt_parts(session: AgentSession, resources: LoadedResources) -> list[PromptPart]:
    """The system prompt of `session`'s next request, part by part (joined, they are that prompt).

    A session built by the runtime sends exactly its parts joined; one built with a plain prompt
    callable is split by the engine from the same inputs the runtime assembles."""
    if session.has_prompt_parts:
        return session.system_prompt_parts()
    return prompt_parts_for(resources, session.tool_names(), session.registry)


async def show_system_prompt(
    panel: ResourcePanel,
    session: AgentSession,
    resources: LoadedResources,
    tokenizers: Tokenizers,
    load: bool = True,
) -> bool:
    """Hand the prompt's parts to the panel with the model's counter, its tokenizer loaded first (``load``;
    else counted with what is loaded, chars/4 if nothing). Returns whether it was counted chars/4 for want
    of loading."""
    parts = session_prompt_parts(session, resources)
    model = session.model
    model_id = model.id if model is not None else ""
    if load:
        await asyncio.to_thread(tokenizers.load_for, model_id)  # only the encoding this model counts with
    if not shiboken6.isValid(panel):  # the window closed meanwhile
        return False
    counter = tokenizers.counter_for(model_id)
    panel.set_system_prompt(parts, counter)
    return not load and counter.info.encoding is None
