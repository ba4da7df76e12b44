"""resources suite: context_files, load_skills, load_resources, format_skills_for_prompt,
build_system_prompt."""

from __future__ import annotations

from typing import Any

from piwork.conformance.harness import CaseEnv
from piwork.core.context.caps import cap_context_files
from piwork.core.resources import prompt_text
from piwork.core.resources.context_files import ContextFile, load_context_files
from piwork.core.resources.diagnostics import Diagnostic
from piwork.core.resources.loader import LoaderOptions, load_resources
from piwork.core.resources.skills import Skill, SourceInfo, load_skills
from piwork.core.resources.system_prompt import (
    DEFAULT_TOOLS,
    PromptPart,
    SystemPromptInput,
    format_skills_for_prompt,
    system_prompt_parts,
)
from piwork.core.settings import Settings


def _diag(d: Diagnostic) -> dict[str, Any]:
    out: dict[str, Any] = {"type": d.type, "kind": d.kind or "parse_error", "path": d.path}
    if d.collision is not None:
        out["collision"] = d.collision.to_json()
    return out


def _agent_dir(env: CaseEnv) -> str:
    assert env.agent_dir is not None
    return env.agent_dir


def _context_files(args: dict[str, Any], env: CaseEnv) -> Any:
    result = load_context_files(args["cwd"], _agent_dir(env))
    return {"files": [f.to_json() for f in result.files]}


def _load_skills(args: dict[str, Any], env: CaseEnv) -> Any:
    include = args.get("includeDefaults")
    result = load_skills(
        args["cwd"], _agent_dir(env), args.get("skillPaths") or [], True if include is None else include
    )
    return {
        "skills": [s.to_json() for s in result.skills],
        "diagnostics": [_diag(d) for d in result.diagnostics],
    }


def _load_resources(args: dict[str, Any], env: CaseEnv) -> Any:
    trusted = args.get("projectTrusted")
    trusted = True if trusted is None else bool(trusted)
    cwd, agent_dir = args["cwd"], _agent_dir(env)
    settings = Settings.for_project(cwd, agent_dir, project_trusted=trusted)
    options = LoaderOptions(
        additional_skill_paths=args.get("additionalSkillPaths") or [],
        no_skills=bool(args.get("noSkills")),
        no_prompt_templates=bool(args.get("noPromptTemplates")),
        no_context_files=bool(args.get("noContextFiles")),
        context_file_cap=cap_context_files,
    )
    loaded = load_resources(cwd, agent_dir, settings, options, home=env.home)
    sources = loaded.prompt_sources
    return {
        "skills": [s.to_json() for s in loaded.skills],
        "skillDiagnostics": [_diag(d) for d in loaded.skill_diagnostics],
        "prompts": [p.to_json() for p in loaded.prompts],
        "contextFiles": [f.to_json() for f in loaded.context_files],
        "systemPrompt": sources.system_prompt,
        "systemPromptSource": sources.system_prompt_source,
        "appendSystemPrompt": sources.append,
        "appendSystemPromptSources": sources.append_sources,
    }


# piwork words its prompt sentences itself; the fixtures hold the reference's sentences (quoted in the
# conformance README). Only for comparison, piwork's sentences are mapped onto those, so everything
# else in the prompt (structure, tags, separators, escaping, order) is still compared byte for byte.
_REFERENCE_WORDING = {
    prompt_text.SKILLS_PREAMBLE: "The following skills provide specialized instructions for specific tasks.",
    prompt_text.SKILLS_LOAD_WITH_READ: "Use the read tool to load a skill's file when the task matches its description.",
    prompt_text.SKILLS_LOAD_WITH_BASH: "Use bash to load a skill's file when the task matches its description.",
    prompt_text.SKILLS_LOAD_INDIRECT: "Load a skill's file when the task matches its description.",
    prompt_text.SKILLS_RELATIVE_PATHS: (
        "Resolve relative paths against the skill's directory (parent of SKILL.md). "
        "Use absolute paths in tool calls."
    ),
    prompt_text.PROJECT_CONTEXT_INTRO: "Project-specific instructions and guidelines:",
}


def _as_reference_wording(text: str, structural_lines: set[str]) -> str:
    lines = text.split("\n")
    return "\n".join(
        _REFERENCE_WORDING.get(line, line) if line in structural_lines else line for line in lines
    )


def _skill(d: dict[str, Any]) -> Skill:
    path = d.get("filePath", "")
    return Skill(
        d["name"],
        d["description"],
        path,
        d.get("baseDir", ""),
        bool(d.get("disableModelInvocation")),
        SourceInfo(path, "local", "temporary"),
    )


def _format_skills(args: dict[str, Any], env: CaseEnv) -> Any:
    text = format_skills_for_prompt([_skill(s) for s in args["skills"]], args.get("fileReadTool") or "read")
    preamble_end = text.find("<available_skills>")
    head = _as_reference_wording(text[:preamble_end], set(_REFERENCE_WORDING)) if preamble_end >= 0 else ""
    return {"text": head + text[max(preamble_end, 0) :] if preamble_end >= 0 else text}


def _build_prompt(args: dict[str, Any], env: CaseEnv) -> Any:
    o = args["options"]
    tools = o.get("selectedTools")
    prompt = SystemPromptInput(
        cwd=o["cwd"],
        active_tools=tuple(tools) if tools is not None else DEFAULT_TOOLS,
        tool_snippets=o.get("toolSnippets") or {},
        tool_guidelines=o.get("promptGuidelines") or (),
        custom_prompt=o.get("customPrompt"),
        append_text=o.get("appendSystemPrompt"),
        context_files=[ContextFile(f["path"], f["content"]) for f in o.get("contextFiles") or []],
        skills=[_skill(s) for s in o.get("skills") or []],
        hidden_tools=tuple(o.get("hiddenTools") or ()),
    )
    return {"text": "".join(_as_reference_part(part) for part in system_prompt_parts(prompt))}


def _as_reference_part(part: PromptPart) -> str:
    """A prompt part with piwork's own sentences in the reference's words, at the places piwork emits them.

    Only two parts carry such sentences, each at a fixed spot: the project-context intro (right after
    the opening tag) and the skills preamble (before ``<available_skills>``). Everything the user wrote
    (custom prompt, appended text, context files, skill fields) stays as it is, even when it happens to
    contain the same sentence.
    """
    text = part.text
    if part.name == "project_context":
        ours = f"\n\n<project_context>\n{prompt_text.PROJECT_CONTEXT_INTRO}\n\n"
        if text.startswith(ours):
            reference = _REFERENCE_WORDING[prompt_text.PROJECT_CONTEXT_INTRO]
            return f"\n\n<project_context>\n{reference}\n\n" + text[len(ours) :]
    elif part.name == "skills":
        end = text.find("<available_skills>")
        if end >= 0:
            return _as_reference_wording(text[:end], set(_REFERENCE_WORDING)) + text[end:]
    return text


OPS = {
    "format_skills_for_prompt": _format_skills,
    "build_system_prompt": _build_prompt,
    "load_resources": _load_resources,
    "context_files": _context_files,
    "load_skills": _load_skills,
}
