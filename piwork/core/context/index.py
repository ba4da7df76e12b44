"""The context index ``.pi/context-index.json``: an advisory map of the repository, never a source of truth.

Each entry (a module, a feature, an entry point) cites files with the sha256 of their content when
the entry was written. An entry is *fresh* when every cited file still has that hash, *changed* when a
hash differs, *missing* when a cited file is gone. The index as a whole counts as fresh when at least
80% of its entries are fresh. Task packs (layer 3) use fresh entries only.

    {"version": 1, "builtAt": "2026-12-01T10:00:00Z",
     "entries": [{"id": "core/session", "title": "Session files", "summary": "...",
                  "tags": ["sessions"], "files": [{"path": "piwork/core/session/store.py", "sha256": "..."}]}]}

Only piwork's own commands write it (``/onboard run``, ``/context rebuild``); the edit/write tools
refuse it.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any, Literal

from piwork.core import safe_read
from piwork.core.context.layers import INDEX_PATH
from piwork.core.fs.atomic import write_atomically
from piwork.core.resources.diagnostics import Diagnostic

INDEX_VERSION = 1
FRESH_RATIO = 0.8
SUMMARY_CHARS = 300
PACK_MAX_ENTRIES = 8
FINDER_MAX_RESULTS = 20
FINDER_MAX_FILES = 20_000
MAX_SYMBOLS = 40  # per file
SEARCH_SYMBOLS = 8  # shown per search result

Freshness = Literal["fresh", "changed", "missing"]
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_WORD = re.compile(r"[A-Za-z0-9_]{3,}")
_STOP_WORDS = frozenset(
    [
        "the",
        "and",
        "for",
        "with",
        "from",
        "that",
        "this",
        "into",
        "when",
        "what",
        "where",
        "which",
        "how",
        "add",
        "fix",
        "make",
        "use",
        "not",
        "are",
        "was",
        "its",
        "all",
        "can",
        "new",
        "about",
    ]
)


@dataclass(frozen=True)
class CitedFile:
    path: str  # relative to the project root, "/"-separated
    sha256: str
    size: int | None = None  # bytes
    language: str = ""
    summary: str = ""
    symbols: tuple[str, ...] = ()  # top-level definitions (functions, classes, types)
    mtime_ns: int | None = None  # when it was read: unchanged size and time need no re-reading

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"path": self.path, "sha256": self.sha256}
        if self.size is not None:
            out["size"] = self.size
        if self.language:
            out["language"] = self.language
        if self.summary:
            out["summary"] = self.summary
        if self.symbols:
            out["symbols"] = list(self.symbols)
        if self.mtime_ns is not None:
            out["mtimeNs"] = self.mtime_ns
        return out


@dataclass(frozen=True)
class IndexEntry:
    id: str
    title: str
    summary: str
    files: tuple[CitedFile, ...] = ()
    tags: tuple[str, ...] = ()
    summary_outdated: bool = False  # files changed since the summary was written (set by a refresh)
    extra: Mapping[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = dict(self.extra)
        out.update(
            id=self.id,
            title=self.title,
            summary=self.summary,
            tags=list(self.tags),
            files=[f.to_json() for f in self.files],
        )
        if self.summary_outdated:
            out["summaryOutdated"] = True
        return out


@dataclass(frozen=True)
class ContextIndex:
    built_at: str
    entries: tuple[IndexEntry, ...] = ()
    version: int = INDEX_VERSION

    def to_json(self) -> dict[str, Any]:
        return {
            "version": self.version,
            "builtAt": self.built_at,
            "entries": [e.to_json() for e in self.entries],
        }


@dataclass(frozen=True)
class IndexLoad:
    path: str
    exists: bool
    index: ContextIndex | None = None
    diagnostics: tuple[Diagnostic, ...] = ()


@dataclass(frozen=True)
class EntryState:
    entry: IndexEntry
    state: Freshness
    changed_files: tuple[str, ...] = ()


@dataclass(frozen=True)
class IndexStatus:
    """Freshness of every entry, counted; ``fresh`` is the ≥80% rule."""

    path: str
    built_at: str
    entries: tuple[EntryState, ...]

    def count(self, state: Freshness) -> int:
        return sum(1 for e in self.entries if e.state == state)

    @property
    def ratio(self) -> float:
        return self.count("fresh") / len(self.entries) if self.entries else 0.0

    @property
    def fresh(self) -> bool:
        return bool(self.entries) and self.ratio >= FRESH_RATIO

    @property
    def stale_reason(self) -> str:
        if not self.entries:
            return "the index has no entries"
        changed = len(self.entries) - self.count("fresh")
        return f"{math.ceil(100 * changed / len(self.entries))}% entries changed"

    def fresh_entries(self) -> list[IndexEntry]:
        return [e.entry for e in self.entries if e.state == "fresh"]

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "builtAt": self.built_at,
            "entries": len(self.entries),
            "freshEntries": self.count("fresh"),
            "changedEntries": self.count("changed"),
            "missingEntries": self.count("missing"),
            "fresh": self.fresh,
            "reason": None if self.fresh else self.stale_reason,
        }


def index_path(cwd: str) -> str:
    return os.path.join(os.path.abspath(cwd), INDEX_PATH)


def now_utc() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


# ----------------------------------------------------------------------------- reading


def load_index(cwd: str) -> IndexLoad:
    """Read and validate the index of ``cwd``. Call only for a trusted project; never raises."""
    path = index_path(cwd)
    if not os.path.lexists(path):
        return IndexLoad(path, False)
    try:
        raw = safe_read.read_bytes(path, safe_read.CONTEXT_INDEX)
        data = json.loads(raw.decode("utf-8", errors="replace").lstrip("\ufeff"))
    except OSError as err:
        return IndexLoad(
            path, True, diagnostics=(_problem(path, f"cannot read the context index: {err.strerror}"),)
        )
    except ValueError as err:
        return IndexLoad(
            path, True, diagnostics=(_problem(path, f"the context index is not valid JSON: {err}"),)
        )
    return parse_index(data, path)


def parse_index(data: Any, path: str) -> IndexLoad:
    if not isinstance(data, dict) or data.get("version") != INDEX_VERSION:
        version = data.get("version") if isinstance(data, dict) else None
        message = (
            f"the context index must be an object with version {INDEX_VERSION} (found {json.dumps(version)})"
        )
        return IndexLoad(path, True, diagnostics=(_problem(path, message),))
    raw = data.get("entries")
    if not isinstance(raw, list):
        return IndexLoad(path, True, diagnostics=(_problem(path, "the context index has no entries list"),))
    entries: list[IndexEntry] = []
    problems: list[Diagnostic] = []
    for number, item in enumerate(raw, 1):
        entry = _parse_entry(item)
        if entry is None:
            problems.append(_problem(path, f"entry {number} is not valid and is ignored", "warning"))
        else:
            entries.append(entry)
    built = data.get("builtAt")
    return IndexLoad(
        path, True, ContextIndex(built if isinstance(built, str) else "", tuple(entries)), tuple(problems)
    )


def _parse_entry(item: Any) -> IndexEntry | None:
    if not isinstance(item, dict) or not isinstance(item.get("id"), str) or not item["id"]:
        return None
    files: list[CitedFile] = []
    for cited in item.get("files") or []:
        if not isinstance(cited, dict):
            return None
        rel, digest = cited.get("path"), cited.get("sha256")
        if not isinstance(rel, str) or not rel or not isinstance(digest, str):
            return None
        size, language, summary, symbols, mtime = (
            cited.get("size"),
            cited.get("language"),
            cited.get("summary"),
            cited.get("symbols"),
            cited.get("mtimeNs"),
        )
        files.append(
            CitedFile(
                rel,
                digest,
                size if isinstance(size, int) and not isinstance(size, bool) and size >= 0 else None,
                language if isinstance(language, str) else "",
                summary if isinstance(summary, str) else "",
                tuple(x for x in symbols if isinstance(x, str))[:MAX_SYMBOLS]
                if isinstance(symbols, list)
                else (),
                mtime if isinstance(mtime, int) and not isinstance(mtime, bool) else None,
            )
        )
    tags = item.get("tags") or []
    known = {"id", "title", "summary", "tags", "files", "summaryOutdated"}
    return IndexEntry(
        item["id"],
        str(item.get("title") or ""),
        str(item.get("summary") or ""),
        tuple(files),
        tuple(t for t in tags if isinstance(t, str)) if isinstance(tags, list) else (),
        item.get("summaryOutdated") is True,
        {k: v for k, v in item.items() if k not in known},
    )


def _problem(path: str, message: str, kind: Literal["error", "warning"] = "error") -> Diagnostic:
    return Diagnostic(kind, message, path, "context-index")


# ----------------------------------------------------------------------------- freshness


class FileHashes:
    """sha256 of project files by relative path, each file read once; files outside the root count as gone."""

    def __init__(self, root: str) -> None:
        self.root = os.path.realpath(root)
        self._cache: dict[str, str | None] = {}

    def get(self, rel: str) -> str | None:
        if rel not in self._cache:
            self._cache[rel] = self._hash(rel)
        return self._cache[rel]

    def current(self, cited: CitedFile) -> str | None:
        """The file's sha256 now: the recorded one, without reading, when its size and modification
        time are those recorded."""
        recorded = cited.size is not None and cited.mtime_ns is not None
        if recorded and cited.path not in self._cache and not os.path.isabs(cited.path):
            full = os.path.join(self.root, cited.path)
            try:
                stat = os.stat(full)
            except OSError:
                stat = None
            if (
                stat is not None
                and stat.st_size == cited.size
                and stat.st_mtime_ns == cited.mtime_ns
                and os.path.realpath(full).startswith(self.root.rstrip(os.sep) + os.sep)
            ):
                return cited.sha256
        return self.get(cited.path)

    def _hash(self, rel: str) -> str | None:
        if os.path.isabs(rel):
            return None
        full = os.path.realpath(os.path.join(self.root, rel))
        if not full.startswith(self.root.rstrip(os.sep) + os.sep) or not os.path.isfile(full):
            return None
        try:
            return safe_read.digest_file(full, safe_read.HASHED_PROJECT_FILE).sha256
        except OSError:
            return None


def entry_state(entry: IndexEntry, hashes: FileHashes) -> EntryState:
    changed, missing = [], []
    for cited in entry.files:
        now = hashes.current(cited)
        if now is None:
            missing.append(cited.path)
        elif now != cited.sha256:
            changed.append(cited.path)
    state: Freshness = "missing" if missing else "changed" if changed else "fresh"
    return EntryState(entry, state, tuple(changed))


def index_status(cwd: str, index: ContextIndex, hashes: FileHashes | None = None) -> IndexStatus:
    hashes = hashes or FileHashes(cwd)
    return IndexStatus(index_path(cwd), index.built_at, tuple(entry_state(e, hashes) for e in index.entries))


# ----------------------------------------------------------------------------- refresh


@dataclass(frozen=True)
class RefreshResult:
    index: ContextIndex
    reused: int
    updated: int
    dropped: int

    def to_json(self) -> dict[str, Any]:
        return {
            "reused": self.reused,
            "updated": self.updated,
            "dropped": self.dropped,
            "entries": len(self.index.entries),
        }


def refresh_index(cwd: str, index: ContextIndex, hashes: FileHashes | None = None) -> RefreshResult:
    """Incremental refresh: fresh entries are reused as they are; changed entries get the new hashes
    and ``summaryOutdated`` (their summary was written for other content); gone files are dropped from
    their entry, and an entry left with no file is dropped."""
    hashes = hashes or FileHashes(cwd)
    kept: list[IndexEntry] = []
    reused = updated = dropped = 0
    for entry in index.entries:
        state = entry_state(entry, hashes)
        if state.state == "fresh":
            kept.append(entry)
            reused += 1
            continue
        files = tuple(CitedFile(f.path, h) for f in entry.files if (h := hashes.get(f.path)) is not None)
        if entry.files and not files:
            dropped += 1
            continue
        kept.append(replace(entry, files=files, summary_outdated=True))
        updated += 1
    return RefreshResult(ContextIndex(now_utc(), tuple(kept)), reused, updated, dropped)


def write_index(cwd: str, index: ContextIndex) -> str:
    """Write the index atomically (piwork's own commands only; the model's tools refuse this file)."""
    path = index_path(cwd)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    text = json.dumps(index.to_json(), indent=2, ensure_ascii=False) + "\n"
    write_atomically(path, text, durable=False)  # rebuilt from the project's files at will
    return path


# ----------------------------------------------------------------------------- what the model sees


def sanitize(text: str, limit: int = SUMMARY_CHARS) -> str:
    """One line, no control characters, at most ``limit`` characters."""
    flat = " ".join(_CONTROL.sub(" ", text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def index_summary(status: IndexStatus) -> str:
    """The sanitised map for layer 4: one line per entry and its files (stale ones marked)."""
    lines = [
        "Advisory map of this repository (a hint, not a source of truth: read the real files before editing).",
        f"Built {status.built_at or 'at an unknown time'}; {status.count('fresh')} of {len(status.entries)} entries fresh.",
    ]
    for item in status.entries:
        entry = item.entry
        mark = "" if item.state == "fresh" else f" [{item.state}]"
        if entry.summary_outdated:
            mark += " [summary may be outdated]"
        title = sanitize(entry.title, 120)
        lines.append(f"- {sanitize(entry.id, 120)}{': ' + title if title else ''}{mark}")
        if entry.summary:
            lines.append(f"  {sanitize(entry.summary)}")
        if entry.files:
            lines.append("  files: " + ", ".join(sanitize(f.path, 200) for f in entry.files))
    return "\n".join(lines)


@dataclass(frozen=True)
class TaskPack:
    task: str
    entries: tuple[IndexEntry, ...]
    scores: tuple[int, ...]
    finder_paths: tuple[str, ...] = ()  # from the one bounded finder pass, when confidence was low

    @property
    def confidence(self) -> Literal["high", "low", "none"]:
        if not self.entries:
            return "none"
        return "high" if self.scores[0] >= 2 else "low"

    def render_text(self) -> str:
        lines = [
            f"Task pack for: {sanitize(self.task, 200)}",
            "Entry points from the context index (verify against the real files):",
        ]
        for entry in self.entries:
            note = " (summary may be outdated)" if entry.summary_outdated else ""
            lines.append(f"- {sanitize(entry.id, 120)}: {sanitize(entry.title, 120)}{note}")
            if entry.summary:
                lines.append(f"  {sanitize(entry.summary)}")
            lines.extend(f"  - {sanitize(f.path, 200)}" for f in entry.files)
        if not self.entries:
            lines.append("- (no index entry matches this task)")
        if self.finder_paths:
            lines.append("Files whose names match the task (one finder pass):")
            lines.extend(f"- {p}" for p in self.finder_paths)
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        return {
            "task": self.task,
            "confidence": self.confidence,
            "entries": [
                {"id": e.id, "title": e.title, "score": s}
                for e, s in zip(self.entries, self.scores, strict=True)
            ],
            "finderPaths": list(self.finder_paths),
        }


def task_words(task: str) -> set[str]:
    return {w for w in (m.lower() for m in _WORD.findall(task)) if w not in _STOP_WORDS}


def _score(entry: IndexEntry, words: set[str]) -> int:
    haystack = " ".join(
        [entry.id, entry.title, entry.summary, *entry.tags, *(f.path for f in entry.files)]
    ).lower()
    return sum(1 for w in words if w in haystack)


def build_task_pack(task: str, status: IndexStatus, finder_root: str | None = None) -> TaskPack:
    """Layer 3 from the index's fresh entries that match the task; when confidence is low and
    ``finder_root`` is given, one bounded pass over file names adds candidates (never a loop)."""
    words = task_words(task)
    ranked = sorted(
        ((s, e) for e in status.fresh_entries() if (s := _score(e, words)) > 0),
        key=lambda pair: -pair[0],
    )[:PACK_MAX_ENTRIES]
    pack = TaskPack(task, tuple(e for _s, e in ranked), tuple(s for s, _e in ranked))
    if finder_root is not None and pack.confidence != "high":
        pack = replace(pack, finder_paths=tuple(find_by_name(finder_root, words)))
    return pack


def find_by_name(root: str, words: set[str], limit: int = FINDER_MAX_RESULTS) -> list[str]:
    """One pass over the project's file names (dot folders and node_modules skipped), bounded in files seen."""
    found: list[str] = []
    seen = 0
    if not words:
        return found
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "node_modules")
        for name in sorted(files):
            seen += 1
            if seen > FINDER_MAX_FILES:
                return found
            if any(w in name.lower() for w in words):
                found.append(os.path.relpath(os.path.join(folder, name), root).replace(os.sep, "/"))
                if len(found) >= limit:
                    return found
    return found


def index_read_answer(cwd: str) -> str:
    """What the read tool returns for the context index: its sanitised map and freshness, not the raw file."""
    loaded = load_index(cwd)
    head = "[piwork: .pi/context-index.json is an advisory map; here is its summary (/context index-status).]"
    if loaded.index is None:
        problems = "; ".join(d.message for d in loaded.diagnostics) or "the file is missing"
        return f"{head}\nThe context index cannot be used: {problems}. /onboard run creates it again."
    status = index_status(cwd, loaded.index)
    freshness = "fresh" if status.fresh else f"stale ({status.stale_reason}; /context rebuild refreshes it)"
    return f"{head}\nIndex {freshness}.\n{index_summary(status)}"


# ----------------------------------------------------------------------------- search


def _file_score(entry: IndexEntry, cited: CitedFile, words: set[str]) -> int:
    """Matches of the query words: in the file's path and symbols (two each), its summary, its entry."""
    path = cited.path.lower()
    symbols = " ".join(cited.symbols).lower()
    about = " ".join([cited.summary, entry.title, entry.summary, *entry.tags]).lower()
    return sum(2 * (w in path) + 2 * (w in symbols) + (w in about) for w in words)


def index_search(cwd: str, query: str, limit: int = 10) -> dict[str, Any]:
    """Files (with their matching symbols) of the index that match ``query``, best first, at most
    ``limit``; each says whether its content still matches the index. Call for a trusted project."""
    loaded = load_index(cwd)
    if not loaded.exists:
        return {
            "ok": False,
            "status": "missing",
            "message": "No context index: run /onboard run to create one.",
        }
    if loaded.index is None:
        message = "; ".join(d.message for d in loaded.diagnostics)
        return {"ok": False, "status": "invalid", "message": message + " (/context rebuild makes a new one)"}
    words = task_words(query) or {w.lower() for w in _WORD.findall(query)}
    hashes = FileHashes(cwd)
    ranked: list[tuple[int, str, IndexEntry, CitedFile]] = []
    for entry in loaded.index.entries:
        for cited in entry.files:
            score = _file_score(entry, cited, words)
            if score > 0:
                ranked.append((score, cited.path, entry, cited))
    ranked.sort(key=lambda item: (-item[0], item[1]))
    results = []
    for score, path, entry, cited in ranked[:limit]:
        matching = [s for s in cited.symbols if any(w in s.lower() for w in words)]
        others = [s for s in cited.symbols if s not in matching]
        results.append(
            {
                "path": sanitize(path, 200),
                "score": score,
                "fresh": hashes.current(cited) == cited.sha256,
                "language": cited.language or None,
                "summary": sanitize(cited.summary or entry.summary, 160),
                "symbols": [sanitize(s, 80) for s in [*matching, *others][:SEARCH_SYMBOLS]],
            }
        )
    return {
        "ok": True,
        "query": sanitize(query, 200),
        "matches": len(ranked),
        "results": results,
        "note": "The index is a map, not the source: read the files before changing them.",
    }
