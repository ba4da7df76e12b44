"""Rows for the resource panel: one per candidate (winners, losers, blocked), in precedence order."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from piwork.core.paths import INDEX_PATH, MEMORY_PATH, SNAPSHOT_PATH
from piwork.core.resources.context_files import ContextCandidate
from piwork.core.resources.diagnostics import Diagnostic
from piwork.core.resources.discovery import DiscoveredPath, ancestor_agents_skill_dirs
from piwork.core.resources.profile import load_profile, profile_path

if TYPE_CHECKING:
    from piwork.core.resources.loader import LoadedResources, LoaderOptions


SKIPPED_TEMPLATE = "the file could not be read or its frontmatter is not valid YAML; the template is skipped"


@dataclass(frozen=True)
class ResourceRow:
    kind: str  # context | skill | prompt | system | append | settings | setting (one key) | mcp | package
    name: str
    path: str
    scope: str  # global | project | ancestor | settings | cli | builtin
    # active | not-selected | shadowed | collision-loser | disabled | blocked-untrusted | error | not-used
    # (not-used: a file Pi reads that piwork has no use for yet, such as .pi/mcp.json)
    state: str
    rank: int | None = None
    settings_scope: str | None = None
    trust_gated: bool = False
    model_visible: bool = False
    winner_path: str | None = None
    diagnostics: tuple[Diagnostic, ...] = field(default=())

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "name": self.name,
            "path": self.path,
            "scope": self.scope,
            "settingsScope": self.settings_scope,
            "rank": self.rank,
            "state": self.state,
            "trustGated": self.trust_gated,
            "modelVisible": self.model_visible,
            "winnerPath": self.winner_path,
            "diagnostics": [d.to_json() for d in self.diagnostics],
        }


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _scope(item: DiscoveredPath, cwd: str) -> tuple[str, str | None]:
    origin = item.origin
    if origin.origin == "package":
        return "package", "project" if origin.scope == "project" else "user"
    if origin.source == "local":
        return "settings", "project" if origin.scope == "project" else "user"
    if origin.scope == "user":
        return "global", None
    if _under(item.path, os.path.join(cwd, ".pi")) or _under(item.path, os.path.join(cwd, ".agents")):
        return "project", None
    return "ancestor", None


def build_rows(
    loaded: LoadedResources, context: Sequence[ContextCandidate], options: LoaderOptions, home: str
) -> list[ResourceRow]:
    rows: list[ResourceRow] = []
    disabled_context = options.no_context_files or not loaded.settings.context_files_enabled()
    for c in context:
        state = "disabled" if disabled_context else c.state
        diags = tuple(d for d in loaded.context_diagnostics if d.path == c.path)
        rows.append(
            ResourceRow("context", os.path.basename(c.path), c.path, c.scope, state, diagnostics=diags)
        )
    rows.extend(_skill_rows(loaded, options, home))
    rows.extend(_prompt_rows(loaded, options))
    rows.extend(_file_rows(loaded, options))
    rows.extend(mcp_rows(loaded.cwd, loaded.project_trusted))
    rows.extend(project_context_rows(loaded.cwd, loaded.project_trusted))
    for problem in loaded.package_diagnostics:
        rows.append(
            ResourceRow(
                "package",
                os.path.basename(problem.path),
                problem.path,
                "package",
                "error",
                diagnostics=(problem,),
            )
        )
    return rows


def _blocked(loaded: LoadedResources, kind: str, paths: Sequence[str]) -> list[ResourceRow]:
    if loaded.project_trusted:
        return []
    return [
        ResourceRow(kind, os.path.basename(p), p, "project", "blocked-untrusted", trust_gated=True)
        for p in paths
        if os.path.exists(p)
    ]


def _skill_rows(loaded: LoadedResources, options: LoaderOptions, home: str) -> list[ResourceRow]:
    cwd = loaded.cwd
    by_path = {s.file_path: s for s in loaded.skills}
    losers = {d.path: d.collision for d in loaded.skill_diagnostics if d.collision is not None}
    rows: list[ResourceRow] = []
    listed: set[str] = set()
    user_agents = os.path.join(home, ".agents", "skills")
    project_roots = [os.path.join(cwd, ".pi", "skills")] + [
        d for d in ancestor_agents_skill_dirs(cwd) if os.path.normpath(d) != os.path.normpath(user_agents)
    ]
    rows.extend(_blocked(loaded, "skill", project_roots))
    for item in loaded.discovered.get("skills", []):
        path = item.path if not os.path.isdir(item.path) else os.path.join(item.path, "SKILL.md")
        scope, settings_scope = _scope(item, cwd)
        listed.add(path)
        rows.append(
            _row_for_skill(loaded, path, scope, settings_scope, item, options.no_skills, by_path, losers)
        )
    for skill in loaded.skills:
        if skill.file_path not in listed:
            listed.add(skill.file_path)
            rows.append(_row_for_skill(loaded, skill.file_path, "cli", None, None, False, by_path, losers))
    for path in losers:
        if path not in listed:
            rows.append(_row_for_skill(loaded, path, "cli", None, None, False, by_path, losers))
    return rows


def _row_for_skill(
    loaded: LoadedResources,
    path: str,
    scope: str,
    settings_scope: str | None,
    item: DiscoveredPath | None,
    no_skills: bool,
    by_path: dict[str, Any],
    losers: dict[str, Any],
) -> ResourceRow:
    diags = tuple(d for d in loaded.skill_diagnostics if d.path == path)
    skill = by_path.get(path)
    rank = item.origin.rank if item else None
    gated = item is not None and item.origin.scope == "project"
    name = skill.name if skill else os.path.basename(os.path.dirname(path))
    winner = None
    if item is not None and (not item.enabled or no_skills):
        state = "disabled"
    elif skill is not None:
        state = "active"
    elif path in losers:
        state, winner, name = "collision-loser", losers[path].winner_path, losers[path].name
    elif any(d.type != "collision" for d in diags):
        state = "error"
    else:
        state = "shadowed"
    visible = skill is not None and not skill.disable_model_invocation
    return ResourceRow("skill", name, path, scope, state, rank, settings_scope, gated, visible, winner, diags)


def _prompt_rows(loaded: LoadedResources, options: LoaderOptions) -> list[ResourceRow]:
    rows = _blocked(loaded, "prompt", [os.path.join(loaded.cwd, ".pi", "prompts")])
    by_path = {p.file_path: p for p in loaded.prompts}
    losers = {d.path: d.collision for d in loaded.prompt_diagnostics if d.collision is not None}
    listed: set[str] = set()
    for item in loaded.discovered.get("prompts", []):
        scope, settings_scope = _scope(item, loaded.cwd)
        listed.add(item.path)
        name = os.path.basename(item.path).removesuffix(".md")
        winner = None
        if not item.enabled or options.no_prompt_templates:
            state = "disabled"
        elif item.path in by_path:
            state = "active"
        elif item.path in losers:
            state, winner = "collision-loser", losers[item.path].winner_path
        else:
            state = "error"
        gated = item.origin.scope == "project"
        problems: tuple[Diagnostic, ...] = ()
        if state == "error":  # the loader's warning says why (a folder's files have their own)
            found = tuple(d for d in loaded.prompt_diagnostics if d.path == item.path and d.collision is None)
            problems = found or (Diagnostic("error", SKIPPED_TEMPLATE, item.path, "unreadable_template"),)
        rows.append(
            ResourceRow(
                "prompt",
                name,
                item.path,
                scope,
                state,
                item.origin.rank,
                settings_scope,
                gated,
                winner_path=winner,
                diagnostics=problems,
            )
        )
    for prompt in loaded.prompts:
        if prompt.file_path not in listed:
            rows.append(ResourceRow("prompt", prompt.name, prompt.file_path, "cli", "active"))
    return rows


def _file_rows(loaded: LoadedResources, options: LoaderOptions) -> list[ResourceRow]:
    rows: list[ResourceRow] = []
    sources = loaded.prompt_sources
    for kind, file_name, explicit, active in (
        ("system", "SYSTEM.md", options.system_prompt, [sources.system_prompt_source]),
        ("append", "APPEND_SYSTEM.md", options.append_system_prompt, sources.append_sources),
    ):
        explicit_rows = [explicit] if isinstance(explicit, str) else list(explicit or [])
        for value in explicit_rows:
            if value:
                rows.append(ResourceRow(kind, "explicit", value, "cli", "active"))
        project = os.path.join(loaded.cwd, ".pi", file_name)
        user = os.path.join(loaded.agent_dir, file_name)
        if os.path.exists(project):
            state = (
                "blocked-untrusted"
                if not loaded.project_trusted
                else "active"
                if project in active
                else "shadowed"
            )
            rows.append(ResourceRow(kind, file_name, project, "project", state, trust_gated=True))
        if os.path.exists(user):
            rows.append(
                ResourceRow(kind, file_name, user, "global", "active" if user in active else "shadowed")
            )
        if kind == "system":
            builtin = "shadowed" if sources.system_prompt else "active"
            rows.append(ResourceRow(kind, "built-in", "", "builtin", builtin))
    settings = loaded.settings
    for scope in ("global", "project"):
        location = settings.storage.location(scope)
        if not location or not os.path.exists(location):
            continue
        problems = tuple(
            Diagnostic("error", p.message, p.path or "", "settings")
            for p in settings.problems
            if p.scope == scope
        )
        if scope == "project" and not settings.project_trusted:
            state = "blocked-untrusted"
        else:
            state = "error" if problems else "active"
            refused = [p for p in settings.values.problems if p.path == location]  # the file is still used
            problems += tuple(Diagnostic("warning", p.message, location, "setting_refused") for p in refused)
        rows.append(
            ResourceRow(
                "settings",
                "settings.json",
                location,
                scope,
                state,
                trust_gated=scope == "project",
                diagnostics=problems,
            )
        )
    for key in settings.effective:
        origin = settings.origin_of(key) or "global"
        location = settings.storage.location(origin) or ""
        rows.append(ResourceRow("setting", key, location, origin, "active", trust_gated=origin == "project"))
    return rows


def mcp_rows(cwd: str, trusted: bool) -> list[ResourceRow]:
    """``.pi/mcp.json`` when present: it needs trust, and piwork does not use it (``not-used``)."""
    path = os.path.join(cwd, ".pi", "mcp.json")
    if not os.path.exists(path):
        return []
    state = "not-used" if trusted else "blocked-untrusted"
    return [ResourceRow("mcp", "mcp.json", path, "project", state, trust_gated=True)]


def project_context_rows(cwd: str, trusted: bool) -> list[ResourceRow]:
    """piwork's trust-gated project files: the profile, then the snapshot, context index and memory.

    They reach the model only through the context bundle of a task; untrusted, they are listed as
    blocked and not read.
    """
    rows: list[ResourceRow] = []
    path = profile_path(cwd)
    if os.path.lexists(path):
        problems: tuple[Diagnostic, ...] = ()
        if not trusted:
            state = "blocked-untrusted"
        else:
            result = load_profile(cwd)
            problems = result.diagnostics
            state = "active" if result.profile is not None else "error"
        rows.append(
            ResourceRow(
                "profile",
                os.path.basename(path),
                path,
                "project",
                state,
                trust_gated=True,
                model_visible=state == "active",
                diagnostics=problems,
            )
        )
    for rel in (SNAPSHOT_PATH, INDEX_PATH, os.path.dirname(MEMORY_PATH)):
        full = os.path.join(cwd, rel)
        if os.path.lexists(full):
            state = "active" if trusted else "blocked-untrusted"
            rows.append(
                ResourceRow(
                    "project-context", os.path.basename(full), full, "project", state, trust_gated=True
                )
            )
    return rows
