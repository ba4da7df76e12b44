"""Walking a directory tree the way ripgrep and fd do: ignore files honoured, results in sorted order.

Rules: ``.gitignore`` files apply inside a git repository (or always, when ``require_git`` is false),
``.ignore`` and the tool's own ignore file (``.rgignore``, ``.fdignore``) always apply; a deeper
ignore file overrides a shallower one; ignore files of parent folders up to the repository root count.
Hidden files are included. ``.git`` folders are never entered; other folder names can be skipped too.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pathspec

from piwork.core.fs.git import git_root


@dataclass(frozen=True, slots=True)
class WalkEntry:
    path: str  # absolute
    rel: str  # relative to the walk root, "/"-separated
    is_dir: bool


@dataclass(frozen=True, slots=True)
class _Rules:
    base: str  # absolute folder the rules are relative to
    spec: pathspec.GitIgnoreSpec


class IgnoreMatcher:
    """Decides whether a path is ignored, given the ignore files met on the way down."""

    def __init__(self, root: str, tool_ignore_file: str, require_git: bool = True) -> None:
        self._repo = git_root(root)
        self._names = [".ignore", tool_ignore_file]
        if self._repo is not None or not require_git:
            self._names.insert(0, ".gitignore")
        self._cache: dict[str, _Rules | None] = {}
        self._ancestors: list[_Rules] = []
        if self._repo is not None:
            chain: list[str] = []
            current = os.path.dirname(os.path.abspath(root))
            while current.startswith(self._repo) and len(current) >= len(self._repo):
                chain.append(current)
                if current == self._repo:
                    break
                current = os.path.dirname(current)
            self._ancestors = [r for d in reversed(chain) if (r := self.rules_for(d)) is not None]

    def rules_for(self, folder: str) -> _Rules | None:
        if folder in self._cache:
            return self._cache[folder]
        lines: list[str] = []
        for name in self._names:
            try:
                with open(os.path.join(folder, name), encoding="utf-8", errors="replace") as handle:
                    lines.extend(handle.read().splitlines())
            except OSError:
                continue
        import pathspec  # tens of milliseconds to import: only once a folder has ignore rules

        rules = _Rules(folder, pathspec.GitIgnoreSpec.from_lines(lines)) if lines else None
        self._cache[folder] = rules
        return rules

    def ignored(self, path: str, is_dir: bool, chain: list[_Rules]) -> bool:
        """Whether ``path`` is ignored by ``chain`` (ancestor rules first, deepest last)."""
        for rules in reversed([*self._ancestors, *chain]):
            rel = os.path.relpath(path, rules.base).replace(os.sep, "/")
            if rel.startswith(".."):
                continue
            result = rules.spec.check_file(rel + "/" if is_dir else rel)
            if result.include is not None:
                return bool(result.include)
        return False


def walk(
    root: str,
    matcher: IgnoreMatcher,
    skip_dirs: frozenset[str] = frozenset({".git"}),
) -> Iterator[WalkEntry]:
    """Entries under ``root`` (not ``root`` itself), depth first, names sorted within each folder."""
    root = os.path.abspath(root)
    root_rules = matcher.rules_for(root)

    def visit(folder: str, chain: list[_Rules]) -> Iterator[WalkEntry]:
        try:
            with os.scandir(folder) as scan:
                entries = sorted(scan, key=lambda e: e.name)
        except OSError:
            return
        for entry in entries:
            try:
                is_dir = entry.is_dir()
            except OSError:
                continue
            if is_dir and entry.name in skip_dirs:
                continue
            if matcher.ignored(entry.path, is_dir, chain):
                continue
            rel = os.path.relpath(entry.path, root).replace(os.sep, "/")
            yield WalkEntry(entry.path, rel, is_dir)
            if is_dir and not entry.is_symlink():
                sub_rules = matcher.rules_for(entry.path)
                yield from visit(entry.path, [*chain, sub_rules] if sub_rules else chain)

    yield from visit(root, [root_rules] if root_rules else [])
