"""Building the context index from the repository itself: deterministic, no model call.

The files are those git knows (tracked, plus untracked ones not ignored) in a git work tree, else a
bounded walk that honours the root ``.gitignore``. Each file is one entry: its sha256, size and
modification time, language, a one-line summary (a docstring, a leading comment, a first paragraph) and
its top-level symbols (Python, JavaScript/TypeScript, Go, Rust), with the folder it belongs to. Binary
and very large files are not cited. Per-folder summaries (:func:`module_summaries`) are derived from the
entries when a layer needs fewer tokens than the files would take. The same tree always gives the same
index (apart from ``builtAt`` and modification times). Refreshing re-reads only the files whose size or
modification time changed, and adds the new ones.
"""

from __future__ import annotations

import ast
import hashlib
import os
import re
import stat
import subprocess
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from piwork.core import safe_read
from piwork.core.context.index import (
    MAX_SYMBOLS,
    SUMMARY_CHARS,
    CitedFile,
    ContextIndex,
    IndexEntry,
    now_utc,
    sanitize,
)

MAX_FILES = 25_000  # files looked at, at most
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
    return sorted({n for n in names if n})


def _walk_files(root: str, limit: int) -> tuple[list[str], bool]:
    import pathspec  # tens of milliseconds to import: only when an index is built

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


def _inside(root: str, rels: Iterable[str], *, files_only: bool) -> list[str]:
    """The paths of ``rels`` that really lie in the project (a link out of it is never read or cited);
    ``files_only``: only those that are files (or links to one). Each folder's real path is resolved
    once: a name that is not a link lies where its folder really is, so only links are resolved one by
    one (one ``lstat`` per file instead of a ``realpath`` walking every part of its path)."""
    base = os.path.realpath(root).rstrip(os.sep) + os.sep
    folders: dict[str, bool] = {}
    kept: list[str] = []
    for rel in rels:
        full = os.path.join(root, rel)
        folder = os.path.dirname(full)
        inside = folders.get(folder)
        if inside is None:
            inside = folders[folder] = (os.path.realpath(folder).rstrip(os.sep) + os.sep).startswith(base)
        if not inside:
            continue
        try:
            mode = os.lstat(full).st_mode
        except OSError:
            if not files_only:  # gone since the listing: described (and dropped) later, as before
                kept.append(rel)
            continue
        if stat.S_ISLNK(mode):
            if not os.path.realpath(full).startswith(base) or (files_only and not os.path.isfile(full)):
                continue
        elif files_only and not stat.S_ISREG(mode):
            continue
        kept.append(rel)
    return kept


def project_files(root: str, limit: int = MAX_FILES) -> ProjectFiles:
    """The repository's files: git's list in a work tree, else a walk honouring ``.gitignore``."""
    listed = _git_files(root)
    if listed is not None:
        kept = _inside(root, (p for p in listed if not p.startswith(".pi/")), files_only=True)
        return ProjectFiles(tuple(kept[:limit]), "git", len(kept) > limit)
    walked, truncated = _walk_files(root, limit)
    return ProjectFiles(tuple(_inside(root, walked, files_only=False)), "walk", truncated)


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


def language_of(path: str) -> str:
    return _LANGUAGES.get(os.path.splitext(path)[1].lower(), "")


_SYMBOLS: dict[str, re.Pattern[str]] = {
    "python": re.compile(r"^(?:async[ \t]+)?(?:def|class)[ \t]+([A-Za-z_]\w*)", re.MULTILINE),
    "javascript": re.compile(
        r"^(?:export[ \t]+)?(?:default[ \t]+)?(?:declare[ \t]+)?(?:"
        r"(?:async[ \t]+)?function\*?[ \t]*([A-Za-z_$][\w$]*)"
        r"|(?:abstract[ \t]+)?class[ \t]+([A-Za-z_$][\w$]*)"
        r"|(?:const|let|var)[ \t]+([A-Za-z_$][\w$]*)[ \t]*[=:]"
        r"|(?:interface|type|enum|namespace)[ \t]+([A-Za-z_$][\w$]*))",
        re.MULTILINE,
    ),
    "go": re.compile(
        r"^(?:func[ \t]+(?:\([^)]*\)[ \t]*)?([A-Za-z_]\w*)|type[ \t]+([A-Za-z_]\w*)|(?:var|const)[ \t]+([A-Za-z_]\w*))",
        re.MULTILINE,
    ),
    "rust": re.compile(
        r"^(?:pub(?:\([^)]*\))?[ \t]+)?(?:(?:async|unsafe|const|extern(?:[ \t]+\"[^\"]*\")?)[ \t]+)*"
        r"(?:fn|struct|enum|trait|type|mod|static|union|macro_rules!)[ \t]+([A-Za-z_]\w*)"
        r"|^impl(?:<[^>\n]*>)?[ \t]+(?:[\w:<>, ]+[ \t]+for[ \t]+)?([A-Za-z_]\w*)",
        re.MULTILINE,
    ),
}
_SYMBOLS["typescript"] = _SYMBOLS["javascript"]
_JS_EXTENSIONS = {".mjs": "javascript", ".cjs": "javascript", ".jsx": "javascript", ".mts": "typescript"}
_LANGUAGES.update(_JS_EXTENSIONS)
_DOCSTRING = re.compile(r'\A(?:[ \t]*(?:#[^\n]*)?\n)*[ \t]*[rRuUbB]*("""|\'\'\')(.*?)\1', re.DOTALL)
_LEADING_COMMENT = re.compile(r"\A\s*(?:(?://[!/]?[^\n]*\n\s*)+|/\*+(.*?)\*/)", re.DOTALL)
FILE_SUMMARY_CHARS = 160
SCAN_CHARS = 200_000  # of a file's text looked at for its symbols and summary


def top_level_symbols(language: str, text: str) -> tuple[str, ...]:
    """Names defined at the top level of a source file (no indentation), in order, without repeats."""
    pattern = _SYMBOLS.get(language)
    if pattern is None:
        return ()
    seen: dict[str, None] = {}
    # findall runs the scan in C; a pattern's alternatives each have one group and only the one that
    # matched is non-empty, so joining a match's groups gives its name
    for found in pattern.findall(text):
        name = found if isinstance(found, str) else "".join(found)
        if name and name not in seen:
            seen[name] = None
            if len(seen) >= MAX_SYMBOLS:
                break
    return tuple(seen)


def file_summary(language: str, text: str) -> str:
    """One line about a file: a Python module docstring, a leading comment, a Markdown paragraph."""
    found = ""
    if language == "python":
        match = _DOCSTRING.match(text)
        found = _first_paragraph(match.group(2)) if match else ""
        if not found:  # a leading comment block instead (not a #! line or a coding declaration)
            comments = []
            for line in text.splitlines():
                if not line.startswith("#"):
                    break
                if not line.startswith("#!") and "coding" not in line[:30]:
                    comments.append(line.lstrip("#").strip())
            found = _first_paragraph("\n".join(comments))
    elif language in ("javascript", "typescript", "go", "rust", "c", "c++", "java"):
        match = _LEADING_COMMENT.match(text)
        if match:
            block = match.group(1) if match.group(1) is not None else match.group(0)
            lines = [ln.strip().lstrip("/*!").strip() for ln in block.splitlines()]
            found = _first_paragraph("\n".join(lines))
    elif language in ("markdown", "docs"):
        found = _first_paragraph(text)
    return sanitize(found, FILE_SUMMARY_CHARS) if found else ""


def describe_file(root: str, rel: str) -> CitedFile | None:
    """The index record of one file (None: binary, unreadable, too large, or not a regular file)."""
    full = os.path.join(root, rel)
    try:
        read = safe_read.read_file(full, _CITED)  # its size and mtime are those of the bytes read
    except OSError:
        return None
    data = read.data
    if b"\0" in data[:8192]:
        return None  # binary
    language = language_of(rel)
    text = data[:SCAN_CHARS].decode("utf-8", errors="replace") if language else ""
    return CitedFile(
        rel,
        hashlib.sha256(data).hexdigest(),
        len(data),
        language,
        file_summary(language, text),
        top_level_symbols(language, text),
        read.mtime_ns,
    )


def file_entry(cited: CitedFile) -> IndexEntry:
    folder = cited.path.rpartition("/")[0] or "."
    return IndexEntry(
        cited.path,
        cited.path,
        cited.summary,
        (cited,),
        (cited.language,) if cited.language else (),
        extra={"module": folder},
    )


def build_index(root: str, files: ProjectFiles | None = None) -> ContextIndex:
    """One entry per readable text file, in path order."""
    root = os.path.abspath(root)
    files = files or project_files(root)
    entries = [file_entry(c) for rel in files.paths if (c := describe_file(root, rel)) is not None]
    return ContextIndex(now_utc(), tuple(entries))


@dataclass(frozen=True)
class IndexUpdate:
    index: ContextIndex
    reused: int
    updated: int
    added: int
    dropped: int

    def to_json(self) -> dict[str, int]:
        return {
            "reused": self.reused,
            "updated": self.updated,
            "added": self.added,
            "dropped": self.dropped,
            "entries": len(self.index.entries),
        }


def update_index(root: str, index: ContextIndex, files: ProjectFiles | None = None) -> IndexUpdate:
    """The index brought up to date with the tree: a file whose size and modification time are those
    recorded is kept without being read; a changed one is described again; new files are added, gone
    ones dropped. Entries of the older per-folder form are replaced by per-file ones."""
    root = os.path.abspath(root)
    files = files or project_files(root)
    known: dict[str, IndexEntry] = {}
    for entry in index.entries:
        if len(entry.files) == 1 and entry.id == entry.files[0].path:
            known[entry.id] = entry
    listed = set(files.paths)
    entries: list[IndexEntry] = []
    reused = updated = added = 0
    prefix = root.rstrip(os.sep) + os.sep
    stat_of = os.stat
    for rel in files.paths:
        kept = known.get(rel)
        cited = kept.files[0] if kept is not None else None
        if kept is not None and cited is not None and cited.mtime_ns is not None:
            try:
                now = stat_of(prefix + rel)
            except OSError:
                continue
            if now.st_size == cited.size and now.st_mtime_ns == cited.mtime_ns:
                entries.append(kept)  # the very entry: nothing read, nothing rebuilt
                reused += 1
                continue
        described = describe_file(root, rel)
        if described is None:
            continue
        if cited is not None and cited.sha256 == described.sha256:
            reused += 1  # touched, not changed
        elif cited is not None:
            updated += 1
        else:
            added += 1
        entries.append(file_entry(described))
    dropped = sum(1 for path in known if path not in listed) + sum(
        1 for e in index.entries if not (len(e.files) == 1 and e.id == e.files[0].path)
    )
    return IndexUpdate(ContextIndex(now_utc(), tuple(entries)), reused, updated, added, dropped)


@dataclass(frozen=True)
class FolderSummary:
    folder: str  # "." for the project root
    summary: str  # its README's first paragraph, else its package's or first file's summary
    names: tuple[str, ...]  # file names, in path order


def _module_of(entry: IndexEntry) -> str:
    module = entry.extra.get("module")
    return module if isinstance(module, str) else (entry.id.rpartition("/")[0] or ".")


def folder_summaries(entries: Sequence[IndexEntry]) -> list[FolderSummary]:
    """Each folder of the index with a summary taken from its files' entries, in path order."""
    folders: dict[str, list[CitedFile]] = {}
    for entry in entries:
        folders.setdefault(_module_of(entry), []).extend(entry.files)
    out = []
    for folder in sorted(folders):
        files = folders[folder]
        by_name = {f.path.rpartition("/")[2]: f for f in files}
        preferred = [*_READMES, "__init__.py", "__main__.py"]
        ordered = [by_name[n] for n in preferred if n in by_name]
        ordered += [f for f in files if f.language == "python" and f not in ordered]
        ordered += [f for f in files if f not in ordered]
        summary = next((f.summary for f in ordered if f.summary), "")
        out.append(FolderSummary(folder, summary, tuple(by_name)))
    return out


def module_summaries(entries: Sequence[IndexEntry], limit_chars: int = 2_000) -> list[tuple[str, str]]:
    """(folder, summary) for each folder of ``entries``: its files counted by language and its
    best-described files' summaries and symbols, cut to ``limit_chars`` — what a layer over its budget
    sends in place of the files."""
    folders: dict[str, list[IndexEntry]] = {}
    for entry in entries:
        folders.setdefault(_module_of(entry), []).append(entry)
    out: list[tuple[str, str]] = []
    for folder in sorted(folders):
        items = folders[folder]
        languages = _tags(e.id for e in items)
        parts = [
            f"{len(items)} file{'s' if len(items) != 1 else ''}"
            + (f" ({', '.join(languages)})" if languages else "")
        ]
        for entry in items:
            cited = entry.files[0] if entry.files else None
            if cited is None or not (cited.summary or cited.symbols):
                continue
            symbols = ", ".join(cited.symbols[:6])
            name = cited.path.rpartition("/")[2]
            parts.append(f"{name}: {cited.summary}" + (f" [{symbols}]" if symbols else ""))
        text = "; ".join(parts)
        out.append((folder, text if len(text) <= limit_chars else text[: limit_chars - 1] + "…"))
    return out
