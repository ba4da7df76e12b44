"""Where skills and prompt templates come from, in precedence order, with settings filters applied.

Ranks (lower wins): 0 project settings entry, 1 project auto-discovered, 2 user settings entry,
3 user auto-discovered, 4 package. Entries starting ``!`` exclude by glob, ``+`` force-include
and ``-`` force-exclude an exact path; other globs select among the settings-listed files.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from piwork.core.fs.git import git_root
from piwork.core.resources.diagnostics import Diagnostic
from piwork.core.resources.globmatch import glob_match
from piwork.core.resources.ignore_rules import IgnoreRules, rel_posix
from piwork.core.resources.packages import package_resources
from piwork.core.resources.realpaths import RealPaths
from piwork.core.resources.skills import collect_skill_entries, resolve_user_path

ResourceType = Literal["skills", "prompts"]


@dataclass(frozen=True)
class Origin:
    """Pi's resource metadata: ``source`` local (settings) / auto (discovered), ``scope`` user/project."""

    source: str
    scope: str
    origin: str = "top-level"
    base_dir: str | None = None

    @property
    def rank(self) -> int:
        if self.origin == "package":
            return 4
        return (0 if self.scope == "project" else 2) + (0 if self.source == "local" else 1)


@dataclass(frozen=True)
class DiscoveredPath:
    path: str
    origin: Origin
    enabled: bool


def _is_pattern(entry: str) -> bool:
    return entry[:1] in ("!", "+", "-") or "*" in entry or "?" in entry


def _posix(path: str) -> str:
    return path.replace(os.sep, "/")


def _match_any(file_path: str, patterns: Sequence[str], base_dir: str) -> bool:
    rel = rel_posix(file_path, base_dir)
    name = os.path.basename(file_path)
    candidates = [rel, name, _posix(file_path)]
    if name == "SKILL.md":
        parent = os.path.dirname(file_path)
        candidates += [rel_posix(parent, base_dir), os.path.basename(parent), _posix(parent)]
    return any(glob_match(c, _posix(p)) for p in patterns for c in candidates)


def _match_exact(file_path: str, patterns: Sequence[str], base_dir: str) -> bool:
    rel = rel_posix(file_path, base_dir)
    candidates = {rel, _posix(file_path)}
    if os.path.basename(file_path) == "SKILL.md":
        parent = os.path.dirname(file_path)
        candidates |= {rel_posix(parent, base_dir), _posix(parent)}
    for pattern in patterns:
        normalized = pattern[2:] if pattern.startswith(("./", ".\\")) else pattern
        if _posix(normalized) in candidates:
            return True
    return False


def enabled_by_overrides(file_path: str, entries: Sequence[str], base_dir: str) -> bool:
    """Filters a scope's settings apply to its auto-discovered files."""
    excludes = [e[1:] for e in entries if e.startswith("!")]
    includes = [e[1:] for e in entries if e.startswith("+")]
    force_out = [e[1:] for e in entries if e.startswith("-")]
    enabled = True
    if excludes and _match_any(file_path, excludes, base_dir):
        enabled = False
    if includes and _match_exact(file_path, includes, base_dir):
        enabled = True
    if force_out and _match_exact(file_path, force_out, base_dir):
        enabled = False
    return enabled


def apply_patterns(files: Sequence[str], patterns: Sequence[str], base_dir: str) -> set[str]:
    includes = [p for p in patterns if p[:1] not in ("+", "-", "!")]
    excludes = [p[1:] for p in patterns if p.startswith("!")]
    force_in = [p[1:] for p in patterns if p.startswith("+")]
    force_out = [p[1:] for p in patterns if p.startswith("-")]
    result = [f for f in files if not includes or _match_any(f, includes, base_dir)]
    if excludes:
        result = [f for f in result if not _match_any(f, excludes, base_dir)]
    for f in files:
        if force_in and f not in result and _match_exact(f, force_in, base_dir):
            result.append(f)
    if force_out:
        result = [f for f in result if not _match_exact(f, force_out, base_dir)]
    return set(result)


def collect_prompt_entries(directory: str) -> list[str]:
    """Top-level ``*.md`` of an auto-discovered prompts folder (dot names, node_modules, ignores skipped)."""
    if not os.path.isdir(directory):
        return []
    rules = IgnoreRules()
    rules.add_from_dir(directory, directory)
    found = []
    try:
        names = sorted(os.listdir(directory))
    except OSError:
        return []
    for name in names:
        if name.startswith(".") or name == "node_modules":
            continue
        path = os.path.join(directory, name)
        if os.path.isfile(path) and name.endswith(".md") and not rules.ignores(name):
            found.append(path)
    return found


def collect_markdown_files(directory: str) -> list[str]:
    """All ``*.md`` below a settings-listed prompts folder (recursive, ignore files honoured)."""
    found: list[str] = []
    _collect_md(directory, IgnoreRules(), directory, found, frozenset())
    return found


def _collect_md(
    directory: str, rules: IgnoreRules, root: str, found: list[str], seen: frozenset[str]
) -> None:
    real = os.path.realpath(directory)
    if real in seen:
        return
    seen = seen | {real}
    rules.add_from_dir(directory, root)
    try:
        names = sorted(os.listdir(directory))
    except OSError:
        return
    for name in names:
        if name.startswith(".") or name == "node_modules":
            continue
        path = os.path.join(directory, name)
        is_dir = os.path.isdir(path)
        rel = rel_posix(path, root)
        if rules.ignores(f"{rel}/" if is_dir else rel):
            continue
        if is_dir:
            _collect_md(path, rules, root, found, seen)
        elif os.path.isfile(path) and name.endswith(".md"):
            found.append(path)


def _files_from_entries(paths: Sequence[str], kind: ResourceType, realpaths: RealPaths) -> list[str]:
    files: list[str] = []
    for path in paths:
        if os.path.isfile(path):
            files.append(path)
        elif os.path.isdir(path):
            if kind == "skills":
                files.extend(collect_skill_entries(path, "pi", realpaths))
            else:
                files.extend(collect_markdown_files(path))
    return files


def ancestor_agents_skill_dirs(cwd: str) -> list[str]:
    """``.agents/skills`` from cwd upwards, stopping after the git root (or at ``/``)."""
    directory = os.path.abspath(cwd)
    root = git_root(directory)
    dirs = []
    while True:
        dirs.append(os.path.join(directory, ".agents", "skills"))
        if root is not None and directory == root:
            return dirs
        parent = os.path.dirname(directory)
        if parent == directory:
            return dirs
        directory = parent


@dataclass(frozen=True)
class ScopeEntries:
    """A scope's resource arrays from settings (``packages`` entries are strings or filter objects)."""

    skills: Sequence[str] = ()
    prompts: Sequence[str] = ()
    packages: Sequence[Any] = ()

    def of(self, kind: ResourceType) -> Sequence[str]:
        return self.skills if kind == "skills" else self.prompts


def discover(
    cwd: str,
    agent_dir: str,
    home: str,
    project_trusted: bool,
    user: ScopeEntries,
    project: ScopeEntries,
    realpaths: RealPaths | None = None,
    diagnostics: list[Diagnostic] | None = None,
) -> dict[ResourceType, list[DiscoveredPath]]:
    """Every candidate file per kind, sorted by rank, canonical duplicates removed (first kept)."""
    realpaths = realpaths or RealPaths()
    diagnostics = diagnostics if diagnostics is not None else []
    project_base = os.path.join(cwd, ".pi")
    found: dict[ResourceType, dict[str, DiscoveredPath]] = {"skills": {}, "prompts": {}}

    def add(kind: ResourceType, path: str, origin: Origin, enabled: bool) -> None:
        if path and path not in found[kind]:
            found[kind][path] = DiscoveredPath(path, origin, enabled)

    configured = [(p, "project") for p in project.packages] + [(p, "user") for p in user.packages]
    resources, package_problems = package_resources(
        configured,
        cwd,
        agent_dir,
        lambda paths, kind: _files_from_entries(paths, kind, realpaths),
        apply_patterns,
    )
    diagnostics.extend(package_problems)
    for resource in resources:
        add(
            resource.kind,
            resource.path,
            Origin(resource.source, resource.scope, "package", resource.base_dir),
            resource.enabled,
        )

    for kind in ("skills", "prompts"):
        for entries, origin, base in (
            (project.of(kind), Origin("local", "project"), project_base),
            (user.of(kind), Origin("local", "user"), agent_dir),
        ):
            plain = [resolve_user_path(e, base) for e in entries if not _is_pattern(e)]
            patterns = [e for e in entries if _is_pattern(e)]
            files = _files_from_entries(plain, kind, realpaths)
            enabled = apply_patterns(files, patterns, base)
            for f in files:
                add(kind, f, origin, f in enabled)

    def add_auto(kind: ResourceType, paths: Sequence[str], origin: Origin, entries: Sequence[str]) -> None:
        base = origin.base_dir or ""
        for path in paths:
            add(kind, path, origin, enabled_by_overrides(path, entries, base))

    user_origin = Origin("auto", "user", base_dir=agent_dir)
    project_origin = Origin("auto", "project", base_dir=project_base)
    user_agents = os.path.join(home, ".agents", "skills")
    if project_trusted:
        add_auto(
            "skills",
            collect_skill_entries(os.path.join(project_base, "skills"), "pi", realpaths),
            project_origin,
            project.skills,
        )
        for agents_dir in ancestor_agents_skill_dirs(cwd):
            if os.path.normpath(agents_dir) == os.path.normpath(user_agents):
                continue
            origin = Origin("auto", "project", base_dir=os.path.dirname(agents_dir))
            add_auto("skills", collect_skill_entries(agents_dir, "agents", realpaths), origin, project.skills)
        add_auto(
            "prompts",
            collect_prompt_entries(os.path.join(project_base, "prompts")),
            project_origin,
            project.prompts,
        )
    add_auto(
        "skills",
        collect_skill_entries(os.path.join(agent_dir, "skills"), "pi", realpaths),
        user_origin,
        user.skills,
    )
    agents_origin = Origin("auto", "user", base_dir=os.path.dirname(user_agents))
    add_auto("skills", collect_skill_entries(user_agents, "agents", realpaths), agents_origin, user.skills)
    add_auto("prompts", collect_prompt_entries(os.path.join(agent_dir, "prompts")), user_origin, user.prompts)

    result: dict[ResourceType, list[DiscoveredPath]] = {}
    for kind, items in found.items():
        ordered = sorted(items.values(), key=lambda item: item.origin.rank)
        seen: set[str] = set()
        unique = []
        for item in ordered:
            canonical = realpaths.canonical(item.path)
            if canonical not in seen:
                seen.add(canonical)
                unique.append(item)
        result[kind] = unique
    return result
