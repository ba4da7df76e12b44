"""Fingerprints of the trust-gated resources a user was shown, so piwork can ask again when they change.

Kept in piwork's own ``<agentDir>/piwork-trust-fingerprints.json`` (``{canonical folder: sha256}``)
beside ``trust.json``, which stays exactly Pi's format.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from collections.abc import Callable, Sequence
from pathlib import Path

from piwork.core import safe_read
from piwork.core.fs.atomic import write_atomically
from piwork.core.fs.lock import locked
from piwork.core.paths import canonical_path
from piwork.core.resources.trust_resource import TrustResource
from piwork.core.resources.trust_review import list_resource_files
from piwork.core.safe_read import FileKind, UnreadableFile

FINGERPRINT_FILE_NAME = "piwork-trust-fingerprints.json"
MAX_FILES = 20_000
MAX_HASHED_BYTES = 1_000_000  # larger files count by size and modification time
_HASHED = FileKind("project resource", MAX_HASHED_BYTES)


def compute_fingerprint(resources: Sequence[TrustResource]) -> str:
    """A digest over every gated entry: relative file paths and their contents (or size+mtime if big)."""
    return fingerprint_over(resources, _file_digest)


def fingerprint_over(resources: Sequence[TrustResource], file_digest: Callable[[str], bytes]) -> str:
    """The fingerprint with each file's part given by ``file_digest(path)``: the one walk both a plain
    check and the reading taken for the trust dialog (:mod:`trust_reading`) go through."""
    digest = hashlib.sha256()
    count = 0
    for resource in sorted(resources, key=lambda r: r.path):
        digest.update(f"{resource.kind}\0{resource.path}\0".encode("utf-8", "surrogateescape"))
        for path in list_resource_files(resource.path, limit=MAX_FILES + 1).files:
            count += 1
            if count > MAX_FILES:
                digest.update(b"\0truncated")
                return digest.hexdigest()
            digest.update(os.path.relpath(path, resource.path).encode("utf-8", "surrogateescape") + b"\0")
            digest.update(file_digest(path))
    return digest.hexdigest()


def digest_part(size: int, mtime_ns: int, sha256: bytes) -> bytes:
    """A regular file's part of the fingerprint: its hash, or its size and mtime when it is big."""
    return f"{size}:{mtime_ns}".encode() if size > MAX_HASHED_BYTES else sha256


def refused_part(exc: OSError) -> bytes:
    """The part of a file piwork does not read (a FIFO, a device): what it is still counts."""
    return f"refused:{exc.errno}".encode() if isinstance(exc, UnreadableFile) else b"unreadable"


def _file_digest(path: str) -> bytes:
    try:
        info = os.stat(path)
        if stat.S_ISREG(info.st_mode) and info.st_size > MAX_HASHED_BYTES:
            return digest_part(info.st_size, info.st_mtime_ns, b"")
        return bytes.fromhex(safe_read.digest_file(path, _HASHED).sha256)
    except OSError as exc:
        return refused_part(exc)


class FingerprintStore:
    def __init__(self, agent_dir: str | os.PathLike[str]) -> None:
        self.path = Path(canonical_path(os.fspath(agent_dir))) / FINGERPRINT_FILE_NAME

    def _read(self) -> dict[str, str]:
        try:
            data = json.loads(safe_read.read_text(self.path, safe_read.FINGERPRINTS, strip_bom=False))
        except (OSError, ValueError):
            return {}
        return {k: v for k, v in data.items() if isinstance(v, str)} if isinstance(data, dict) else {}

    def recorded(self, folder: str) -> str | None:
        return self._read().get(canonical_path(folder))

    def record(self, folder: str, fingerprint: str) -> None:
        with locked(self.path):
            data = self._read()
            data[canonical_path(folder)] = fingerprint
            self.path.parent.mkdir(parents=True, exist_ok=True)
            text = json.dumps(dict(sorted(data.items())), indent=2, ensure_ascii=False) + "\n"
            write_atomically(self.path, text, durable=True, private=True)

    def changed(self, folder: str, resources: Sequence[TrustResource]) -> bool:
        """True when a fingerprint was recorded for ``folder`` and the resources no longer match it."""
        recorded = self.recorded(folder)
        return recorded is not None and recorded != compute_fingerprint(resources)
