"""A file on a slow disk: piwork's reader waits at a gate before it opens that file, as it would on a network
home folder that takes its time, until the test lets it through.

piwork's one reader (``piwork.core.safe_read``) refuses FIFOs, so a FIFO no longer stands in for a slow
file. The gate sits in front of the real reader: the file is read for real once the gate opens, and the
threads that waited are recorded, so a test can show that the window never waited on its GUI thread.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from piwork.core import safe_read

WAIT_LIMIT_S = 30.0  # a test that never opens the gate fails instead of hanging


class SlowFile:
    """The gate in front of one file. ``open()`` lets every waiting and later read through."""

    def __init__(self, path: Path) -> None:
        self.path = os.path.realpath(path)
        self.gate = threading.Event()
        self.asked = threading.Event()  # set once a reader waits at the gate
        self.readers: list[int] = []  # thread idents, in order
        self.gui_thread = threading.get_ident()

    def wait(self) -> None:
        self.readers.append(threading.get_ident())
        self.asked.set()
        if not self.gate.wait(WAIT_LIMIT_S):
            raise TimeoutError(f"the test never let the read of {self.path} through")

    def open(self) -> None:
        self.gate.set()

    def close(self) -> None:
        self.gate.clear()
        self.asked.clear()

    def read_on_gui_thread(self) -> bool:
        return self.gui_thread in self.readers


def slow_file(monkeypatch: pytest.MonkeyPatch, path: Path) -> SlowFile:
    """Reads of ``path`` through piwork's reader wait until the returned gate is opened (``monkeypatch``
    takes the gate away when the test ends)."""
    gate = SlowFile(path)
    real_open = safe_read.open_regular

    def gated_open(target: str | os.PathLike[str], kind: safe_read.FileKind) -> tuple[int, os.stat_result]:
        if os.path.realpath(target) == gate.path:
            gate.wait()
        return real_open(target, kind)

    monkeypatch.setattr(safe_read, "open_regular", gated_open)
    return gate


class SlowFolder(SlowFile):
    """The gate in front of a folder's disk: reading back by offset (``os.pread``) and syncing
    (``os.fsync``) a file under it wait until the test opens the gate."""

    def covers(self, fd: int) -> bool:
        try:
            where = os.path.realpath(f"/proc/self/fd/{fd}")
        except OSError:
            return False
        return where.startswith(self.path + os.sep)


def slow_folder(monkeypatch: pytest.MonkeyPatch, folder: Path) -> SlowFolder:
    """Session bodies read back from files under ``folder`` and the fsync of any file written there wait
    until the returned gate is opened: a fork or clone reads every body on its path and writes and fsyncs
    a new file, as on a network home folder that takes its time (Linux: descriptors are named through
    ``/proc/self/fd``)."""
    gate = SlowFolder(folder)
    real_pread, real_fsync = os.pread, os.fsync

    def gated_pread(fd: int, length: int, offset: int) -> bytes:
        if not gate.gate.is_set() and gate.covers(fd):
            gate.wait()
        return real_pread(fd, length, offset)

    def gated_fsync(fd: int) -> None:
        if not gate.gate.is_set() and gate.covers(fd):
            gate.wait()
        real_fsync(fd)

    monkeypatch.setattr(os, "pread", gated_pread)
    monkeypatch.setattr(os, "fsync", gated_fsync)
    return gate
