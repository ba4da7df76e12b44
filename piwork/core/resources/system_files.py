"""SYSTEM.md (replacement prompt) and APPEND_SYSTEM.md (appended text): which source applies.

An explicit value wins (even empty; no discovery). Otherwise the project's ``.pi`` file when the
project is trusted and the file exists, else the agent dir's file, else nothing.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field

from piwork.core.resources.textfiles import read_text
from piwork.core.safe_read import SYSTEM_PROMPT


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


def _read_source(value: str, what: str, warnings: list[str], cwd: str, *, keep_value: bool) -> str | None:
    """A value naming an existing file is that file's text; otherwise the value itself.

    An explicit value that names a file it cannot read is kept as text (as Pi does); a discovered
    file that cannot be read (a FIFO, a device, too large) gives nothing, never its own path as text."""
    path = os.path.join(cwd, value) if value else value
    if path and os.path.exists(path):
        try:
            return read_text(path, SYSTEM_PROMPT)
        except OSError as exc:
            warnings.append(f"Could not read the {what} file {value}: {exc.strerror or exc}")
            return value if keep_value else None
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
        text = _read_source(
            source, "system prompt", out.warnings, cwd, keep_value=explicit_system is not None
        )
        if text is not None:
            out.system_prompt = text
            if os.path.exists(os.path.join(cwd, source)):
                out.system_prompt_source = os.path.abspath(os.path.join(cwd, source))
    explicit = explicit_append is not None
    if explicit_append is not None:
        appends = [a for a in explicit_append if a]
    else:
        found = discover_file("APPEND_SYSTEM.md", cwd, agent_dir, project_trusted)
        appends = [found] if found else []
    for entry in appends:
        text = _read_source(entry, "append system prompt", out.warnings, cwd, keep_value=explicit)
        if text is None:
            continue
        out.append.append(text)
        if os.path.exists(os.path.join(cwd, entry)):
            out.append_sources.append(os.path.abspath(os.path.join(cwd, entry)))
    return out
