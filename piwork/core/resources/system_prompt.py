"""System prompt assembly (deterministic, no dates) and ``/skill:name`` expansion.

The default path is role, tools, guidelines and a docs pointer; a replacement prompt (SYSTEM.md or
``--system-prompt``) swaps out those four. Both then add appended text, the project context files,
the skills index (only with a file-reading tool) and the working directory, in that order.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from piwork.core.errors import PiworkError
from piwork.core.jscompat import js_trim
from piwork.core.resources import prompt_text as T
from piwork.core.resources.context_files import ContextFile
from piwork.core.resources.frontmatter import FrontmatterError, strip_frontmatter
from piwork.core.resources.skills import Skill
from piwork.core.resources.textfiles import read_text

if TYPE_CHECKING:
    from piwork.core.resources.loader import LoadedResources

DEFAULT_TOOLS = ("read", "bash", "edit", "write")


class SkillExpansionError(PiworkError):
    """A ``/skill:`` command named a skill whose file could not be read; the input is left as typed."""


@dataclass(frozen=True)
class SystemPromptInput:
    cwd: str
    active_tools: Sequence[str] = DEFAULT_TOOLS
    tool_snippets: dict[str, str] = field(default_factory=dict)
    tool_guidelines: Sequence[str] = ()
    custom_prompt: str | None = None
    append_text: str | None = None
    context_files: Sequence[ContextFile] = ()
    skills: Sequence[Skill] = ()
    docs_dir: str | None = None


@dataclass(frozen=True)
class PromptPart:
    """A named slice of the prompt; the parts concatenated give the prompt exactly."""

    name: str
    text: str


def escape_xml(text: str) -> str:
    return (
        text.replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace('"', "&quot;")
        .replace("'", "&apos;")
    )


def _escape_attribute(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace('"', "&quot;")


def skill_read_tool(active_tools: Sequence[str]) -> str | None:
    """The tool the model uses to open a skill file: ``read``, else ``bash``, else none."""
    return next((tool for tool in ("read", "bash") if tool in active_tools), None)


def format_skills_for_prompt(skills: Sequence[Skill], read_tool: str = "read") -> str:
    visible = [s for s in skills if not s.disable_model_invocation]
    if not visible:
        return ""
    load = T.SKILLS_LOAD_WITH_READ if read_tool == "read" else T.SKILLS_LOAD_WITH_BASH
    lines = ["\n\n" + T.SKILLS_PREAMBLE, load, T.SKILLS_RELATIVE_PATHS, "", "<available_skills>"]
    for skill in visible:
        lines += [
            "  <skill>",
            f"    <name>{escape_xml(skill.name)}</name>",
            f"    <description>{escape_xml(skill.description)}</description>",
            f"    <location>{escape_xml(skill.file_path)}</location>",
            "  </skill>",
        ]
    lines.append("</available_skills>")
    return "\n".join(lines)


def _project_context(files: Sequence[ContextFile]) -> str:
    if not files:
        return ""
    text = "\n\n<project_context>\n\n" + T.PROJECT_CONTEXT_INTRO + "\n\n"
    for f in files:
        text += f'<project_instructions path="{_escape_attribute(f.path)}">\n{f.content}\n</project_instructions>\n\n'
    return text + "</project_context>\n"


def _one_line(snippet: str) -> str:
    return " ".join(js_trim(re.sub(r"[\r\n]+", " ", snippet)).split())


def _guidelines(prompt: SystemPromptInput) -> list[str]:
    tools = set(prompt.active_tools)
    out: list[str] = []

    def add(text: str) -> None:
        if text not in out:
            out.append(text)

    has_bash, has_ps = "bash" in tools, "powershell" in tools
    if (has_bash or has_ps) and not tools & {"grep", "find", "ls"}:
        add(
            T.SHELL_HINT_BOTH
            if has_bash and has_ps
            else T.SHELL_HINT_POWERSHELL
            if has_ps
            else T.SHELL_HINT_BASH
        )
    for guideline in prompt.tool_guidelines:
        trimmed = js_trim(guideline)
        if trimmed:
            add(trimmed)
    for guideline in T.ALWAYS_GUIDELINES:
        add(guideline)
    return out


def system_prompt_parts(prompt: SystemPromptInput) -> list[PromptPart]:
    """The prompt as named parts (for the prompt-anatomy view); empty parts are left out."""
    parts: list[PromptPart] = []
    custom = bool(prompt.custom_prompt)
    if custom:
        parts.append(PromptPart("custom", str(prompt.custom_prompt)))
    else:
        snippets = {name: _one_line(text) for name, text in prompt.tool_snippets.items()}
        tool_lines = [f"- {name}: {snippets[name]}" for name in prompt.active_tools if snippets.get(name)]
        parts.append(PromptPart("role", T.ROLE))
        tools_text = "\n".join(tool_lines) if tool_lines else T.NO_TOOLS
        parts.append(PromptPart("tools", f"\n\n{T.TOOLS_HEADING}\n{tools_text}\n\n{T.OTHER_TOOLS_NOTE}"))
        guideline_text = "\n".join(f"- {g}" for g in _guidelines(prompt))
        parts.append(PromptPart("guidelines", f"\n\n{T.GUIDELINES_HEADING}\n{guideline_text}"))
        if prompt.docs_dir is not None:
            parts.append(
                PromptPart("docs", f"\n\n{T.DOCS_HEADING}\n" + "\n".join(T.docs_lines(prompt.docs_dir)))
            )
    if prompt.append_text:
        parts.append(PromptPart("append", "\n\n" + prompt.append_text))
    context = _project_context(prompt.context_files)
    if context:
        parts.append(PromptPart("project_context", context))
    tool = skill_read_tool(prompt.active_tools)
    skills = format_skills_for_prompt(prompt.skills, tool) if tool and prompt.skills else ""
    if skills:
        parts.append(PromptPart("skills", skills))
    cwd = prompt.cwd.replace("\\", "/")
    parts.append(PromptPart("cwd", f"\n{T.CWD_LABEL} {cwd}" + ("\n" if custom else "")))
    return parts


def build_system_prompt(prompt: SystemPromptInput) -> str:
    return "".join(part.text for part in system_prompt_parts(prompt))


_SKILL_COMMAND = re.compile(r"^/skill:(\S+)(?:\s([\s\S]*))?$")


def expand_skill_command(text: str, skills: Sequence[Skill]) -> str:
    """``/skill:name args`` → a ``<skill>`` block with the skill's body; other input unchanged."""
    match = _SKILL_COMMAND.match(text)
    if not match:
        return text
    skill = next((s for s in skills if s.name == match.group(1)), None)
    if skill is None:
        return text
    try:
        body = js_trim(strip_frontmatter(read_text(skill.file_path)))
    except (OSError, FrontmatterError) as exc:
        raise SkillExpansionError(f"Could not read the skill file {skill.file_path}: {exc}") from exc
    block = (
        f'<skill name="{skill.name}" location="{skill.file_path}">\n'
        f"{T.skill_reference_line(skill.base_dir)}\n\n{body}\n</skill>"
    )
    args = js_trim(match.group(2) or "")
    return f"{block}\n\n{args}" if args else block


_SKILL_BLOCK = re.compile(
    r'^<skill name="([^"]+)" location="([^"]+)">\n([\s\S]*?)\n</skill>(?:\n\n([\s\S]+))?$'
)


@dataclass(frozen=True)
class SkillInvocation:
    """A user message made by ``/skill:name args``: the skill's name, file, body and the typed args."""

    name: str
    location: str
    body: str
    args: str


def parse_skill_invocation(text: str) -> SkillInvocation | None:
    """The parts of a ``<skill …>`` user message (as ``expand_skill_command`` writes it), else None."""
    match = _SKILL_BLOCK.match(text)
    if match is None:
        return None
    return SkillInvocation(match.group(1), match.group(2), match.group(3), match.group(4) or "")


def prompt_input_for(
    resources: LoadedResources,
    active_tools: Sequence[str],
    tool_snippets: Mapping[str, str],
    tool_guidelines: Mapping[str, Sequence[str]],
    docs_dir: str | None = None,
) -> SystemPromptInput:
    """The prompt inputs for a loaded project and the active tools (guidelines in active-tool order)."""
    guidelines = [g for name in active_tools for g in tool_guidelines.get(name, ())]
    return SystemPromptInput(
        cwd=resources.cwd,
        active_tools=tuple(active_tools),
        tool_snippets={name: tool_snippets[name] for name in active_tools if name in tool_snippets},
        tool_guidelines=guidelines,
        custom_prompt=resources.system_prompt,
        append_text=resources.append_text or None,
        context_files=tuple(resources.context_files),
        skills=tuple(resources.skills),
        docs_dir=docs_dir,
    )
