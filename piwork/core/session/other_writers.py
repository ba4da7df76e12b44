"""Other programs writing a session file: Pi, which takes no lock, and a piwork holding the writer lock.

Pi appends each entry with an open-append-close of its own and keeps no file open, so nothing on disk says
that it works on a session. What does (Linux ``/proc``): a Pi process names itself ``pi`` (``pi-rpc`` in
RPC mode), which hides its arguments, and runs in its project folder, the ``cwd`` of the session's header.
A Pi process in that folder is taken as the writer of entries that appear in the file without piwork having
written them; its pid and start time say when it has stopped.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from piwork.core.session.lock_holder import UNKNOWN_HOLDER, describe_process, lock_holder_pids

PROC = "/proc"
PI_TITLES = frozenset({"pi", "pi-rpc"})  # what Pi sets as its process title
_PI_SCRIPTS = ("pi-coding-agent/dist/bundle/cli.js", "pi-coding-agent/dist/cli.js")


@dataclass(frozen=True)
class OtherWriter:
    """A program that writes (or may write) a session file piwork has open."""

    who: str  # "Pi (pid 42)", "A piwork window (pid 42)", "Another program": a sentence's subject
    pid: int | None = None
    started: int | None = None  # the process's start time (clock ticks since boot), against pid reuse
    is_pi: bool = False
    holds_lock: bool = False  # a piwork holding the writer lock: it has stopped once the lock is free

    def running(self, proc: str = PROC) -> bool:
        """Still running (True when nothing says otherwise: no pid, no ``/proc``)."""
        if self.pid is None:
            return True
        started = _start_ticks(self.pid, proc)
        return started is not None and (self.started is None or started == self.started)


def _read(path: str, limit: int = 1 << 16) -> bytes | None:
    try:
        with open(path, "rb") as handle:
            return handle.read(limit)
    except OSError:
        return None


def _start_ticks(pid: int, proc: str = PROC) -> int | None:
    """The process's start time, or None when it is gone (or a zombie: it has stopped writing)."""
    raw = _read(f"{proc}/{pid}/stat", 4096)
    if raw is None:
        return None
    fields = raw.rpartition(b")")[2].split()  # after the command name, which may hold spaces
    if len(fields) < 20 or fields[0] in (b"Z", b"X"):
        return None
    try:
        return int(fields[19])
    except ValueError:
        return None


def _is_pi(pid: int, proc: str) -> bool:
    comm = (_read(f"{proc}/{pid}/comm", 64) or b"").strip().decode("utf-8", "replace")
    if comm in PI_TITLES:
        return True
    if comm not in ("node", "bun"):
        return False
    args = (_read(f"{proc}/{pid}/cmdline") or b"").split(b"\0")
    return any(a.decode("utf-8", "replace").endswith(_PI_SCRIPTS) for a in args[1:3])


def _real(path: str) -> str:
    try:
        return os.path.realpath(path)
    except (OSError, ValueError):
        return path


def pi_processes(folders: Iterable[str], proc: str = PROC) -> list[int]:
    """The Pi processes (not this one) running in one of ``folders``, lowest pid first."""
    wanted = {_real(folder) for folder in folders}
    found: list[int] = []
    try:
        names = os.listdir(proc)
    except OSError:
        return []
    me = os.getpid()
    for name in names:
        if not name.isdigit() or int(name) == me or not _is_pi(int(name), proc):
            continue
        with contextlib.suppress(OSError):
            if _real(os.readlink(f"{proc}/{name}/cwd")) in wanted:
                found.append(int(name))
    return sorted(found)


def pi_writer(folders: Iterable[str], proc: str = PROC) -> OtherWriter | None:
    """The Pi running in one of the session's ``folders`` (its header's ``cwd``, piwork's), if one is: the
    one started last when several are."""
    candidates = [
        (started, pid) for pid in pi_processes(folders, proc) if (started := _start_ticks(pid, proc))
    ]
    if not candidates:
        return None
    started, pid = max(candidates)
    return OtherWriter(f"Pi (pid {pid})", pid, started, is_pi=True)


def appending_writer(folders: Iterable[str], proc: str = PROC) -> OtherWriter:
    """Who appended entries that piwork did not write: the Pi in the folder, else some other program."""
    return pi_writer(folders, proc) or OtherWriter("Another program")


def locks_visible(locks_file: str = "/proc/locks") -> bool:
    """Whether the holders of ``flock`` locks can be seen (Linux): else a freed lock goes unnoticed."""
    return os.access(locks_file, os.R_OK)


def lock_writer(fd: int) -> OtherWriter:
    """The holder of the writer lock on the file open as ``fd`` (as far as it can be told)."""
    pids = lock_holder_pids(fd)
    if not pids:
        return OtherWriter(UNKNOWN_HOLDER, holds_lock=True)
    return OtherWriter(describe_process(pids[0]), pids[0], _start_ticks(pids[0]), holds_lock=True)


def lock_held_by(path: Path) -> OtherWriter | None:
    """The process holding the writer lock on ``path`` (this one too: another of its sessions), or None
    when nobody does (or the file cannot be opened; see ``locks_visible``)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        if not lock_holder_pids(fd):
            return None
        return lock_writer(fd)
    finally:
        os.close(fd)
