"""Full-output logs: private files holding the complete output of commands whose view was truncated.

Layout: ``<agentDir>/logs/<session id>/`` (mode 0700) holds ``bash-<UTC time>-<16 hex>.log`` files
(mode 0600, created exclusively, raw bytes exactly as the command wrote them) and, next to each, a
``.json`` sidecar with what produced it (tool, call id, command, exit status, truncation record).
The tool result refers to the log by absolute path, so logs are kept; a size cap over the whole
``logs`` folder (setting ``logs.maxTotalMB``, default :data:`DEFAULT_LOGS_MAX_TOTAL_MB`) removes the
oldest logs first.
"""

from __future__ import annotations

import json
import os
import secrets
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from piwork.core.settings_schema import LOGS_MAX_TOTAL_MB

DEFAULT_LOGS_MAX_TOTAL_MB = LOGS_MAX_TOTAL_MB.default
LOGS_DIR_NAME = "logs"
LOG_SUFFIX = ".log"
META_SUFFIX = ".json"


def logs_root(agent_dir: Path) -> Path:
    return agent_dir / LOGS_DIR_NAME


def session_log_dir(agent_dir: Path, session_id: str) -> Path:
    """The folder for one session's full-output logs (the session id is made path-safe)."""
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in session_id).strip(".") or "session"
    return logs_root(agent_dir) / safe


def fallback_log_dir() -> Path:
    """Private per-user folder used when no session folder is known."""
    return Path(tempfile.gettempdir()) / f"piwork-{os.getuid()}"


def _ensure_private_dir(path: Path) -> None:
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    if path.stat().st_mode & 0o077:
        os.chmod(path, 0o700)


def create_log_file(log_dir: Path | None, prefix: str = "bash") -> tuple[str, BinaryIO]:
    """Create a new private log file (exclusive create, 0600); returns its absolute path and handle."""
    folder = log_dir if log_dir is not None else fallback_log_dir()
    _ensure_private_dir(folder)
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    while True:
        path = folder / f"{prefix}-{stamp}-{secrets.token_hex(8)}{LOG_SUFFIX}"
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o600)
        except FileExistsError:
            continue
        return str(path.absolute()), os.fdopen(fd, "wb")


def metadata_path(log_path: str | Path) -> Path:
    return Path(log_path).with_suffix(META_SUFFIX)


def write_log_metadata(log_path: str | Path, metadata: dict[str, Any]) -> None:
    """Write the sidecar describing a log (atomically: temp file then rename)."""
    target = metadata_path(log_path)
    tmp = target.with_name(f".{target.name}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        json.dump(metadata, out, ensure_ascii=False, indent=2)
    os.replace(tmp, target)


@dataclass(frozen=True, slots=True)
class LogInfo:
    """One full-output log as the log viewer lists it."""

    path: Path
    size: int
    modified: float
    metadata: dict[str, Any]

    @property
    def tool_call_id(self) -> str | None:
        value = self.metadata.get("toolCallId")
        return value if isinstance(value, str) else None

    @property
    def command(self) -> str | None:
        value = self.metadata.get("command")
        return value if isinstance(value, str) else None


def _read_metadata(log_path: Path) -> dict[str, Any]:
    try:
        data = json.loads(metadata_path(log_path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def list_session_logs(log_dir: Path) -> list[LogInfo]:
    """A session's logs, oldest first, each with its sidecar metadata (``{}`` if missing or corrupt)."""
    infos: list[LogInfo] = []
    try:
        entries = list(os.scandir(log_dir))
    except OSError:
        return []
    for entry in entries:
        if not entry.name.endswith(LOG_SUFFIX) or not entry.is_file(follow_symlinks=False):
            continue
        try:
            stat = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        path = Path(entry.path)
        infos.append(LogInfo(path, stat.st_size, stat.st_mtime, _read_metadata(path)))
    infos.sort(key=lambda info: (info.modified, info.path.name))
    return infos


def enforce_size_cap(root: Path, max_total_bytes: int, keep: frozenset[str] = frozenset()) -> list[Path]:
    """Delete the oldest logs under ``root`` until the total is within the cap; returns removed logs.

    Logs whose absolute path is in ``keep`` (for example the one just written) are never removed.
    """
    logs: list[LogInfo] = list_session_logs(root)
    try:
        folders = [Path(e.path) for e in os.scandir(root) if e.is_dir(follow_symlinks=False)]
    except OSError:
        return []
    for folder in folders:
        logs.extend(list_session_logs(folder))
    total = sum(info.size for info in logs)
    removed: list[Path] = []
    for info in sorted(logs, key=lambda i: i.modified):
        if total <= max_total_bytes:
            break
        if str(info.path) in keep:
            continue
        try:
            info.path.unlink()
        except OSError:
            continue
        metadata_path(info.path).unlink(missing_ok=True)
        total -= info.size
        removed.append(info.path)
    return removed
