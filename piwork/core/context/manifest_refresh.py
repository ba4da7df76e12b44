"""Keeping a task's manifest current: what changed in its layers since the task started.

A file injected into the bundle that has changed since is ``stale`` (the bundle holds the old text);
one that is gone is ``missing``; an index that fell below the freshness rule is ``stale``. Files the
model read or changed on the branch are added as layer-8 task files. Nothing here reads file content
into the manifest: only hashes and paths.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from dataclasses import replace

from piwork.core import safe_read
from piwork.core.compaction.file_ops import extract_file_ops
from piwork.core.context.index import index_status, load_index
from piwork.core.context.manifest import Manifest, ManifestEntry, entry_for
from piwork.core.messages import Message

_FILE_LAYERS = (2, 5, 6, 7)


def _file_sha(path: str) -> str | None:
    try:
        data = safe_read.read_bytes(path, safe_read.PROJECT_FILE)
    except OSError:
        return None
    text = data.decode("utf-8", errors="replace").removeprefix("\ufeff")
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _refresh_entry(entry: ManifestEntry, cwd: str, trusted: bool) -> ManifestEntry:
    if entry.status not in ("included", "over-cap"):
        return entry
    if entry.layer in _FILE_LAYERS and entry.sha256:
        now = _file_sha(entry.path)
        if now is None:
            return replace(entry, status="missing", reason="gone since the task started")
        if now != entry.sha256:
            return replace(
                entry, status="stale", reason="changed since the task started; read the current file"
            )
    if entry.layer == 4 and trusted:
        loaded = load_index(cwd)
        if loaded.index is None:
            return replace(entry, status="missing", reason="the index is gone or unreadable")
        status = index_status(cwd, loaded.index)
        if not status.fresh:
            return replace(entry, status="stale", reason=f"{status.stale_reason}; run /context rebuild")
    return entry


def refresh_manifest(manifest: Manifest, cwd: str, trusted: bool, messages: Sequence[Message]) -> Manifest:
    """``manifest`` with its layers re-checked and the branch's task files added."""
    entries = [_refresh_entry(e, cwd, trusted) for e in manifest.entries]
    known = {(e.layer, e.path) for e in entries}
    ops = extract_file_ops(messages)
    changed = {**ops.edited, **ops.written}
    for raw in [*ops.read, *changed]:
        path = os.path.normpath(os.path.join(cwd, raw))
        if (8, path) in known:
            continue
        known.add((8, path))
        reason = "changed by the model" if raw in changed else "read by the model"
        entries.append(entry_for("taskFile", path, "included", sha256=_file_sha(path), reason=reason))
    return manifest.with_entries(entries)
