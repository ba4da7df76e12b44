"""One reading of a project's trust-gated files: what the trust dialog shows and what a decision covers.

Before asking, piwork reads every gated file once (bounded: only regular files, at most
``GATED_FILE`` bytes each, hashed in chunks). The dialog shows the text of that reading, and a
decision records the fingerprint and the snapshot of that same reading, never a second read of the
disk made after the click: a file swapped while the dialog was open is therefore not what the user
decided on, and :mod:`piwork.core.fs.review_gate` keeps it from loading until piwork asks again.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from dataclasses import dataclass

from piwork.core import safe_read
from piwork.core.paths import canonical_path
from piwork.core.resources.trust_fingerprint import digest_part, fingerprint_over, refused_part
from piwork.core.resources.trust_resource import TrustResource
from piwork.core.resources.trust_review import looks_binary
from piwork.core.resources.trust_snapshot import (
    MAX_FILES,
    MAX_TEXT_BYTES,
    MAX_TOTAL_TEXT_BYTES,
    FileState,
    Snapshot,
)

_CHUNK = 256 * 1024


@dataclass(frozen=True)
class TrustReading:
    """The gated files as read once: their snapshot (hashes, and texts where small) and fingerprint."""

    folder: str
    snapshot: Snapshot
    fingerprint: str

    def text_of(self, path: str) -> str | None:
        """The text read for ``path`` (None: not read as text: binary, large, or not listed)."""
        state = self.snapshot.files.get(path)
        return state.text if state is not None else None


def read_for_review(folder: str, resources: Sequence[TrustResource]) -> TrustReading:
    """Read every gated file now, once (blocking: a worker's call)."""
    files: dict[str, FileState] = {}
    budget = [MAX_TOTAL_TEXT_BYTES]
    truncated = [False]

    def part(path: str) -> bytes:
        keep = len(files) < MAX_FILES
        if not keep:
            truncated[0] = True
        state, piece = _read_one(path, min(MAX_TEXT_BYTES, budget[0]) if keep else 0)
        if keep and state is not None:
            if state.text is not None:
                budget[0] -= state.size
            files[path] = state
        return piece

    fingerprint = fingerprint_over(resources, part)
    return TrustReading(
        canonical_path(folder), Snapshot(canonical_path(folder), files, truncated[0]), fingerprint
    )


def _read_one(path: str, keep: int) -> tuple[FileState | None, bytes]:
    """A file's snapshot state and its fingerprint part, from one read."""
    try:
        fd, info = safe_read.open_regular(path, safe_read.GATED_FILE)
    except safe_read.UnreadableFile as exc:  # a FIFO or a device: what it is, never its content
        marker = hashlib.sha256(f"unreadable\0{exc.strerror}".encode()).hexdigest()
        return FileState(marker, 0, None), refused_part(exc)
    except OSError as exc:
        return None, refused_part(exc)
    try:
        size, mtime = info.st_size, info.st_mtime_ns
        if size > safe_read.GATED_FILE.limit:  # never loaded either: known by its size and time
            marker = hashlib.sha256(f"too large\0{size}\0{mtime}".encode()).hexdigest()
            return FileState(marker, size, None), digest_part(size, mtime, b"")
        digest = hashlib.sha256()
        kept: list[bytes] = []
        total = 0
        while total <= safe_read.GATED_FILE.limit:
            chunk = os.read(fd, _CHUNK)
            if not chunk:
                break
            total += len(chunk)
            digest.update(chunk)
            if total <= keep:
                kept.append(chunk)
    except OSError as exc:
        return None, refused_part(exc)
    finally:
        os.close(fd)
    text: str | None = None
    if total <= keep:
        data = b"".join(kept)
        if not looks_binary(data):
            text = data.decode("utf-8", errors="replace")
    return FileState(digest.hexdigest(), total, text), digest_part(size, mtime, digest.digest())


def take_snapshot(folder: str, resources: Sequence[TrustResource]) -> Snapshot:
    """Read every gated file now (hash, size, and text where small enough)."""
    return read_for_review(folder, resources).snapshot
