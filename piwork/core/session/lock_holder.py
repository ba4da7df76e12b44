"""Who holds a session file's writer lock, in words: a piwork window, a headless run, this process.

piwork takes an exclusive ``flock`` on a session file it writes. When another process holds it, the
message says which one, found in ``/proc/locks`` (Linux) by the file's device and inode, with the
holder's command line from ``/proc/<pid>/cmdline``. Elsewhere, or when the holder cannot be found,
it says what it may be.
"""

from __future__ import annotations

import contextlib
import os

UNKNOWN_HOLDER = "Another piwork (a window or a headless run)"
_HEADLESS_FLAGS = ("-p", "--print", "--mode")


def lock_holder_pids(fd: int, locks_file: str = "/proc/locks") -> list[int]:
    """The processes holding a ``flock`` on the file open as ``fd`` (empty when not known)."""
    try:
        info = os.fstat(fd)
        with open(locks_file, encoding="ascii", errors="replace") as handle:
            table = handle.read(1 << 20)
    except OSError:
        return []
    wanted = (os.major(info.st_dev), os.minor(info.st_dev), info.st_ino)
    pids: list[int] = []
    for line in table.splitlines():
        fields = line.split()
        if "->" in fields:  # a waiter on the lock, not its holder
            continue
        if len(fields) < 6 or fields[1] != "FLOCK":
            continue
        try:
            major, minor, inode = fields[5].split(":")
            key = (int(major, 16), int(minor, 16), int(inode))
            pid = int(fields[4])
        except ValueError:
            continue
        if key == wanted and pid not in pids:
            pids.append(pid)
    return pids


def describe_process(pid: int) -> str:
    """``"A headless piwork run (pid 42)"``, ``"A piwork window (pid 42)"``... for a sentence's subject."""
    args: list[str] = []
    with contextlib.suppress(OSError), open(f"/proc/{pid}/cmdline", "rb") as handle:
        args = [a.decode("utf-8", "replace") for a in handle.read(1 << 16).split(b"\0") if a]
    if any(a in _HEADLESS_FLAGS or a.startswith(("--print=", "--mode=")) for a in args):
        return f"A headless piwork run (pid {pid})"
    if args:
        return f"A piwork window (pid {pid})"
    return f"Another piwork (pid {pid})"


def read_only_reason(fd: int) -> str:
    """Why a session whose writer lock is held elsewhere opens read-only, naming the holder."""
    pids = lock_holder_pids(fd)
    if pids and pids[0] == os.getpid():
        return "This session is already open for writing in this piwork, so it is open read-only here."
    holder = describe_process(pids[0]) if pids else UNKNOWN_HOLDER
    return f"{holder} is writing this session, so it is open read-only here."
