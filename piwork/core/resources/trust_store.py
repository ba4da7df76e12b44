"""``<agentDir>/trust.json``: saved project-trust decisions, shared with Pi.

A JSON object mapping canonical directory paths to ``true``/``false``/``null``; the nearest ancestor
with a true/false value decides. Writes re-read the file under a lock directory, apply the updates,
and replace the file atomically with JS-sorted keys and 2-space indentation. A file that does not
parse or holds other values is never rewritten: every read raises :class:`TrustStoreError`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from piwork.core import safe_read
from piwork.core.errors import InputRejected
from piwork.core.fs.atomic import write_atomically
from piwork.core.fs.lock import LockBusyError, locked
from piwork.core.jscompat import js_json_stringify, js_sorted, json_loads_js
from piwork.core.paths import canonical_path

TRUST_FILE_NAME = "trust.json"

TrustValue = bool | None


class TrustStoreError(InputRejected):
    """trust.json cannot be read or is not a valid store; projects count as untrusted meanwhile."""


@dataclass(frozen=True)
class TrustEntry:
    path: str
    decision: bool

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "decision": self.decision}


@dataclass(frozen=True)
class TrustUpdate:
    """One change: ``decision`` None deletes the key for ``path``."""

    path: str
    decision: TrustValue

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "decision": self.decision}


def strict_canonical(path: str, cwd: str | None = None) -> str | None:
    """The real path of ``path``, or None when it cannot be resolved (missing, no permission)."""
    absolute = canonical_path(path, cwd)
    try:
        return os.path.realpath(absolute, strict=True)
    except OSError:
        return None


class TrustStore:
    """Reads and writes one trust.json. Stateless apart from its path: safe to create per use."""

    def __init__(self, agent_dir: str | os.PathLike[str]) -> None:
        self.path = Path(canonical_path(os.fspath(agent_dir))) / TRUST_FILE_NAME

    def read(self) -> dict[str, TrustValue]:
        try:
            with locked(self.path):
                return self._read_unlocked()
        except TrustStoreError:
            raise
        except (LockBusyError, OSError) as exc:
            raise TrustStoreError(f"Cannot read the trust store {self.path}: {exc}") from exc

    def lookup(self, cwd: str) -> TrustEntry | None:
        """Nearest saved decision for ``cwd`` (canonicalised, Pi's fallback to the raw path)."""
        return find_nearest(self.read(), canonical_path(cwd))

    def set_many(self, updates: Iterable[TrustUpdate]) -> None:
        with locked(self.path):
            data = self._read_unlocked()
            for update in updates:
                key = canonical_path(update.path)
                if update.decision is None:
                    data.pop(key, None)
                else:
                    data[key] = update.decision
            self._write_unlocked(data)

    def backup_and_reset(self) -> Path | None:
        """Rename a broken store to ``trust.json.corrupt-<UTC time>`` so decisions can be made anew."""
        with locked(self.path):
            if not self.path.exists():
                return None
            stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
            backup = self.path.with_name(f"{TRUST_FILE_NAME}.corrupt-{stamp}")
            os.replace(self.path, backup)
            return backup

    def _read_unlocked(self) -> dict[str, TrustValue]:
        return parse_trust_text(self.path)

    def _write_unlocked(self, data: dict[str, TrustValue]) -> None:
        text = format_trust_store(data)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(self.path, text, durable=True, private=True)


def parse_trust_text(path: Path) -> dict[str, TrustValue]:
    try:
        raw = safe_read.read_bytes(path, safe_read.TRUST_STORE)
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise TrustStoreError(f"Cannot read the trust store {path}: {exc.strerror or exc}") from exc
    text = raw.decode("utf-8", errors="replace")
    if text.startswith("\ufeff"):
        text = text[1:]
    try:
        parsed = json_loads_js(text)
    except ValueError as exc:
        raise TrustStoreError(
            f"The trust store {path} is not valid JSON ({exc}); it was left untouched"
        ) from exc
    if not isinstance(parsed, dict):
        raise TrustStoreError(f"The trust store {path} must hold a JSON object; it was left untouched")
    for key, value in parsed.items():
        if value is not True and value is not False and value is not None:
            raise TrustStoreError(
                f"The trust store {path} is invalid: the value for {key!r} must be true, false or null"
            )
    return dict(parsed)


def format_trust_store(data: dict[str, TrustValue]) -> str:
    ordered = {key: data[key] for key in js_sorted(list(data))}
    return js_json_stringify(ordered, indent=2) + "\n"


def find_nearest(data: dict[str, TrustValue], canonical_cwd: str) -> TrustEntry | None:
    current = canonical_cwd
    while True:
        value = data.get(current)
        if value is True or value is False:
            return TrustEntry(current, value)
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent
