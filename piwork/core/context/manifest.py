"""The context manifest: what each layer contributed to a task, from where, at what token cost.

It holds metadata only (paths, hashes, token counts, reasons) and is kept in the session as a
state-only ``custom`` entry ``piwork.manifest`` that never reaches the model. ``render_text`` is the
copyable form ``/context manifest`` prints.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal, cast, get_args

from piwork.core.context.entries import custom_bodies
from piwork.core.context.layers import LAYER_BY_KIND
from piwork.core.session.tree import SessionTree

MANIFEST_CUSTOM_TYPE = "piwork.manifest"
MANIFEST_VERSION = 1

LayerStatus = Literal["included", "planned", "omitted", "stale", "over-cap", "blocked-untrusted", "missing"]
LAYER_STATUSES: tuple[str, ...] = get_args(LayerStatus)
# statuses whose content (or part of it) reaches the model
LOADED_STATUSES = frozenset({"included", "over-cap"})

_TEXT_LABELS = {
    "contextFile": "context",
    "profile": "profile",
    "pack": "pack",
    "index": "index",
    "snapshot": "snapshot",
    "memory": "memory",
    "required": "required",
    "taskFile": "task files",
    "testDoc": "tests/docs",
    "externalDoc": "external docs",
}


class ManifestError(ValueError):
    """A stored manifest that does not have the expected shape."""


@dataclass(frozen=True)
class ManifestEntry:
    """One row: a layer's file (or generated part) and what became of it."""

    layer: int
    kind: str
    path: str
    status: LayerStatus
    tokens: int = 0
    sha256: str | None = None
    reason: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "layer": self.layer,
            "kind": self.kind,
            "path": self.path,
            "status": self.status,
            "tokens": self.tokens,
        }
        if self.sha256 is not None:
            out["sha256"] = self.sha256
        if self.reason is not None:
            out["reason"] = self.reason
        return out

    @classmethod
    def from_json(cls, value: Any) -> ManifestEntry:
        if not isinstance(value, Mapping):
            raise ManifestError("a manifest entry is not an object")
        status = value.get("status")
        if status not in LAYER_STATUSES:
            raise ManifestError(f"unknown manifest status {status!r}")
        layer, tokens = value.get("layer"), value.get("tokens", 0)
        if not isinstance(layer, int) or isinstance(layer, bool) or not 1 <= layer <= 10:
            raise ManifestError(f"manifest layer must be 1-10, got {layer!r}")
        if not isinstance(tokens, int) or isinstance(tokens, bool):
            raise ManifestError("manifest tokens must be an integer")
        sha, reason = value.get("sha256"), value.get("reason")
        return cls(
            layer,
            str(value.get("kind", "")),
            str(value.get("path", "")),
            cast(LayerStatus, status),
            tokens,
            sha if isinstance(sha, str) else None,
            reason if isinstance(reason, str) else None,
        )

    @property
    def loaded(self) -> bool:
        return self.status in LOADED_STATUSES


@dataclass(frozen=True)
class ManifestTotals:
    """Estimated tokens of what the next request holds, by source."""

    system_prompt: int = 0
    tools: int = 0
    bundle: int = 0
    messages: int = 0

    @property
    def total(self) -> int:
        return self.system_prompt + self.tools + self.bundle + self.messages

    def to_json(self) -> dict[str, int]:
        return {
            "systemPrompt": self.system_prompt,
            "tools": self.tools,
            "bundle": self.bundle,
            "messages": self.messages,
        }

    @classmethod
    def from_json(cls, value: Any) -> ManifestTotals:
        if not isinstance(value, Mapping):
            return cls()

        def num(key: str) -> int:
            got = value.get(key, 0)
            return got if isinstance(got, int) and not isinstance(got, bool) else 0

        return cls(num("systemPrompt"), num("tools"), num("bundle"), num("messages"))


@dataclass(frozen=True)
class Manifest:
    """The manifest of one task (``cwd`` is not stored; it only shortens paths in the text form).

    ``tokenizer`` is ``o200k_base``, ``cl100k_base≈`` (an approximation of the model's own) or ``chars/4``.
    """

    task_id: str
    created_at: str
    tokenizer: str
    entries: tuple[ManifestEntry, ...] = ()
    verify: str | None = None
    totals: ManifestTotals = field(default_factory=ManifestTotals)
    version: int = MANIFEST_VERSION

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "version": self.version,
            "taskId": self.task_id,
            "createdAt": self.created_at,
            "tokenizer": self.tokenizer,
            "entries": [e.to_json() for e in self.entries],
        }
        if self.verify is not None:
            out["verify"] = self.verify
        out["totals"] = self.totals.to_json()
        return out

    @classmethod
    def from_json(cls, value: Any) -> Manifest:
        if not isinstance(value, Mapping):
            raise ManifestError("the manifest is not an object")
        version = value.get("version")
        if version != MANIFEST_VERSION:
            raise ManifestError(f"unsupported manifest version {version!r}")
        raw_entries = value.get("entries", [])
        if not isinstance(raw_entries, list):
            raise ManifestError("manifest entries must be a list")
        verify = value.get("verify")
        return cls(
            str(value.get("taskId", "")),
            str(value.get("createdAt", "")),
            tokenizer_form(str(value.get("tokenizer", ""))),
            tuple(ManifestEntry.from_json(e) for e in raw_entries),
            verify if isinstance(verify, str) else None,
            ManifestTotals.from_json(value.get("totals")),
        )

    def layer_entries(self, layer: int) -> list[ManifestEntry]:
        return [e for e in self.entries if e.layer == layer]

    def with_entries(self, entries: Iterable[ManifestEntry]) -> Manifest:
        """A copy whose entries are ``entries`` sorted by layer (stable inside a layer)."""
        return replace(self, entries=tuple(sorted(entries, key=lambda e: e.layer)))

    def upsert(self, entry: ManifestEntry) -> Manifest:
        """A copy with ``entry`` replacing the row of the same layer and path (or added)."""
        kept = [e for e in self.entries if (e.layer, e.path) != (entry.layer, entry.path)]
        return self.with_entries([*kept, entry])

    def render_text(self, cwd: str | None = None) -> str:
        """The short copyable form (one line per row, paths relative to ``cwd`` when inside it)."""
        lines = ["Context manifest"]
        for entry in self.entries:
            label = _TEXT_LABELS.get(entry.kind, entry.kind)
            notes = []
            if entry.kind == "index":
                notes.append("advisory map")
            if entry.status not in ("included", "planned"):
                notes.append(entry.status + (f": {entry.reason}" if entry.reason else ""))
            suffix = f" ({', '.join(notes)})" if notes else ""
            lines.append(f"- {label}: {_short_path(entry.path, cwd)}{suffix}")
        if self.verify:
            lines.append(f"- verify: {self.verify}")
        return "\n".join(lines) + "\n"


def tokenizer_form(name: str) -> str:
    """A tokenizer name in the manifest's form (``o200k_base``, ``cl100k_base≈``, ``chars/4``); a
    manifest saved with the meter's label (``≈ cl100k_base``, ``≈ chars/4``) reads in that form."""
    if not name.startswith("≈"):
        return name
    bare = name.removeprefix("≈").strip()
    return bare if bare == "chars/4" else f"{bare}≈"


def _short_path(path: str, cwd: str | None) -> str:
    if cwd and os.path.isabs(path):
        root = os.path.abspath(cwd)
        if path == root or path.startswith(root.rstrip(os.sep) + os.sep):
            return os.path.relpath(path, root)
    return path


def entry_for(kind: str, path: str, status: LayerStatus, **extra: Any) -> ManifestEntry:
    """A row for layer ``kind`` (its number looked up)."""
    return ManifestEntry(LAYER_BY_KIND[kind].number, kind, path, status, **extra)


def append_manifest(tree: SessionTree, manifest: Manifest) -> str:
    """Save ``manifest`` as a state-only ``custom`` entry; returns the entry id."""
    return tree.append_custom_entry(MANIFEST_CUSTOM_TYPE, manifest.to_json())


def latest_manifest(tree: SessionTree, leaf_id: Any = None) -> Manifest | None:
    """The most recent valid manifest on the path to the leaf (or ``leaf_id``); damaged ones are skipped."""
    for body in custom_bodies(tree, MANIFEST_CUSTOM_TYPE, leaf_id):
        try:
            return Manifest.from_json(body.get("data"))
        except ManifestError:
            continue
    return None


__all__ = [
    "LAYER_STATUSES",
    "MANIFEST_CUSTOM_TYPE",
    "LayerStatus",
    "Manifest",
    "ManifestEntry",
    "ManifestError",
    "ManifestTotals",
    "append_manifest",
    "entry_for",
    "latest_manifest",
    "tokenizer_form",
]
