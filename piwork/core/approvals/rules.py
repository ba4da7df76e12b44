"""A project's approval mode and its "always allow" rules, and whether a call matches one.

A command rule is a prefix of words: ``pytest`` allows ``pytest`` and ``pytest -q tests``, not
``pytest-watch``. A command that chains or redirects (``;``, ``&``, ``|``, backquotes, ``$(``, ``>``,
``<``, a new line) never matches a rule: ``git status; rm -rf ~`` is asked about. A path rule is a file
or folder, relative to the project or absolute; it allows edits and writes of that file or anything
under that folder (compared as real paths, so a symlink cannot lead out of it).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field, replace
from typing import Any, Literal

ApprovalMode = Literal["run", "ask", "read-only"]
MODES: tuple[ApprovalMode, ...] = ("run", "ask", "read-only")
MODE_LABELS: dict[ApprovalMode, str] = {
    "run": "Run everything",
    "ask": "Ask before commands and file changes",
    "read-only": "Read only",
}
MODE_SHORT: dict[ApprovalMode, str] = {"run": "Run all", "ask": "Ask first", "read-only": "Read only"}

_CHAINING = re.compile(r"[;&|`<>\n]|\$\(")


@dataclass(frozen=True)
class ProjectRules:
    mode: ApprovalMode = "run"
    commands: tuple[str, ...] = ()
    paths: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"mode": self.mode, "commands": list(self.commands), "paths": list(self.paths)}

    @staticmethod
    def from_json(value: Any) -> ProjectRules:
        """Raises ValueError when ``value`` is not a project's rules."""
        if not isinstance(value, dict):
            raise ValueError("a project's rules must be an object")
        mode = value.get("mode", "run")
        if mode not in MODES:
            raise ValueError(f"unknown mode {mode!r}")
        commands, paths = value.get("commands", []), value.get("paths", [])
        for name, items in (("commands", commands), ("paths", paths)):
            if not isinstance(items, list) or not all(isinstance(i, str) and i.strip() for i in items):
                raise ValueError(f"{name} must be a list of non-empty texts")
        return ProjectRules(mode, tuple(commands), tuple(paths))

    def with_command(self, prefix: str) -> ProjectRules:
        prefix = " ".join(prefix.split())
        return (
            self
            if not prefix or prefix in self.commands
            else replace(self, commands=(*self.commands, prefix))
        )

    def with_path(self, path: str) -> ProjectRules:
        path = path.strip()
        return self if not path or path in self.paths else replace(self, paths=(*self.paths, path))


@dataclass(frozen=True)
class RulesFile:
    """Every project's rules, keyed by the project's canonical real path."""

    projects: dict[str, ProjectRules] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"version": 1, "projects": {k: v.to_json() for k, v in sorted(self.projects.items())}}

    @staticmethod
    def from_json(value: Any) -> RulesFile:
        if not isinstance(value, dict) or not isinstance(value.get("projects", {}), dict):
            raise ValueError("the file must hold an object with a 'projects' object")
        projects = value.get("projects", {})
        return RulesFile({str(k): ProjectRules.from_json(v) for k, v in projects.items()})


def command_matches(command: str, prefix: str) -> bool:
    """Whether ``prefix`` (whole words) starts ``command``, which must be one plain command."""
    if _CHAINING.search(command):
        return False
    words, wanted = command.split(), prefix.split()
    return bool(wanted) and words[: len(wanted)] == wanted


# tools whose second word is a subcommand: the rule offered for them names it (``git status``, not ``git``)
SUBCOMMAND_TOOLS = frozenset(
    [
        "git",
        "npm",
        "pnpm",
        "yarn",
        "bun",
        "deno",
        "cargo",
        "go",
        "docker",
        "podman",
        "kubectl",
        "pip",
        "uv",
        "poetry",
        "gh",
        "dotnet",
        "mvn",
        "gradle",
    ]
)


def suggested_prefix(command: str) -> str:
    """The rule offered for a command: its first word, with the subcommand of a tool that has them
    (``git status``, ``npm test``), so one click does not allow the whole tool."""
    words = command.split()
    if not words:
        return ""
    if len(words) > 1 and words[0] in SUBCOMMAND_TOOLS and re.fullmatch(r"[a-z][a-z0-9-]*", words[1]):
        return " ".join(words[:2])
    return words[0]


def path_matches(absolute: str, rule: str, project: str) -> bool:
    """Whether the file ``absolute`` is ``rule`` or lies under it (``rule`` relative to ``project``)."""
    root = os.path.realpath(os.path.join(project, os.path.expanduser(rule)))
    target = os.path.realpath(absolute)
    return target == root or target.startswith(root.rstrip(os.sep) + os.sep)
