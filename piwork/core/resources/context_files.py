"""Context files (AGENTS.md and friends): one per directory, global first, then root → cwd.

They load whether or not the project is trusted. In a linked git worktree nested inside its main
checkout, the main checkout's file with the same name as the worktree's own is skipped.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Literal

from piwork.core.paths import canonical_path, expand_home
from piwork.core.resources.diagnostics import Diagnostic
from piwork.core.resources.textfiles import read_text
from piwork.core.safe_read import CONTEXT_FILE, GIT_POINTER

CONTEXT_FILE_NAMES = ("AGENTS.override.md", "AGENTS.md", "AGENTS.MD", "CLAUDE.md", "CLAUDE.MD")

ContextScope = Literal["global", "ancestor", "project"]
CandidateState = Literal["active", "not-selected", "shadowed"]


@dataclass(frozen=True)
class ContextFile:
    path: str
    content: str

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "content": self.content}


@dataclass(frozen=True)
class ContextCandidate:
    """A context-file candidate found on disk, for the resource panel (winners and losers)."""

    path: str
    scope: ContextScope
    state: CandidateState


@dataclass
class ContextFilesResult:
    files: list[ContextFile] = field(default_factory=list)
    candidates: list[ContextCandidate] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)


def _resolve(path: str) -> str:
    return os.path.abspath(expand_home(path))


def _load_from_dir(directory: str, diagnostics: list[Diagnostic] | None) -> ContextFile | None:
    for name in CONTEXT_FILE_NAMES:
        path = os.path.join(directory, name)
        if not os.path.exists(path) or not os.path.isfile(path):
            continue
        try:
            return ContextFile(path, read_text(path, CONTEXT_FILE))
        except OSError as exc:
            if diagnostics is not None:
                diagnostics.append(
                    Diagnostic(
                        "warning", f"Could not read context file: {exc.strerror or exc}", path, "read_error"
                    )
                )
    return None


def _present_names(directory: str) -> list[str]:
    return [name for name in CONTEXT_FILE_NAMES if os.path.isfile(os.path.join(directory, name))]


def _git_paths(cwd: str) -> tuple[str, str] | None:
    """(worktree root, common git dir) of the repository holding ``cwd``, as Pi finds them."""
    directory = cwd
    while True:
        git = os.path.join(directory, ".git")
        if os.path.exists(git):
            try:
                if os.path.isfile(git):
                    content = read_text(git, GIT_POINTER).strip()
                    if content.startswith("gitdir: "):
                        git_dir = os.path.normpath(os.path.join(directory, content[8:].strip()))
                        if not os.path.exists(os.path.join(git_dir, "HEAD")):
                            return None
                        commondir = os.path.join(git_dir, "commondir")
                        if os.path.exists(commondir):
                            common = os.path.normpath(
                                os.path.join(git_dir, read_text(commondir, GIT_POINTER).strip())
                            )
                        else:
                            common = git_dir
                        return directory, common
                elif os.path.isdir(git):
                    if not os.path.exists(os.path.join(git, "HEAD")):
                        return None
                    return directory, git
            except OSError:
                return None
        parent = os.path.dirname(directory)
        if parent == directory:
            return None
        directory = parent


def _shadowed_main_file(cwd: str) -> str | None:
    """The main checkout's context file that a nested linked worktree's own file duplicates."""
    found = _git_paths(cwd)
    if found is None:
        return None
    worktree_root = canonical_path(found[0])
    common_git_dir = canonical_path(found[1])
    main_root = os.path.dirname(common_git_dir)
    if not worktree_root.startswith(main_root.rstrip(os.sep) + os.sep):
        return None
    if canonical_path(os.path.join(main_root, ".git")) != common_git_dir:
        return None
    own = _load_from_dir(worktree_root, None)
    return os.path.join(main_root, os.path.basename(own.path)) if own else None


def load_context_files(cwd: str, agent_dir: str, enabled: bool = True) -> ContextFilesResult:
    """The context files in prompt order, plus every candidate seen (for display)."""
    result = ContextFilesResult()
    if not enabled:
        return result
    resolved_cwd = _resolve(cwd)
    resolved_agent = _resolve(agent_dir)
    seen: set[str] = set()
    global_file = _load_from_dir(resolved_agent, result.diagnostics)
    if global_file:
        result.files.append(global_file)
        seen.add(canonical_path(global_file.path))
        result.candidates.extend(_candidates(resolved_agent, global_file.path, "global", None))
    shadowed = _shadowed_main_file(resolved_cwd)
    ancestors: list[tuple[str, ContextFile | None, str | None]] = []
    directory = resolved_cwd
    while True:
        chosen = _load_from_dir(directory, result.diagnostics)
        excluded: str | None = None
        if chosen is not None:
            canonical = canonical_path(chosen.path)
            # the folder's real path with the file's name: a worktree file that is a symlink to the
            # main checkout's own is the worktree's copy, not the shadowed one
            in_real_folder = os.path.join(canonical_path(directory), os.path.basename(chosen.path))
            if shadowed is not None and in_real_folder == shadowed:
                excluded = chosen.path
                chosen = None
            elif canonical in seen:
                chosen = None
            else:
                seen.add(canonical)
        ancestors.insert(0, (directory, chosen, excluded))
        parent = os.path.dirname(directory)
        if parent == directory:
            break
        directory = parent
    for directory, chosen, excluded in ancestors:
        scope: ContextScope = "project" if directory == resolved_cwd else "ancestor"
        if chosen is not None:
            result.files.append(chosen)
        result.candidates.extend(_candidates(directory, chosen.path if chosen else None, scope, excluded))
    return result


def _candidates(
    directory: str, chosen: str | None, scope: ContextScope, shadowed: str | None
) -> list[ContextCandidate]:
    rows = []
    for name in _present_names(directory):
        path = os.path.join(directory, name)
        state: CandidateState = (
            "active" if path == chosen else "shadowed" if path == shadowed else "not-selected"
        )
        rows.append(ContextCandidate(path, scope, state))
    return rows
