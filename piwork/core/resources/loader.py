"""The resource loader: skills, prompt templates, context files and system-prompt files for one project.

``load_resources`` never reads project resources unless ``project_trusted`` is true; what trust
blocked is still reported (as ``blocked-untrusted`` rows) so the resource panel can show it.
:func:`load_project` first resolves trust, then loads.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from piwork.core.fs.review_gate import ReviewGate, reviewed_only
from piwork.core.paths import expand_home
from piwork.core.resources.context_files import ContextFile, load_context_files
from piwork.core.resources.diagnostics import Diagnostic
from piwork.core.resources.discovery import DiscoveredPath, Origin, ScopeEntries, discover
from piwork.core.resources.panel import ResourceRow, build_rows
from piwork.core.resources.prompts import PromptsResult, PromptTemplate, dedupe_prompts, load_prompt_templates
from piwork.core.resources.realpaths import RealPaths
from piwork.core.resources.skills import (
    Skill,
    SkillsResult,
    SourceInfo,
    load_skills,
    resolve_user_path,
    with_source_info,
)
from piwork.core.resources.system_files import PromptSources, resolve_prompt_sources
from piwork.core.resources.trust import TrustResolver, TrustState
from piwork.core.resources.trust_resource import TrustResource
from piwork.core.settings import Settings
from piwork.core.settings_schema import ENABLE_SKILL_COMMANDS

if TYPE_CHECKING:
    from piwork.core.resources.trust_snapshot import Snapshot


@dataclass
class LoaderOptions:
    """Per-run inputs (CLI flags and plugin hooks). Override callbacks *replace* what was loaded."""

    additional_skill_paths: Sequence[str] = ()
    additional_prompt_paths: Sequence[str] = ()
    no_skills: bool = False
    no_prompt_templates: bool = False
    no_context_files: bool = False
    system_prompt: str | None = None
    append_system_prompt: Sequence[str] | None = None
    skills_override: Callable[[SkillsResult], SkillsResult] | None = None
    prompts_override: Callable[[PromptsResult], PromptsResult] | None = None
    context_files_override: Callable[[list[ContextFile]], list[ContextFile]] | None = None
    system_prompt_override: Callable[[str | None], str | None] | None = None
    append_system_prompt_override: Callable[[list[str]], list[str]] | None = None
    # The hard cap on context files applied when ``piwork.contextFiles.enforceHardCap`` is on: the
    # context governance's ``cap_context_files``, handed down by whoever assembles a session.
    context_file_cap: Callable[[Sequence[ContextFile]], list[ContextFile]] | None = None


@dataclass
class LoadedResources:
    """Everything the loader found for one project: the engine uses the lists, the GUI the rows."""

    cwd: str
    agent_dir: str
    project_trusted: bool
    trust: TrustState | None
    settings: Settings
    skills: list[Skill] = field(default_factory=list)
    skill_diagnostics: list[Diagnostic] = field(default_factory=list)
    prompts: list[PromptTemplate] = field(default_factory=list)
    prompt_diagnostics: list[Diagnostic] = field(default_factory=list)
    context_files: list[ContextFile] = field(default_factory=list)
    context_diagnostics: list[Diagnostic] = field(default_factory=list)
    package_diagnostics: list[Diagnostic] = field(default_factory=list)
    prompt_sources: PromptSources = field(default_factory=PromptSources)
    discovered: dict[str, list[DiscoveredPath]] = field(default_factory=dict)
    rows: list[ResourceRow] = field(default_factory=list)
    # gated files left out because they differ from what the trust decision was made on
    unreviewed: list[str] = field(default_factory=list)

    @property
    def system_prompt(self) -> str | None:
        return self.prompt_sources.system_prompt

    @property
    def append_text(self) -> str:
        return "\n\n".join(self.prompt_sources.append)

    def skill(self, name: str) -> Skill | None:
        return next((s for s in self.skills if s.name == name), None)

    @property
    def skill_commands(self) -> list[Skill]:
        """The skills offered as ``/skill:<name>`` commands (completion, command palette): all of them,
        none when the ``enableSkillCommands`` setting is false. As in Pi, the setting only hides the
        offer: a ``/skill:<name>`` the user types still expands."""
        return list(self.skills) if self.settings.values.value(ENABLE_SKILL_COMMANDS) else []


def _merge_paths(paths: Sequence[str], cwd: str, realpaths: RealPaths) -> list[str]:
    merged: list[str] = []
    seen: set[str] = set()
    for path in paths:
        resolved = resolve_user_path(path, cwd)
        canonical = realpaths.canonical(resolved)
        if canonical not in seen:
            seen.add(canonical)
            merged.append(resolved)
    return merged


def _source_info_for(path: str, origins: dict[str, Origin]) -> SourceInfo | None:
    normalized = os.path.normpath(path)
    exact = origins.get(normalized) or origins.get(path)
    if exact is None:
        for source, origin in origins.items():
            if normalized == source or normalized.startswith(source.rstrip(os.sep) + os.sep):
                exact = origin
                break
    if exact is None:
        return None
    return SourceInfo(path, exact.source, exact.scope, exact.origin, exact.base_dir)


def _map_skill_path(item: DiscoveredPath, origins: dict[str, Origin]) -> str:
    if item.origin.source != "auto" and item.origin.origin != "package":
        return item.path
    skill_file = os.path.join(item.path, "SKILL.md")
    if os.path.isdir(item.path) and os.path.exists(skill_file):
        origins.setdefault(skill_file, item.origin)
        return skill_file
    return item.path


def load_resources(
    cwd: str,
    agent_dir: str,
    settings: Settings,
    options: LoaderOptions | None = None,
    trust: TrustState | None = None,
    home: str | None = None,
) -> LoadedResources:
    """Load every resource kind for ``cwd``; project resources only if ``settings.project_trusted``.

    Discovery starts from the real folder (symlinks resolved) and walks its real parents: the same
    paths the trust decision was made for, so a symlinked cwd cannot pull in a gated resource from
    the link's own parents.
    """
    options = options or LoaderOptions()
    cwd = os.path.realpath(os.path.abspath(expand_home(cwd)))
    agent_dir = os.path.abspath(expand_home(agent_dir))
    home = home or expand_home("~")
    trusted = settings.project_trusted
    loaded = LoadedResources(cwd, agent_dir, trusted, trust, settings)
    user = ScopeEntries(
        settings.scope_list("global", "skills"),
        settings.scope_list("global", "prompts"),
        settings.packages("global"),
    )
    project = ScopeEntries(
        settings.scope_list("project", "skills"),
        settings.scope_list("project", "prompts"),
        settings.packages("project"),
    )
    realpaths = RealPaths()
    found = discover(cwd, agent_dir, home, trusted, user, project, realpaths, loaded.package_diagnostics)
    loaded.discovered = {kind: list(items) for kind, items in found.items()}
    origins: dict[str, Origin] = {}
    for items in found.values():
        for item in items:
            origins.setdefault(item.path, item.origin)

    enabled_skills = [_map_skill_path(i, origins) for i in found["skills"] if i.enabled]
    skill_paths = _merge_paths(
        [*([] if options.no_skills else enabled_skills), *options.additional_skill_paths], cwd, realpaths
    )
    if options.no_skills and not skill_paths:
        skills_result = SkillsResult()
    else:
        skills_result = load_skills(cwd, agent_dir, skill_paths, include_defaults=False, realpaths=realpaths)
    if options.skills_override:
        skills_result = options.skills_override(skills_result)
    loaded.skills = [
        with_source_info(s, _source_info_for(s.file_path, origins) or s.source_info)
        for s in skills_result.skills
    ]
    loaded.skill_diagnostics = list(skills_result.diagnostics)
    _report_missing(
        options.additional_skill_paths, cwd, loaded.skill_diagnostics, "Skill path does not exist"
    )

    enabled_prompts = [i.path for i in found["prompts"] if i.enabled]
    prompt_paths = _merge_paths(
        [*([] if options.no_prompt_templates else enabled_prompts), *options.additional_prompt_paths],
        cwd,
        realpaths,
    )
    if options.no_prompt_templates and not prompt_paths:
        prompts_result = PromptsResult()
    else:
        prompts_result = dedupe_prompts(load_prompt_templates(cwd, agent_dir, prompt_paths))
    if options.prompts_override:
        prompts_result = options.prompts_override(prompts_result)
    loaded.prompts = [_with_prompt_source(p, origins) for p in prompts_result.prompts]
    loaded.prompt_diagnostics = list(prompts_result.diagnostics)
    _report_missing(
        options.additional_prompt_paths, cwd, loaded.prompt_diagnostics, "Prompt template path does not exist"
    )

    enabled_context = not options.no_context_files and settings.context_files_enabled()
    context = load_context_files(cwd, agent_dir)
    loaded.context_files = context.files if enabled_context else []
    if options.context_file_cap is not None and settings.context_files_enforce_hard_cap():
        loaded.context_files = options.context_file_cap(loaded.context_files)
    if options.context_files_override:
        loaded.context_files = options.context_files_override(list(loaded.context_files))
    loaded.context_diagnostics = context.diagnostics

    sources = resolve_prompt_sources(
        cwd, agent_dir, trusted, options.system_prompt, options.append_system_prompt
    )
    if options.system_prompt_override:
        sources.system_prompt = options.system_prompt_override(sources.system_prompt)
    if options.append_system_prompt_override:
        sources.append = options.append_system_prompt_override(list(sources.append))
    loaded.prompt_sources = sources
    loaded.rows = build_rows(loaded, context.candidates, options, home)
    return loaded


def _with_prompt_source(template: PromptTemplate, origins: dict[str, Origin]) -> PromptTemplate:
    info = _source_info_for(template.file_path, origins)
    if info is None:
        return template
    return PromptTemplate(
        template.name,
        template.description,
        template.content,
        template.file_path,
        info,
        template.argument_hint,
    )


def _report_missing(paths: Sequence[str], cwd: str, diagnostics: list[Diagnostic], message: str) -> None:
    for raw in paths:
        resolved = resolve_user_path(raw, cwd)
        if not os.path.exists(resolved) and not any(d.path == resolved for d in diagnostics):
            diagnostics.append(Diagnostic("error", message, resolved, "path_not_found"))


async def load_project(
    cwd: str,
    agent_dir: str,
    resolver: TrustResolver,
    options: LoaderOptions | None = None,
    override: bool | None = None,
    home: str | None = None,
    reviewed: Snapshot | None = None,
) -> LoadedResources:
    """Decide trust first (with only global settings read), then load for that decision.

    When the decision was made on a reading of the gated files (the trust dialog's, or ``reviewed``
    given by a caller that asked itself), only gated files matching it load; the others are left out
    with a diagnostic and listed in ``LoadedResources.unreviewed``, for the caller to ask again.
    """
    cwd = os.path.realpath(os.path.abspath(expand_home(cwd)))
    settings = Settings.for_project(cwd, agent_dir, project_trusted=False)
    resolver.default_policy = settings.default_project_trust()
    state = await resolver.resolve(cwd, override=override)
    baseline = state.reviewed or reviewed
    gate = _review_gate(baseline, state.resources) if state.trusted and baseline is not None else None
    with reviewed_only(gate):
        if state.trusted:
            settings.set_project_trusted(True)
        # scanning skill folders and reading files: in a worker thread, off the caller's event loop
        loaded = await asyncio.to_thread(load_resources, cwd, agent_dir, settings, options, state, home)
    if gate is not None:
        loaded.unreviewed = list(gate.refused)
    return loaded


def _review_gate(snapshot: Snapshot, resources: Sequence[TrustResource]) -> ReviewGate:
    """The gate holding a load of ``resources`` to the files of the reading ``snapshot``."""
    hashes = {os.path.realpath(path): state.sha256 for path, state in snapshot.files.items()}
    roots = tuple(os.path.realpath(r.path) for r in resources)
    return ReviewGate(hashes, roots, not snapshot.truncated)
