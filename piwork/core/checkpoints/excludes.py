"""What the shadow repository leaves out besides the project's own ``.gitignore`` files.

The shadow repository has its own GIT_DIR and no user configuration, so git alone would not see the
project repository's ``.git/info/exclude``, the ``.gitignore`` files of the folders above the project
when it is a folder inside a repository, nor a global excludes file the user's configuration names
(``core.excludesFile``; git's default ``~/.config/git/ignore`` it reads by itself). Their patterns are
copied into the shadow's ``info/exclude`` (rewritten relative to the project where they were written
relative to a folder above it); the global file is passed as ``core.excludesFile``. The agent folder is
left out too when it lies inside the project (a project that is the home folder): the shadow repository,
the sessions and the keys are never part of a checkpoint. Only reads: nothing is written into a
project's ``.git``.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Mapping
from fnmatch import fnmatchcase
from pathlib import Path

_SPECIAL = re.compile(r"([*?\[\]\\])")
_HEADER = "# written by piwork: the project repository's excludes and the folders above the project\n"


def find_repository(project: Path) -> tuple[Path, Path] | None:
    """(the top folder of the git repository holding ``project``, its common git folder), or None."""
    for folder in (project, *project.parents):
        dot_git = folder / ".git"
        if dot_git.is_dir():
            return folder, dot_git
        if dot_git.is_file():  # a worktree or submodule: "gitdir: <path>"
            try:
                text = dot_git.read_text(encoding="utf-8", errors="replace").strip()
            except OSError:
                return None
            if not text.startswith("gitdir:"):
                return None
            git_dir = (folder / text[len("gitdir:") :].strip()).resolve()
            try:
                common = (git_dir / "commondir").read_text(encoding="utf-8").strip()
                git_dir = (git_dir / common).resolve()
            except OSError:
                pass  # no commondir: the git folder is its own
            return folder, git_dir
    return None


def rebase_pattern(pattern: str, base: str, project: str) -> str | None:
    """A gitignore pattern written in folder ``base`` (relative to the repository's top, "" for the top)
    as a pattern of folder ``project`` (relative to the top, at or below ``base``); None where it cannot
    match inside the project (or names the project or a folder above it)."""
    line = pattern.rstrip("\n")
    if not line.strip() or line.startswith("#"):
        return None
    negated = line.startswith("!")
    body = line[1:] if negated else line
    directory = body.endswith("/")
    core = body.rstrip("/")
    if not core:
        return None
    if "/" not in core:  # matches at any depth below its folder, so anywhere in the project
        return line
    parts = [p for p in f"{base}/{core.lstrip('/')}".split("/") if p]
    here = [p for p in project.split("/") if p]
    for index, folder in enumerate(here):
        if index >= len(parts):
            return None  # it names a folder above the project, or the project itself
        part = parts[index]
        if part == "**":  # any depth from here: anywhere in the project
            return ("!" if negated else "") + "/".join(parts[index:]) + ("/" if directory else "")
        if not fnmatchcase(folder, part):
            return None
    if len(parts) <= len(here):
        return None
    return ("!" if negated else "") + "/" + "/".join(parts[len(here) :]) + ("/" if directory else "")


def _patterns(path: Path, base: str, project: str) -> list[str]:
    try:
        text = path.read_text(encoding="utf-8", errors="surrogateescape")
    except OSError:
        return []
    found = (rebase_pattern(line, base, project) for line in text.splitlines())
    return [p for p in found if p is not None]


def escaped(relative: str) -> str:
    """A path as a gitignore pattern matching only itself, from the project's top."""
    text = _SPECIAL.sub(r"\\\1", relative)
    return "/" + text


def shadow_exclude(project: Path, agent_dir: Path) -> str:
    """The text of the shadow repository's ``info/exclude`` for ``project`` now."""
    lines: list[str] = []
    try:
        inside = agent_dir.resolve().relative_to(project)
        if inside.parts:
            lines.append(escaped(inside.as_posix()) + "/")
    except ValueError:
        pass  # the agent folder is not in the project
    found = find_repository(project)
    if found is not None:
        top, git_dir = found
        relative = project.relative_to(top).as_posix() if project != top else ""
        lines += _patterns(git_dir / "info" / "exclude", "", relative)
        parts = relative.split("/") if relative else []
        for depth in range(len(parts)):  # the .gitignore files from the top down to the project's parent
            folder = "/".join(parts[:depth])
            lines += _patterns(top / folder / ".gitignore", folder, relative)
    return _HEADER + "".join(line + "\n" for line in lines)


def user_excludes_file(environ: Mapping[str, str] | None = None) -> str | None:
    """The global excludes file the user's git configuration names (``core.excludesFile``), if any."""
    source = os.environ if environ is None else environ
    keep = {"GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG_NOSYSTEM"}
    env = {k: v for k, v in source.items() if not k.startswith("GIT_") or k in keep}
    try:
        done = subprocess.run(
            ["git", "config", "--global", "--get", "--path", "core.excludesFile"],
            env=env,
            cwd="/",
            capture_output=True,
            check=False,
            timeout=10,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    value = done.stdout.decode(errors="surrogateescape").strip()
    return value if done.returncode == 0 and value else None
