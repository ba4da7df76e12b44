"""SYSTEM.md (replacement prompt) and APPEND_SYSTEM.md (appended text): which source applies.

An explicit value wins (even empty; no discovery). Otherwise the project's ``.pi`` file when the
project is trusted and the file exists, else the agent dir's file, else nothing.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field

from piwork.core.resources.textfiles import read_text


@dataclass
class PromptSources:
    system_prompt: str | None = None
    system_prompt_source: str | None = None
    append: list[str] = field(default_factory=list)
    append_sources: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def discover_file(name: str, cwd: str, agent_dir: str, project_trusted: bool) -> str | None:
    project = os.path.join(cwd, ".pi", name)
    if project_trusted and os.path.exists(project):
        return project
    user = os.path.join(agent_dir, name)
    return user if os.path.exists(user) else None


def read_prompt_input(value: str, what: str, warnings: list[str], cwd: str = "") -> str:
    """A value naming an existing file is that file's text; otherwise the value itself."""
    path = os.path.join(cwd, value) if value else value
    if path and os.path.exists(path):
        try:
            return read_text(path)
        except OSError as exc:
            warnings.append(f"Could not read the {what} file {value}: {exc.strerror or exc}")
    return value


def resolve_prompt_sources(
    cwd: str,
    agent_dir: str,
    project_trusted: bool,
    explicit_system: str | None = None,
    explicit_append: Sequence[str] | None = None,
) -> PromptSources:
    out = PromptSources()
    source = (
        explicit_system
        if explicit_system is not None
        else discover_file("SYSTEM.md", cwd, agent_dir, project_trusted)
    )
    if source:
        out.system_prompt = read_prompt_input(source, "system prompt", out.warnings, cwd)
        if os.path.exists(os.path.join(cwd, source)):
            out.system_prompt_source = os.path.abspath(os.path.join(cwd, source))
    if explicit_append is not None:
        appends = [a for a in explicit_append if a]
    else:
        found = discover_file("APPEND_SYSTEM.md", cwd, agent_dir, project_trusted)
        appends = [found] if found else []
    out.append = [read_prompt_input(s, "append system prompt", out.warnings, cwd) for s in appends]
    out.append_sources = [
        os.path.abspath(os.path.join(cwd, s)) for s in appends if os.path.exists(os.path.join(cwd, s))
    ]
    return out
