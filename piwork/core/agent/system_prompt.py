"""The system prompt a session sends: the project's loaded resources with the active built-in tools."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from piwork.core.resources.context_files import ContextFile
from piwork.core.resources.loader import LoadedResources
from piwork.core.resources.system_prompt import PromptPart, prompt_input_for, system_prompt_parts
from piwork.core.tools.base import ToolRegistry
from piwork.core.tools.registry import ALL_TOOL_NAMES, DEFAULT_ACTIVE_TOOLS, create_default_tools


def prompt_parts_for(
    resources: LoadedResources,
    tool_names: Sequence[str] = DEFAULT_ACTIVE_TOOLS,
    registry: ToolRegistry | None = None,
    context_files: Callable[[Sequence[ContextFile]], Sequence[ContextFile]] | None = None,
) -> list[PromptPart]:
    """The system prompt, part by part (joined, they are the prompt), with ``tool_names`` active.

    ``registry`` supplies the tools' snippets and guidelines; by default every built-in tool's.
    ``context_files`` adjusts the loaded context files for the task (those excluded become markers)."""
    tools = registry if registry is not None else create_default_tools(ALL_TOOL_NAMES)
    names = list(tool_names)
    prompt = prompt_input_for(resources, names, tools.snippets(), tools.guidelines())
    if context_files is not None:
        prompt = replace(prompt, context_files=tuple(context_files(prompt.context_files)))
    return system_prompt_parts(prompt)
