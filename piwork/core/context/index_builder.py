"""Building the context index from the repository itself: deterministic, no model call.

The files are those git knows (tracked, plus untracked ones not ignored) in a git work tree, else a
bounded walk that honours the root ``.gitignore``. Each folder holding files is one module entry citing
its files with their sha256; its summary comes from the folder's README, else a Python package or
module docstring, else the first lines of its first file. Binary and very large files are not cited.
The same tree always gives the same index (apart from ``builtAt``).
"""

from __future__ import annotations

import ast
import hashlib
import os
import re
import subprocess
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import pathspec

from piwork.core import safe_read
from piwork.core.context.index import SUMMARY_CHARS, CitedFile, ContextIndex, IndexEntry, now_utc, sanitize

MAX_FILES = 5_000  # files looked at, at most
MAX_FILE_BYTES = 1_000_000  # larger files are not cited (their hash would be re-read on every check)
_CITED = safe_read.FileKind("cited file", MAX_FILE_BYTES)
MAX_FILES_PER_ENTRY = 60
MAX_ENTRIES = 400
_SKIPPED_DIRS = frozenset(
    {".git", ".pi", "node_modules", "__pycache__", ".venv", "venv", ".tox", ".mypy_cache"}
)
_READMES = ("README.md", "README.rst", "README.txt", "README")
_LANGUAGES = {
    ".py": "python",
    ".md": "markdown",
    ".rst": "docs",
    ".js": "javascript",
    ".ts": "typescript",
    ".tsx": "typescript",
    ".go": "go",
    ".rs": "rust",
    ".java": "java",
    ".c": "c",
    ".h": "c",
    ".cpp": "c++",
    ".json": "json",
    ".toml": "config",
    ".yaml": "config",
    ".yml": "config",
    ".sh": "shell",
}
_HEADING = re.compile(r"^\s*(#|=+$|-+$|\[!\[|<)")


@dataclass(frozen=True)
class ProjectFiles:
    paths: tuple[str, ...]  # relative, "/"-separated, sorted
    source: str  # "git" | "walk"
    truncated: bool  # more files than MAX_FILES


def _git_files(root: str) -> list[str] | None:
    try:
        inside = subprocess.run(
            ["git", "rev-parse", "--is-inside-work-tree"],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=30,
        )
        if inside.returncode != 0 or inside.stdout.strip() != "true":
            return None
        listed = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=root,
            capture_output=True,
            timeout=60,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if listed.returncode != 0:
        return None
    names = listed.stdout.decode("utf-8", errors="surrogateescape").split("\0")
    return sorted({n for n in names if n and os.path.isfile(os.path.join(root, n))})


def _walk_files(root: str, limit: int) -> tuple[list[str], bool]:
    spec: pathspec.GitIgnoreSpec | None = None
    try:
        text = safe_read.read_text(os.path.join(root, ".gitignore"), safe_read.IGNORE_FILE, strip_bom=False)
        spec = pathspec.GitIgnoreSpec.from_lines(text.splitlines())
    except OSError:
        spec = None
    found: list[str] = []
    for folder, dirs, files in os.walk(root):
        rel_folder = os.path.relpath(folder, root).replace(os.sep, "/")
        prefix = "" if rel_folder == "." else rel_folder + "/"
        dirs[:] = sorted(
            d
            for d in dirs
            if d not in _SKIPPED_DIRS and not (spec is not None and spec.match_file(prefix + d + "/"))
        )
        for name in sorted(files):
            rel = prefix + name
            if spec is not None and spec.match_file(rel):
                continue
            found.append(rel)
            if len(found) > limit:
                return sorted(found[:limit]), True
    return sorted(found), False


def _inside(root: str, rel: str) -> bool:
    """Whether ``rel`` really lies in the project (a link out of it is never read or cited)."""
    real = os.path.realpath(os.path.join(root, rel))
    base = os.path.realpath(root)
    return real.startswith(base.rstrip(os.sep) + os.sep)


def project_files(root: str, limit: int = MAX_FILES) -> ProjectFiles:
    """The repository's files: git's list in a work tree, else a walk honouring ``.gitignore``."""
    listed = _git_files(root)
    if listed is not None:
        kept = [p for p in listed if not p.startswith(".pi/") and _inside(root, p)]
        return ProjectFiles(tuple(kept[:limit]), "git", len(kept) > limit)
    walked, truncated = _walk_files(root, limit)
    return ProjectFiles(tuple(p for p in walked if _inside(root, p)), "walk", truncated)


def _read_head(path: str, size: int = 8192) -> bytes | None:
    try:
        return safe_read.read_start(path, safe_read.PROJECT_FILE, size)[0]
    except OSError:
        return None


def _digest(path: str) -> str | None:
    try:
        data = safe_read.read_bytes(path, _CITED)
    except OSError:  # unreadable, not a regular file, or too large to cite
        return None
    if b"\0" in data[:8192]:
        return None  # binary
    return hashlib.sha256(data).hexdigest()


def _first_paragraph(text: str) -> str:
    lines: list[str] = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            if lines:
                break
            continue
        if not lines and _HEADING.match(line):
            continue  # titles, underlines, badges, html before the first paragraph
        lines.append(line)
    return " ".join(lines)


def _python_docstring(path: str) -> str:
    try:
        head = safe_read.read_start(path, safe_read.PROJECT_FILE, 200_000)[0]
        tree = ast.parse(head.decode("utf-8", errors="replace"))
    except (OSError, SyntaxError, ValueError):
        return ""
    doc = ast.get_docstring(tree)
    return _first_paragraph(doc) if doc else ""


def _first_lines(path: str) -> str:
    head = _read_head(path, 2048)
    if not head or b"\0" in head:
        return ""
    lines = [ln.strip(" #/*-;\t") for ln in head.decode("utf-8", errors="replace").splitlines()]
    return " ".join(ln for ln in lines if ln)[:SUMMARY_CHARS]


def module_summary(root: str, folder: str, names: Sequence[str]) -> str:
    """A short summary of a folder: README, docstring, or its first file's first lines."""
    base = os.path.join(root, folder) if folder else root
    for readme in _READMES:
        if readme in names:
            try:
                head = safe_read.read_start(os.path.join(base, readme), safe_read.PROJECT_FILE, 20_000)[0]
                text = _first_paragraph(head.decode("utf-8", errors="replace"))
            except OSError:
                text = ""
            if text:
                return sanitize(text)
    python = [n for n in names if n.endswith(".py")]
    for name in sorted(python, key=lambda n: (n not in ("__init__.py", "__main__.py"), n)):
        doc = _python_docstring(os.path.join(base, name))
        if doc:
            return sanitize(doc)
    for name in names:
        text = _first_lines(os.path.join(base, name))
        if text:
            return sanitize(text)
    return ""


def _tags(names: Iterable[str]) -> tuple[str, ...]:
    found = {_LANGUAGES.get(os.path.splitext(n)[1].lower()) for n in names}
    return tuple(sorted(t for t in found if t))


def build_index(root: str, files: ProjectFiles | None = None) -> ContextIndex:
    """One entry per folder holding files (the project root is ``.``), in path order."""
    root = os.path.abspath(root)
    files = files or project_files(root)
    folders: dict[str, list[str]] = {}
    for rel in files.paths:
        folder, _, name = rel.rpartition("/")
        folders.setdefault(folder, []).append(name)
    entries: list[IndexEntry] = []
    for folder in sorted(folders)[:MAX_ENTRIES]:
        names = sorted(folders[folder])
        cited: list[CitedFile] = []
        for name in names:
            rel = f"{folder}/{name}" if folder else name
            digest = _digest(os.path.join(root, rel))
            if digest is not None:
                cited.append(CitedFile(rel, digest))
            if len(cited) >= MAX_FILES_PER_ENTRY:
                break
        if not cited:
            continue
        summary = module_summary(root, folder, names)
        count = f"{len(names)} file{'s' if len(names) != 1 else ''}"
        title = folder or f"{os.path.basename(root)} (project root)"
        entries.append(
            IndexEntry(
                folder or ".",
                title,
                f"{summary} ({count})" if summary else count,
                tuple(cited),
                _tags(names),
            )
        )
    return ContextIndex(now_utc(), tuple(entries))
