"""Session browser data: sessions of one project or of all projects, with what a list shows.

Files are read ten at a time on a small thread pool (file reads overlap; the spec's listing
concurrency) and results are yielded in file order as they come, with progress, so a large
sessions folder never blocks a caller that consumes the generator in a worker. Only user and
assistant message lines are parsed in full (their text is shown and searched); other message
lines are counted from their first bytes. Unreadable and non-session files are skipped.
"""

from __future__ import annotations

import math
import os
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from piwork.core.collector import paused_gc
from piwork.core.jscompat import js_trim
from piwork.core.messages import message_text
from piwork.core.session.format import (
    HEADER_SCAN_LIMIT,
    default_session_dir,
    is_v4_header,
    is_valid_header,
    json_loads,
    json_loads_bytes,
)
from piwork.core.session.line_index import light_record
from piwork.core.session.timestamps import iso_from_ms, js_date_ms

Progress = Callable[[int, int], None]
LISTING_CONCURRENCY = 10
PREFETCH_LIMIT = 4 * 1024 * 1024  # larger files are read line by line when their turn comes


@dataclass
class SessionInfo:
    """One row of the session browser."""

    path: Path
    id: str
    cwd: str
    name: str | None
    parent_session_path: str | None
    created: str
    modified_ms: float
    message_count: int
    first_message: str
    all_messages_text: str
    size: int
    cwd_mismatch: bool = False
    unsupported: bool = False

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "path": str(self.path),
            "id": self.id,
            "cwd": self.cwd,
            "created": self.created,
            "modified": iso_from_ms(int(self.modified_ms)) if math.isfinite(self.modified_ms) else None,
            "messageCount": self.message_count,
            "firstMessage": self.first_message,
            "allMessagesText": self.all_messages_text,
            "size": self.size,
        }
        if self.name is not None:
            out["name"] = self.name
        if self.parent_session_path is not None:
            out["parentSessionPath"] = self.parent_session_path
        if self.cwd_mismatch:
            out["cwdMismatch"] = True
        if self.unsupported:
            out["unsupported"] = True
        return out


def read_header(path: Path, limit: int = HEADER_SCAN_LIMIT) -> dict[str, Any] | None:
    """The session header if it is the first parsed line within the first ``limit`` bytes."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(limit + 1)
    except OSError:
        return None
    return header_in(data, limit)


def header_in(data: bytes, limit: int = HEADER_SCAN_LIMIT) -> dict[str, Any] | None:
    """``read_header`` on the first bytes of a file."""
    for raw in data[:limit].split(b"\n"):
        if not raw.strip():
            continue
        try:
            value = json_loads(raw.decode("utf-8", "replace"))
        except ValueError:
            continue
        return value if is_valid_header(value) or is_v4_header(value) else None
    return None


def session_info(path: str | os.PathLike[str]) -> SessionInfo | None:
    """Metadata of one session file, or ``None`` if it is not a readable session."""
    file_path = Path(path)
    try:
        return _described(file_path, file_path.stat(), None)
    except OSError:
        return None


def _described(path: Path, stat: os.stat_result, data: bytes | None) -> SessionInfo | None:
    """The info of ``path`` from its bytes (``data``) or, when they were not read, from the file."""
    try:
        with paused_gc():
            return _session_info(path, stat, data)
    except OSError:
        return None


def _file_lines(path: Path) -> Iterator[bytes]:
    with open(path, "rb") as handle:
        yield from handle


def _session_info(path: Path, stat: os.stat_result, data: bytes | None) -> SessionInfo | None:
    header = read_header(path) if data is None else header_in(data)
    if header is None:
        return None
    if is_v4_header(header):
        return SessionInfo(
            path,
            str(header.get("id", path.stem)),
            "",
            None,
            None,
            "",
            stat.st_mtime_ns / 1e6,
            0,
            "(unsupported format)",
            "",
            stat.st_size,
            unsupported=True,
        )
    count = 0
    first_message = ""
    texts: list[str] = []
    name: str | None = None
    last_activity: float | None = None
    seen_header = False
    lines = _file_lines(path) if data is None else iter(data.split(b"\n"))
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        light = light_record(raw.rstrip(b"\n"), 0, number, 0)
        if light is not None and light.role not in ("user", "assistant"):
            count += 1
            continue
        try:
            entry = json_loads_bytes(raw)
        except ValueError:
            continue
        if not seen_header:
            seen_header = True
            continue
        if not isinstance(entry, dict):
            continue
        kind = entry.get("type")
        if kind == "session_info":
            raw_name = entry.get("name")
            name = (js_trim(raw_name) or None) if isinstance(raw_name, str) else None
        if kind != "message":
            continue
        count += 1
        message = entry.get("message")
        if not isinstance(message, dict) or message.get("role") not in ("user", "assistant"):
            continue
        if "content" not in message:
            continue
        stamp = message.get("timestamp")
        activity = (
            float(stamp)
            if isinstance(stamp, (int, float)) and not isinstance(stamp, bool)
            else js_date_ms(entry.get("timestamp"))
        )
        if math.isfinite(activity):
            last_activity = max(last_activity or 0.0, activity)
        text = message_text(message, " ")
        if not text:
            continue
        texts.append(text)
        if not first_message and message.get("role") == "user":
            first_message = text
    created = header.get("timestamp")
    header_ms = js_date_ms(created) if isinstance(created, str) else math.nan
    if last_activity is not None and last_activity > 0:
        modified = last_activity
    elif math.isfinite(header_ms):
        modified = header_ms
    else:
        modified = stat.st_mtime_ns / 1e6
    parent = header.get("parentSession")
    return SessionInfo(
        path=path,
        id=str(header["id"]),
        cwd=header["cwd"] if isinstance(header.get("cwd"), str) else "",
        name=name,
        parent_session_path=parent if isinstance(parent, str) else None,
        created=created if isinstance(created, str) else "",
        modified_ms=modified,
        message_count=count,
        first_message=first_message or "(no messages)",
        all_messages_text=" ".join(texts),
        size=stat.st_size,
    )


def session_files(folder: Path) -> list[Path]:
    try:
        return sorted(p for p in folder.iterdir() if p.name.endswith(".jsonl") and p.is_file())
    except OSError:
        return []


def _prefetch(path: Path) -> tuple[os.stat_result, bytes | None] | None:
    """A file's status and, when it is small, its bytes (read on a pool thread); ``None`` if unreadable."""
    try:
        stat = path.stat()
        if stat.st_size > PREFETCH_LIMIT:
            return stat, None
        with open(path, "rb") as handle:
            return stat, handle.read()
    except OSError:
        return None


def iter_session_infos(files: Iterable[Path], progress: Progress | None = None) -> Iterator[SessionInfo]:
    """Yield the info of each readable session among ``files`` in their order, reporting ``(done,
    total)``. ``LISTING_CONCURRENCY`` files are read at once on a thread pool; they are parsed on
    the caller's thread (parsing holds the interpreter lock: more threads would only contend)."""
    paths = list(files)
    if not paths:
        return
    queue = iter(paths)
    running: deque[tuple[Path, Future[tuple[os.stat_result, bytes | None] | None]]] = deque()
    with ThreadPoolExecutor(min(LISTING_CONCURRENCY, len(paths)), "piwork-session-listing") as pool:
        try:
            for path in queue:
                running.append((path, pool.submit(_prefetch, path)))
                if len(running) == LISTING_CONCURRENCY:
                    break
            done = 0
            while running:
                path, future = running.popleft()
                read = future.result()
                following = next(queue, None)
                if following is not None:
                    running.append((following, pool.submit(_prefetch, following)))
                info = None if read is None else _described(path, *read)
                done += 1
                if progress is not None:
                    progress(done, len(paths))
                if info is not None:
                    yield info
        finally:  # the caller stopped early: start nothing more
            for _, pending in running:
                pending.cancel()


def _newest_first(infos: Iterable[SessionInfo]) -> list[SessionInfo]:
    return sorted(infos, key=lambda i: i.modified_ms if math.isfinite(i.modified_ms) else 0.0, reverse=True)


def list_sessions(
    cwd: str,
    *,
    agent_dir: str | os.PathLike[str],
    session_dir: str | os.PathLike[str] | None = None,
    progress: Progress | None = None,
) -> list[SessionInfo]:
    """Sessions of one project, newest first.

    In the default per-cwd folder, sessions whose header names another cwd (two paths can encode
    to the same folder name) are kept and marked ``cwd_mismatch``; in a custom folder only the
    sessions of ``cwd`` are listed, as Pi does.
    """
    folder_cwd = os.path.abspath(cwd)
    default = default_session_dir(folder_cwd, agent_dir)
    folder = Path(session_dir) if session_dir else default
    custom = folder != default
    out = []
    for info in iter_session_infos(session_files(folder), progress):
        matches = bool(info.cwd) and os.path.abspath(info.cwd) == folder_cwd
        if custom and not matches:
            continue
        info.cwd_mismatch = not matches and not info.unsupported
        out.append(info)
    return _newest_first(out)


def list_all_sessions(
    *,
    agent_dir: str | os.PathLike[str],
    session_dir: str | os.PathLike[str] | None = None,
    progress: Progress | None = None,
) -> list[SessionInfo]:
    """Sessions of every project (every folder under ``<agent dir>/sessions``), newest first."""
    return _newest_first(
        iter_session_infos(all_session_files(agent_dir=agent_dir, session_dir=session_dir), progress)
    )


def all_session_files(
    *, agent_dir: str | os.PathLike[str], session_dir: str | os.PathLike[str] | None = None
) -> list[Path]:
    if session_dir:
        return session_files(Path(session_dir))
    root = Path(agent_dir) / "sessions"
    try:
        folders = sorted(p for p in root.iterdir() if p.is_dir())
    except OSError:
        return []
    return [f for folder in folders for f in session_files(folder)]


def most_recent_session(folder: Path) -> Path | None:
    """The valid session with the newest file modification time ("continue most recent")."""
    best: tuple[int, Path] | None = None
    for path in session_files(folder):
        header = read_header(path)
        if header is None or not is_valid_header(header):
            continue
        mtime = path.stat().st_mtime_ns
        if best is None or mtime > best[0]:
            best = (mtime, path)
    return None if best is None else best[1]


def find_session_by_id(session_id: str, cwd: str, *, agent_dir: str | os.PathLike[str]) -> Path | None:
    """Exact id, then id prefix; in the project first, then in all projects."""
    project = [
        i for i in iter_session_infos(session_files(default_session_dir(os.path.abspath(cwd), agent_dir)))
    ]
    everything: list[SessionInfo] | None = None
    for exact in (True, False):
        for scope in ("project", "all"):
            if scope == "all" and everything is None:
                everything = list(iter_session_infos(all_session_files(agent_dir=agent_dir)))
            infos = project if scope == "project" else everything or []
            for info in infos:
                if (info.id == session_id) if exact else info.id.startswith(session_id):
                    return info.path
    return None
