"""Where piwork's (and Pi's) files live, and canonical paths for trust keys."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

AGENT_DIR_ENV = "PI_CODING_AGENT_DIR"
SESSION_DIR_ENV = "PI_CODING_AGENT_SESSION_DIR"

# piwork's own files in a project, relative to its folder (the context layers read them).
PROFILE_PATH = ".pi/piwork-profile.json"
INDEX_PATH = ".pi/context-index.json"
SNAPSHOT_PATH = ".pi/project-context.md"
MEMORY_PATH = ".pi/memory/memory_summary.md"
INTAKE_DIR = ".pi/intake"


def expand_home(path: str, env: Mapping[str, str] | None = None) -> str:
    """Expand a leading ``~`` (alone or followed by a separator) to HOME."""
    home = (env if env is not None else os.environ).get("HOME") or str(Path.home())
    if path == "~":
        return home
    if path.startswith("~/"):
        return os.path.join(home, path[2:])
    return path


def named_path(path: str, project: str | None = None, env: Mapping[str, str] | None = None) -> str:
    """How a file is named to people, the same everywhere: relative to the project folder when inside it,
    ``~/…`` inside the home folder, absolute otherwise (a relative ``path`` is taken from the project)."""
    expanded = expand_home(path, env)
    base = os.path.abspath(expand_home(project, env)) if project else None
    if not path or (base is None and not os.path.isabs(expanded)):
        return path  # nothing to name, or relative to nothing known
    full = os.path.abspath(
        os.path.join(base, path) if base and not os.path.isabs(path) else expand_home(path, env)
    )
    for root, prefix in (
        (base, ""),
        ((env if env is not None else os.environ).get("HOME") or str(Path.home()), "~/"),
    ):
        if not root:
            continue
        root = os.path.abspath(root)
        if full == root:
            return "." if not prefix else "~"
        if full.startswith(root.rstrip(os.sep) + os.sep):
            return prefix + os.path.relpath(full, root).replace(os.sep, "/")
    return full


def agent_dir(env: Mapping[str, str] | None = None) -> Path:
    """``$PI_CODING_AGENT_DIR`` (``~`` expanded) or ``~/.pi/agent``, shared with Pi."""
    environ = env if env is not None else os.environ
    override = environ.get(AGENT_DIR_ENV)
    if override:
        return Path(os.path.abspath(expand_home(override, environ)))
    home = environ.get("HOME") or str(Path.home())
    return Path(home) / ".pi" / "agent"


def canonical_path(path: str | os.PathLike[str], cwd: str | None = None) -> str:
    """Absolute, normalised, symlinks resolved where the path exists (trust keys use this)."""
    text = expand_home(os.fspath(path))
    absolute = os.path.normpath(os.path.join(cwd or os.getcwd(), text))
    try:
        return os.path.realpath(absolute, strict=True)
    except OSError:
        return absolute
