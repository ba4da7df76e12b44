"""Real paths resolved once per load: ``os.path.realpath`` re-checks every component of a deep path,
which dominates loading large skill trees. The cache lives only as long as one load."""

from __future__ import annotations

import os
import stat


class RealPaths:
    def __init__(self) -> None:
        self._cache: dict[str, str | None] = {}

    def canonical(self, path: str) -> str:
        """Like :func:`piwork.core.paths.canonical_path` for absolute paths: real path, or the input if missing."""
        absolute = os.path.abspath(path)
        return self._real(absolute) or absolute

    def _real(self, path: str) -> str | None:
        if path in self._cache:
            return self._cache[path]
        parent, name = os.path.split(path)
        if not name:
            result: str | None = path
        else:
            real_parent = self._real(parent)
            if real_parent is None:
                result = None
            else:
                candidate = os.path.join(real_parent, name)
                try:
                    info = os.lstat(candidate)
                except OSError:
                    info = None
                if info is None:
                    result = None
                elif stat.S_ISLNK(info.st_mode):
                    try:
                        result = os.path.realpath(candidate, strict=True)
                    except OSError:
                        result = None
                else:
                    result = candidate
        self._cache[path] = result
        return result
