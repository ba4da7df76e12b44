"""Skills: Markdown files with a name and description, discovered in skill folders.

A folder holding ``SKILL.md`` is one skill (not searched further); other ``.md`` files count at a
scan root ("pi" layout) or below it ("agents" layout). Invalid files are reported, never raised.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass, field, replace
from typing import Any, Literal
from urllib.parse import unquote, urlparse

from piwork.core.jscompat import js_trim, utf16_len
from piwork.core.paths import expand_home
from piwork.core.resources.diagnostics import Collision, Diagnostic
from piwork.core.resources.ignore_rules import IgnoreRules, rel_posix
from piwork.core.resources.realpaths import RealPaths
from piwork.core.resources.textfiles import read_text
from piwork.core.safe_read import SKILL

MAX_NAME_LENGTH = 64
MAX_DESCRIPTION_LENGTH = 1024
_NAME_RE = re.compile(r"^[a-z0-9-]+$")

SkillSource = Literal["user", "project", "path"]
ScanMode = Literal["pi", "agents"]


@dataclass(frozen=True)
class SourceInfo:
    """Where a resource came from, in Pi's terms (``source`` local/auto/cli, ``scope`` user/project/temporary)."""

    path: str
    source: str
    scope: str
    origin: str = "top-level"
    base_dir: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "path": self.path,
            "source": self.source,
            "scope": self.scope,
            "origin": self.origin,
        }
        if self.base_dir is not None:
            out["baseDir"] = self.base_dir
        return out


@dataclass(frozen=True)
class Skill:
    name: str
    description: str
    file_path: str
    base_dir: str
    disable_model_invocation: bool
    source_info: SourceInfo

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "description": self.description,
            "filePath": self.file_path,
            "baseDir": self.base_dir,
            "disableModelInvocation": self.disable_model_invocation,
            "sourceInfo": self.source_info.to_json(),
        }


@dataclass
class SkillsResult:
    skills: list[Skill] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)


def _source_info(file_path: str, base_dir: str, source: SkillSource) -> SourceInfo:
    scope = {"user": "user", "project": "project"}.get(source, "temporary")
    return SourceInfo(file_path, "local", scope, "top-level", base_dir)


def _name_problems(name: str) -> list[tuple[str, str]]:
    problems = []
    length = utf16_len(name)
    if length > MAX_NAME_LENGTH:
        problems.append(("name_too_long", f"name exceeds {MAX_NAME_LENGTH} characters ({length})"))
    if not _NAME_RE.match(name):
        problems.append(
            (
                "name_invalid_chars",
                "name contains invalid characters (must be lowercase a-z, 0-9, hyphens only)",
            )
        )
    if name.startswith("-") or name.endswith("-"):
        problems.append(("name_hyphen_edge", "name must not start or end with a hyphen"))
    if "--" in name:
        problems.append(("name_consecutive_hyphens", "name must not contain consecutive hyphens"))
    return problems


def load_skill_file(file_path: str, source: SkillSource) -> tuple[Skill | None, list[Diagnostic]]:
    """Parse one candidate file; a skill needs a non-blank description."""
    diagnostics: list[Diagnostic] = []
    declared = os.path.basename(file_path) == "SKILL.md"
    try:
        text = read_text(file_path, SKILL)
    except OSError as exc:
        diagnostics.append(Diagnostic("warning", str(exc.strerror or exc), file_path, "parse_error"))
        return None, diagnostics
    # the YAML parser is imported only once a file has frontmatter to read
    from piwork.core.resources.frontmatter import FrontmatterError, parse_frontmatter

    try:
        fields = parse_frontmatter(text).fields()
    except FrontmatterError as exc:
        if declared:
            diagnostics.append(Diagnostic("warning", str(exc), file_path, "parse_error"))
        return None, diagnostics
    description = fields.get("description")
    has_description = isinstance(description, str) and js_trim(description) != ""
    if not declared and not has_description:
        return None, diagnostics
    skill_dir = os.path.dirname(file_path)
    if not has_description:
        diagnostics.append(
            Diagnostic("warning", "description is required", file_path, "description_required")
        )
    elif utf16_len(str(description)) > MAX_DESCRIPTION_LENGTH:
        message = f"description exceeds {MAX_DESCRIPTION_LENGTH} characters ({utf16_len(str(description))})"
        diagnostics.append(Diagnostic("warning", message, file_path, "description_too_long"))
    raw_name = fields.get("name")
    name = raw_name if isinstance(raw_name, str) and raw_name else os.path.basename(skill_dir)
    for kind, message in _name_problems(name):
        diagnostics.append(Diagnostic("warning", message, file_path, kind))
    if not has_description:
        return None, diagnostics
    skill = Skill(
        name=name,
        description=str(description),
        file_path=file_path,
        base_dir=skill_dir,
        disable_model_invocation=fields.get("disable-model-invocation") is True,
        source_info=_source_info(file_path, skill_dir, source),
    )
    return skill, diagnostics


def _entries(directory: str) -> list[os.DirEntry[str]]:
    with os.scandir(directory) as it:
        return sorted(it, key=lambda e: e.name)


def _kind(entry: os.DirEntry[str]) -> tuple[bool, bool] | None:
    """(is_dir, is_file) following symlinks; None for a broken link."""
    try:
        return entry.is_dir(follow_symlinks=True), entry.is_file(follow_symlinks=True)
    except OSError:
        return None


def _is_file(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_file(follow_symlinks=True)
    except OSError:
        return False


def _ignored(rules: IgnoreRules, path: str, root: str, is_dir: bool) -> bool:
    if not rules.active:
        return False
    rel = rel_posix(path, root)
    return rules.ignores(f"{rel}/" if is_dir else rel)


def _broken(entry: os.DirEntry[str]) -> bool:
    return entry.is_symlink() and not os.path.exists(entry.path)


def scan_skill_dir(directory: str, source: SkillSource, realpaths: RealPaths | None = None) -> SkillsResult:
    """Load skills under one directory given as a path (root ``.md`` files count)."""
    result = SkillsResult()
    for path in collect_skill_entries(directory, "pi", realpaths):
        skill, diagnostics = load_skill_file(path, source)
        if skill:
            result.skills.append(skill)
        result.diagnostics.extend(diagnostics)
    return result


def collect_skill_entries(directory: str, mode: ScanMode, realpaths: RealPaths | None = None) -> list[str]:
    """Candidate skill files under an auto-discovered or settings-listed root."""
    found: list[str] = []
    if os.path.exists(directory):
        _collect(directory, mode, IgnoreRules(), directory, found, frozenset(), realpaths or RealPaths())
    return found


def _collect(
    directory: str,
    mode: ScanMode,
    rules: IgnoreRules,
    root: str,
    found: list[str],
    ancestors: frozenset[str],
    realpaths: RealPaths,
) -> None:
    real = realpaths.canonical(directory)
    if real in ancestors:
        return
    ancestors = ancestors | {real}
    try:
        entries = _entries(directory)
    except OSError:
        return
    rules.add_from_dir(directory, root, {e.name for e in entries})
    for entry in entries:
        if entry.name != "SKILL.md" or _broken(entry):
            continue
        if _is_file(entry) and not _ignored(rules, entry.path, root, False):
            found.append(entry.path)
            return
    at_root = directory == root
    for entry in entries:
        if entry.name.startswith(".") or entry.name == "node_modules":
            continue
        kind = _kind(entry)
        if kind is None or _broken(entry):
            continue
        is_dir, is_file = kind
        wanted_md = (mode == "pi" and at_root) or (mode == "agents" and not at_root)
        if (
            is_file
            and entry.name.endswith(".md")
            and wanted_md
            and not _ignored(rules, entry.path, root, False)
        ):
            found.append(entry.path)
            continue
        if not is_dir or _ignored(rules, entry.path, root, True):
            continue
        _collect(entry.path, mode, rules, root, found, ancestors, realpaths)


def _under(target: str, root: str) -> bool:
    root = os.path.normpath(root)
    return target == root or target.startswith(root.rstrip(os.sep) + os.sep)


class SkillCollector:
    """Adds skills in order: a symlink twin of a loaded file is dropped, a taken name is a collision."""

    def __init__(self, realpaths: RealPaths | None = None) -> None:
        self.realpaths = realpaths or RealPaths()
        self.by_name: dict[str, Skill] = {}
        self.real_paths: set[str] = set()
        self.diagnostics: list[Diagnostic] = []
        self.collisions: list[Diagnostic] = []

    def add(self, result: SkillsResult) -> None:
        self.diagnostics.extend(result.diagnostics)
        for skill in result.skills:
            real = self.realpaths.canonical(skill.file_path)
            if real in self.real_paths:
                continue
            existing = self.by_name.get(skill.name)
            if existing is not None:
                collision = Collision("skill", skill.name, existing.file_path, skill.file_path)
                self.collisions.append(
                    Diagnostic(
                        "collision", f'name "{skill.name}" collision', skill.file_path, "collision", collision
                    )
                )
            else:
                self.by_name[skill.name] = skill
                self.real_paths.add(real)

    def result(self) -> SkillsResult:
        return SkillsResult(list(self.by_name.values()), [*self.diagnostics, *self.collisions])


def load_skills(
    cwd: str,
    agent_dir: str,
    skill_paths: list[str] | None = None,
    include_defaults: bool = True,
    realpaths: RealPaths | None = None,
) -> SkillsResult:
    """Pi's ``loadSkills``: default folders (optional) then each explicit path in order."""
    resolved_cwd = os.path.abspath(expand_home(cwd))
    resolved_agent = os.path.abspath(expand_home(agent_dir))
    user_dir = os.path.join(resolved_agent, "skills")
    project_dir = os.path.join(resolved_cwd, ".pi", "skills")
    realpaths = realpaths or RealPaths()
    collector = SkillCollector(realpaths)
    if include_defaults:
        collector.add(scan_skill_dir(user_dir, "user", realpaths))
        collector.add(scan_skill_dir(project_dir, "project", realpaths))
    for raw in skill_paths or []:
        path = resolve_user_path(raw, resolved_cwd)
        try:
            mode = os.stat(path).st_mode
        except OSError:
            mode = None
        if mode is None:
            collector.diagnostics.append(
                Diagnostic("warning", "skill path does not exist", path, "path_not_found")
            )
            continue
        source: SkillSource = "path"
        if not include_defaults:
            if _under(path, user_dir):
                source = "user"
            elif _under(path, project_dir):
                source = "project"
        if stat.S_ISDIR(mode):
            collector.add(scan_skill_dir(path, source, realpaths))
        elif stat.S_ISREG(mode) and path.endswith(".md"):
            skill, diagnostics = load_skill_file(path, source)
            if skill:
                collector.add(SkillsResult([skill], diagnostics))
            else:
                collector.diagnostics.extend(diagnostics)
        else:
            collector.diagnostics.append(
                Diagnostic("warning", "skill path is not a markdown file", path, "not_markdown")
            )
    return collector.result()


def resolve_user_path(raw: str, base_dir: str) -> str:
    """Trim, expand ``~``, turn ``file://`` URLs into paths, and make absolute against ``base_dir``."""
    text = js_trim(raw)
    text = expand_home(text)
    if text.startswith("file://"):
        text = unquote(urlparse(text).path)
    return os.path.normpath(os.path.join(base_dir, text))


def with_source_info(skill: Skill, info: SourceInfo) -> Skill:
    return replace(skill, source_info=info)
