"""System prompt assembly (deterministic, no dates) and ``/skill:name`` expansion.

The prompt is a preamble followed by tagged sections, each ``<name>\\n…\\n</name>`` after a blank line:
``<tools>``, ``<rules>``, ``<docs>`` (piwork's own prompt only; a replacement prompt from SYSTEM.md or
``--system-prompt`` is the preamble instead of the role and drops these three), then ``<addendum>``
(appended text), ``<project_context>`` (context files), ``<skills>`` (only with a file-reading tool)
and ``<cwd>``, each only when it has content. The structure follows Pi; the wording is piwork's own.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import piwork.core.resources.prompt_text as T
from piwork.core.errors import PiworkError
from piwork.core.jscompat import js_trim
from piwork.core.resources.context_files import ContextFile
from piwork.core.resources.skills import Skill
from piwork.core.resources.textfiles import read_text
from piwork.core.safe_read import SKILL
from piwork.core.tool_selection import DEFAULT_TOOL_NAMES
from piwork.core.tools.registry import tool_facts

if TYPE_CHECKING:
    from piwork.core.resources.loader import LoadedResources

DEFAULT_TOOLS = DEFAULT_TOOL_NAMES
#: Part names of the preamble: piwork's role paragraph, or a replacement prompt (SYSTEM.md / option).
PREAMBLE_PARTS = ("role", "custom")


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
    # tools that are active but not declared in the prompt (reached through another tool); a hidden
    # file reader keeps the skills index, with a hint that names no tool
    hidden_tools: Sequence[str] = ()


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
    """The skills index: three preamble lines, a blank line, then ``<available_skills>`` (starts with "\\n\\n").

    ``read_tool`` names how the model opens a skill file: ``read``, ``bash``, or anything else when the
    reader is reachable only indirectly (the hint then names no tool)."""
    visible = [s for s in skills if not s.disable_model_invocation]
    if not visible:
        return ""
    load = (
        T.SKILLS_LOAD_WITH_READ
        if read_tool == "read"
        else T.SKILLS_LOAD_WITH_BASH
        if read_tool == "bash"
        else T.SKILLS_LOAD_INDIRECT
    )
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
    blocks = [
        f'<project_instructions path="{_escape_attribute(f.path)}">\n{f.content}\n</project_instructions>'
        for f in files
    ]
    return "\n\n".join([T.PROJECT_CONTEXT_INTRO, *blocks])


def _one_line(snippet: str) -> str:
    return " ".join(js_trim(re.sub(r"[\r\n]+", " ", snippet)).split())


def _rules(tools: Sequence[str], tool_guidelines: Sequence[str]) -> list[str]:
    names = set(tools)
    out: list[str] = []

    def add(text: str) -> None:
        trimmed = js_trim(text)
        if trimmed and trimmed not in out:
            out.append(trimmed)

    has_bash, has_ps = "bash" in names, "powershell" in names
    if (has_bash or has_ps) and not names & {"grep", "find", "ls"}:
        add(
            T.SHELL_HINT_BOTH
            if has_bash and has_ps
            else T.SHELL_HINT_POWERSHELL
            if has_ps
            else T.SHELL_HINT_BASH
        )
    for guideline in tool_guidelines:
        add(guideline)
    for guideline in T.ALWAYS_GUIDELINES:
        add(guideline)
    return out


def _acts(tool: str) -> bool:
    """The tool changes files or runs commands, by what it declares."""
    facts = tool_facts(tool)
    return facts.changes_files or facts.command_argument is not None


def _skill_read_tool(prompt: SystemPromptInput) -> str | None:
    """``read`` or ``bash`` when declared; ``indirect`` when only a hidden one can read; else None."""
    declared = [name for name in prompt.active_tools if name not in prompt.hidden_tools]
    tool = skill_read_tool(declared)
    if tool is None and skill_read_tool(prompt.active_tools) is not None:
        return "indirect"
    return tool


def _section_bodies(prompt: SystemPromptInput) -> list[tuple[str, str]]:
    """(part name, body) in prompt order; the first is the untagged preamble (``custom`` or ``role``)."""
    bodies: list[tuple[str, str]] = []
    if prompt.custom_prompt:
        bodies.append(("custom", prompt.custom_prompt))
    else:
        declared = [name for name in prompt.active_tools if name not in prompt.hidden_tools]
        snippets = {name: _one_line(text) for name, text in prompt.tool_snippets.items()}
        tool_lines = [f"- {name}: {snippets[name]}" for name in declared if snippets.get(name)]
        # with no tool that writes or runs anything (a read-only task), the role does not promise it
        acting = any(_acts(name) for name in prompt.active_tools)
        bodies.append(("role", T.ROLE if acting or not prompt.active_tools else T.ROLE_READ_ONLY))
        tools_text = "\n".join(tool_lines) if tool_lines else T.NO_TOOLS
        bodies.append(("tools", f"{tools_text}\n\n{T.OTHER_TOOLS_NOTE}"))
        rules = _rules(declared, prompt.tool_guidelines)
        bodies.append(("rules", "\n".join(f"- {rule}" for rule in rules)))
        if prompt.docs_dir is not None:
            bodies.append(("docs", "\n".join([T.DOCS_HEADING, *T.docs_lines(prompt.docs_dir)])))
    if prompt.append_text:
        bodies.append(("addendum", prompt.append_text))
    if prompt.context_files:
        bodies.append(("project_context", _project_context(prompt.context_files)))
    tool = _skill_read_tool(prompt)
    skills = js_trim(format_skills_for_prompt(prompt.skills, tool)) if tool and prompt.skills else ""
    if skills:
        bodies.append(("skills", skills))
    bodies.append(("cwd", prompt.cwd.replace("\\", "/")))
    return bodies


def section_of(part_name: str) -> str:
    """The section a prompt part fills: ``preamble`` for the role or replacement prompt, else its own name."""
    return "preamble" if part_name in PREAMBLE_PARTS else part_name


def system_prompt_parts(prompt: SystemPromptInput) -> list[PromptPart]:
    """The prompt as named parts (for the prompt-anatomy view); joined, they are the prompt exactly.

    The first part is the preamble as it is; every other part is ``"\\n\\n<name>\\n" + body + "\\n</name>"``."""
    parts: list[PromptPart] = []
    for name, body in _section_bodies(prompt):
        if not parts:
            parts.append(PromptPart(name, body))
        else:
            parts.append(PromptPart(name, f"\n\n<{name}>\n{body}\n</{name}>"))
    return parts


def system_prompt_sections(prompt: SystemPromptInput) -> dict[str, str]:
    """The prompt as the ordered sections a session's system message holds: ``preamble`` untagged, every
    other one wrapped in its tag. Rendered (non-empty texts joined by a blank line) they give the prompt."""
    sections: dict[str, str] = {}
    for name, body in _section_bodies(prompt):
        section = section_of(name)
        sections[section] = body if section == "preamble" else f"<{name}>\n{body}\n</{name}>"
    return sections


def render_system_sections(content: str, sections: Mapping[str, str | None]) -> str:
    """A system message's whole prompt: its content then each section still present, joined by blank lines."""
    texts = [content, *(text for text in sections.values() if text is not None)]
    return "\n\n".join(text for text in texts if text)


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
    # the YAML parser is imported only once a file has frontmatter to read
    from piwork.core.resources.frontmatter import FrontmatterError, strip_frontmatter

    try:
        body = js_trim(strip_frontmatter(read_text(skill.file_path, SKILL)))
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
