"""The context bundle: the Task Contract and layers 2-7, joined in order into one session entry.

The bundle is a ``custom_message`` entry (``customType: "piwork.contextBundle"``, shown collapsed)
appended right before a task's first prompt, so the system prompt stays Pi-shaped and cache-stable.
Each part is wrapped ``<context_layer kind="…" path="…">…</context_layer>``. A file over the hard
cap (51,200 bytes or 2,000 lines) is never injected whole: its head goes in with a marker and the
manifest says ``over-cap``. Nothing of layers 2-7 is read for an untrusted project.

Layer 1 (context files) stays in the system prompt; :func:`context_file_entries` reports it, and
``caps.cap_context_files`` applies the cap to it when ``piwork.contextFiles.enforceHardCap`` is on.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from piwork.core import safe_read
from piwork.core.context.caps import cap_text
from piwork.core.context.contract import TaskContract, append_contract
from piwork.core.context.entries import BUNDLE_CUSTOM_TYPE
from piwork.core.context.index import (
    IndexStatus,
    TaskPack,
    build_task_pack,
    index_status,
    index_summary,
    load_index,
    sanitize,
)
from piwork.core.context.layers import INDEX_PATH, MEMORY_PATH, PROFILE_PATH, SNAPSHOT_PATH
from piwork.core.context.manifest import (
    LayerStatus,
    Manifest,
    ManifestEntry,
    ManifestTotals,
    append_manifest,
    entry_for,
)
from piwork.core.resources.context_files import ContextFile
from piwork.core.resources.diagnostics import Diagnostic
from piwork.core.resources.profile import Profile, ProfileResult, load_profile
from piwork.core.resources.system_prompt import escape_xml
from piwork.core.resources.textfiles import strip_bom
from piwork.core.session.tree import SessionTree

BUNDLE_HEADER = "Project context for this task, in piwork's layer order. Maps and summaries are hints: read the current files before editing."
Count = Callable[[str], int]


def chars4(text: str) -> int:
    return (len(text) + 3) // 4


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _read(path: str) -> str:
    return strip_bom(safe_read.read_text(path, safe_read.PROJECT_FILE, strip_bom=False))


def _rel(path: str, cwd: str) -> str:
    try:
        rel = os.path.relpath(path, cwd)
    except ValueError:
        return path
    return path if rel.startswith("..") else rel.replace(os.sep, "/")


def _inside(path: str, root: str) -> bool:
    real, base = os.path.realpath(path), os.path.realpath(root)
    return real == base or real.startswith(base.rstrip(os.sep) + os.sep)


# ----------------------------------------------------------------------------- layer 1


def context_file_entries(
    files: Sequence[ContextFile], count: Count, enforce_hard_cap: bool = False
) -> list[ManifestEntry]:
    """Manifest rows for layer 1: injected whole (Pi compatibility) but flagged ``over-cap``."""
    rows = []
    for f in files:
        capped = cap_text(f.content, f.path)
        shown = capped.text if enforce_hard_cap else f.content
        reason = capped.reason
        if capped.over_cap:
            reason = f"{reason}; {'cut to the cap' if enforce_hard_cap else 'injected whole (context files are not cut)'}"
        rows.append(
            entry_for(
                "contextFile",
                f.path,
                "over-cap" if capped.over_cap else "included",
                tokens=count(shown),
                sha256=sha256_text(f.content),
                reason=reason,
            )
        )
    return rows


# ----------------------------------------------------------------------------- layers 2-7


@dataclass(frozen=True)
class BundlePart:
    kind: str  # profile | pack | index | snapshot | memory | required
    path: str  # shown path (relative to the project when inside it)
    text: str  # the wrapped part as the model reads it

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "path": self.path}


@dataclass(frozen=True)
class BundleRequest:
    """What a task asks of the bundle."""

    cwd: str
    trusted: bool
    contract: TaskContract | None = None
    task: str = ""  # the task description the pack is built for
    unfamiliar: bool = False  # marked unfamiliar/cross-module: a task pack is wanted
    memory_relevant: bool = True
    planned_files: Sequence[str] = ()  # layer 8 files the user attached or plans to read
    count: Count = chars4


@dataclass
class Bundle:
    """The assembled bundle (``text`` is None when there is nothing to send) and its manifest rows."""

    text: str | None
    parts: list[BundlePart] = field(default_factory=list)
    entries: list[ManifestEntry] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    profile: Profile | None = None
    index: IndexStatus | None = None
    pack: TaskPack | None = None
    tokens: int = 0
    # where each part sits in ``text`` (kind, shown path, start, end): a part can be projected out exactly
    spans: list[dict[str, Any]] = field(default_factory=list)


def wrap(kind: str, path: str, body: str) -> str:
    return f'<context_layer kind="{kind}" path="{escape_xml(path)}">\n{body}\n</context_layer>'


class _Builder:
    def __init__(self, request: BundleRequest) -> None:
        self.request = request
        self.cwd = os.path.abspath(request.cwd)
        self.out = Bundle(None)

    def row(self, kind: str, path: str, status: LayerStatus, **extra: Any) -> None:
        self.out.entries.append(entry_for(kind, path, status, **extra))

    def add_text(self, kind: str, path: str, body: str, sha: str | None = None) -> None:
        """Add a part (body capped) and its manifest row."""
        shown = _rel(path, self.cwd)
        capped = cap_text(body, shown)
        part = wrap(kind, shown, capped.text)
        self.out.parts.append(BundlePart(kind, shown, part))
        status: LayerStatus = "over-cap" if capped.over_cap else "included"
        self.row(kind, path, status, tokens=self.request.count(part), sha256=sha, reason=capped.reason)

    def add_file(self, kind: str, path: str) -> None:
        if not os.path.lexists(path):
            self.row(kind, path, "missing", reason="not found")
            return
        if not _inside(path, self.cwd):
            self.row(kind, path, "omitted", reason="outside the project folder")
            return
        if os.path.isdir(path):
            self.row(kind, path, "omitted", reason="a folder, not a file")
            return
        try:
            text = _read(path)
        except OSError as err:
            self.row(kind, path, "missing", reason=f"cannot be read: {err.strerror}")
            return
        self.add_text(kind, path, text, sha256_text(text))

    def build(self) -> Bundle:
        request = self.request
        if not request.trusted:
            self._blocked()
        else:
            profile = self._profile()
            index = self._index()
            self._pack(index)
            self._index_part(index)
            self.add_file("snapshot", os.path.join(self.cwd, SNAPSHOT_PATH))
            self._memory(profile)
            for rel in profile.required if profile else ():
                self.add_file("required", os.path.join(self.cwd, rel))
        self._planned()
        self._join()
        return self.out

    def _blocked(self) -> None:
        reason = "the project is not trusted"
        for kind, rel in (
            ("profile", PROFILE_PATH),
            ("pack", INDEX_PATH),
            ("index", INDEX_PATH),
            ("snapshot", SNAPSHOT_PATH),
            ("memory", MEMORY_PATH),
        ):
            path = os.path.join(self.cwd, rel)
            if kind == "pack" and not self.request.unfamiliar:
                continue
            present = os.path.lexists(path)
            self.row(
                kind,
                path,
                "blocked-untrusted" if present else "missing",
                reason=reason if present else "not found",
            )

    def _profile(self) -> Profile | None:
        result: ProfileResult = load_profile(self.cwd)
        self.out.diagnostics.extend(result.diagnostics)
        self.out.profile = result.profile
        if not result.exists:
            self.row("profile", result.path, "missing", reason="not found")
        elif result.profile is None:
            reason = result.diagnostics[0].message if result.diagnostics else "not usable"
            self.row("profile", result.path, "omitted", reason=reason)
        else:
            self.add_text("profile", result.path, result.text or "", sha256_text(result.text or ""))
        return result.profile

    def _index(self) -> IndexStatus | None:
        loaded = load_index(self.cwd)
        self.out.diagnostics.extend(loaded.diagnostics)
        if loaded.index is None:
            return None
        status = index_status(self.cwd, loaded.index)
        self.out.index = status
        return status

    def _pack(self, index: IndexStatus | None) -> None:
        path = os.path.join(self.cwd, INDEX_PATH)
        if not self.request.unfamiliar:
            return
        if index is None:
            self.row("pack", path, "missing", reason="no usable context index (run /onboard run)")
        elif not index.fresh:
            self.row("pack", path, "stale", reason=f"{index.stale_reason}; run /context rebuild")
        else:
            pack = build_task_pack(self.request.task, index, self.cwd)
            self.out.pack = pack
            if pack.confidence == "none" and not pack.finder_paths:
                self.row("pack", path, "omitted", reason="no index entry matches the task")
            else:
                self.add_text("pack", path, pack.render_text())

    def _index_part(self, index: IndexStatus | None) -> None:
        path = os.path.join(self.cwd, INDEX_PATH)
        if index is None:
            exists = os.path.lexists(path)
            reason = self.out.diagnostics[-1].message if exists and self.out.diagnostics else "not found"
            self.row("index", path, "omitted" if exists else "missing", reason=reason)
        elif not index.fresh:
            self.row("index", path, "stale", reason=index.stale_reason)
        else:
            text = index_summary(index)
            if cap_text(text, "").over_cap:  # too many files to list: a summary per folder instead
                self.add_modules(path, index)
            else:
                self.add_text("index", path, text)

    def add_modules(self, path: str, index: IndexStatus) -> None:
        """The index layer as per-folder summaries (their files' summaries and symbols) when the file
        entries would not fit the cap; marked ``over-cap`` with why."""
        # the index builder loads only for an index too big to bundle entry by entry
        from piwork.core.context.index_builder import module_summaries

        entries = index.fresh_entries()
        lines = [
            "Advisory map of this repository, one line per folder (a hint, not a source of truth: read the "
            "real files before editing; /context search finds files and symbols).",
            f"Built {index.built_at or 'at an unknown time'}; {len(entries)} of {len(index.entries)} files fresh.",
            *(f"- {sanitize(folder, 120)}: {summary}" for folder, summary in module_summaries(entries, 600)),
        ]
        shown = _rel(path, self.cwd)
        capped = cap_text("\n".join(lines), shown)
        part = wrap("index", shown, capped.text)
        self.out.parts.append(BundlePart("index", shown, part))
        reason = f"{len(index.entries)} file entries over the cap: per-folder summaries instead"
        self.row("index", path, "over-cap", tokens=self.request.count(part), reason=reason)

    def _memory(self, profile: Profile | None) -> None:
        path = os.path.join(self.cwd, MEMORY_PATH)
        if profile is None or not profile.memory_enabled:
            if os.path.lexists(path):
                self.row("memory", path, "omitted", reason="memory is off in the profile")
            return
        if not self.request.memory_relevant:
            self.row("memory", path, "omitted", reason="not relevant to this task")
            return
        self.add_file("memory", path)

    def _planned(self) -> None:
        for raw in self.request.planned_files:
            path = os.path.normpath(os.path.join(self.cwd, raw))
            if not os.path.isfile(path):
                self.row("taskFile", path, "missing", reason="not found")
                continue
            try:
                text = _read(path)
            except OSError as err:
                self.row("taskFile", path, "missing", reason=f"cannot be read: {err.strerror}")
                continue
            capped = cap_text(text, _rel(path, self.cwd))
            status: LayerStatus = "over-cap" if capped.over_cap else "planned"
            self.row(
                "taskFile",
                path,
                status,
                tokens=self.request.count(capped.text),
                sha256=sha256_text(text),
                reason=capped.reason,
            )

    def _join(self) -> None:
        pieces = []
        if self.request.contract is not None:
            pieces.append(f"<task_contract>\n{self.request.contract.render_text()}\n</task_contract>")
        pieces.extend(p.text for p in self.out.parts)
        if pieces:
            self.out.text = "\n\n".join([BUNDLE_HEADER, *pieces])
            self.out.tokens = self.request.count(self.out.text)
            end = len(self.out.text)
            for part in reversed(self.out.parts):
                start = end - len(part.text)
                self.out.spans.insert(0, {"kind": part.kind, "path": part.path, "start": start, "end": end})
                end = start - 2  # the blank line joining it to the part before


def assemble_bundle(request: BundleRequest) -> Bundle:
    """Read layers 2-7 (trusted projects only) and join them behind the contract; never raises for bad files."""
    return _Builder(request).build()


def build_manifest(
    task_id: str,
    created_at: str,
    tokenizer: str,
    context_files: Sequence[ManifestEntry],
    bundle: Bundle,
    contract: TaskContract | None,
    system_prompt_tokens: int = 0,
    tool_tokens: int = 0,
    message_tokens: int = 0,
) -> Manifest:
    verify = contract.verify if contract and contract.verify else None
    if verify is None and bundle.profile and bundle.profile.verify:
        verify = bundle.profile.verify[0]
    totals = ManifestTotals(system_prompt_tokens, tool_tokens, bundle.tokens, message_tokens)
    manifest = Manifest(task_id, created_at, tokenizer, (), verify, totals)
    return manifest.with_entries([*context_files, *bundle.entries])


def bundle_details(bundle: Bundle) -> dict[str, Any]:
    """What the chat shows about the bundle without reading its text: its parts and their status."""
    return {
        "layers": [e.to_json() for e in bundle.entries if e.layer in range(2, 8)],
        "tokens": bundle.tokens,
        "parts": bundle.spans,
    }


def start_task(
    tree: SessionTree, contract: TaskContract | None, bundle: Bundle, manifest: Manifest
) -> str | None:
    """Record a task: contract and manifest (state only), then the bundle right before the first prompt.

    Returns the bundle entry's id (None when the bundle is empty). The caller appends the prompt next.
    """
    if contract is not None:
        append_contract(tree, contract)
    append_manifest(tree, manifest)
    if bundle.text is None:
        return None
    content = [{"type": "text", "text": bundle.text}]
    return tree.append_custom_message(BUNDLE_CUSTOM_TYPE, content, True, bundle_details(bundle))
