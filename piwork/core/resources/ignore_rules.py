"""`.gitignore`/`.ignore`/`.fdignore` rules accumulated while scanning a resource tree.

Patterns from a nested directory's ignore file are prefixed with that directory's path relative to
the scan root (so ``*.md`` in ``sub/.gitignore`` becomes ``sub/*.md``), exactly as Pi does.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from piwork.core import safe_read

if TYPE_CHECKING:
    import pathspec

IGNORE_FILE_NAMES = (".gitignore", ".ignore", ".fdignore")


def _prefixed(line: str, prefix: str) -> str | None:
    trimmed = line.strip()
    if not trimmed or (trimmed.startswith("#") and not trimmed.startswith("\\#")):
        return None
    pattern = line
    negated = False
    if pattern.startswith("!"):
        negated = True
        pattern = pattern[1:]
    elif pattern.startswith("\\!"):
        pattern = pattern[1:]
    if pattern.startswith("/"):
        pattern = pattern[1:]
    full = f"{prefix}{pattern}"
    return f"!{full}" if negated else full


class IgnoreRules:
    def __init__(self) -> None:
        self._lines: list[str] = []
        self._spec: pathspec.GitIgnoreSpec | None = None

    @property
    def active(self) -> bool:
        return bool(self._lines)

    def add_from_dir(self, directory: str, root: str, names: set[str] | None = None) -> None:
        """Read the ignore files of ``directory`` (``names``: its listing, when already known)."""
        present = [n for n in IGNORE_FILE_NAMES if names is None or n in names]
        if not present:
            return
        rel = os.path.relpath(directory, root)
        prefix = "" if rel == "." else rel.replace(os.sep, "/") + "/"
        for name in present:
            path = os.path.join(directory, name)
            if not os.path.isfile(path):
                continue
            try:
                content = safe_read.read_text(path, safe_read.IGNORE_FILE, strip_bom=False)
            except OSError:
                continue
            lines = [
                p
                for p in (
                    _prefixed(line, prefix)
                    for line in content.replace("\r\n", "\n").replace("\r", "\n").split("\n")
                )
                if p
            ]
            if lines:
                self._lines.extend(lines)
                self._spec = None

    def ignores(self, rel_path: str) -> bool:
        if not self._lines:
            return False
        if self._spec is None:
            import pathspec  # costs tens of milliseconds: only once a tree has ignore rules to apply

            self._spec = pathspec.GitIgnoreSpec.from_lines(self._lines)
        return self._spec.match_file(rel_path)


def rel_posix(path: str, root: str) -> str:
    return os.path.relpath(path, root).replace(os.sep, "/")
