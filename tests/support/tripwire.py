"""A FIFO that records whether anything opened it, without ever hanging the test that checks.

Opening a FIFO for reading blocks until a writer opens it. Here a small shell process waits to be that
writer: when code under test opens the FIFO, the shell's open returns, it notes the open in a file and
closes at once, so the reader sees an empty file instead of blocking for ever. A process, not a thread:
the reader is often Qt code blocked in ``read()`` while it holds the GIL, where no Python thread could run.
A test asserts ``not wire.tripped()``; a regression shows as a failed assertion, not a hung run.
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

_WAITER = 'while :; do exec 3>"$1"; exec 3>&-; echo opened >> "$2"; done'


class Tripwire:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.marks = path.with_name(path.name + ".opened")
        os.mkfifo(path)
        self._waiter = subprocess.Popen(["sh", "-c", _WAITER, "tripwire", str(path), str(self.marks)])

    def tripped(self, settle_s: float = 0.3) -> bool:
        """Whether anything opened the FIFO (waiting ``settle_s`` for the shell to note a late open)."""
        deadline = time.monotonic() + settle_s
        while True:
            if self.marks.exists():
                return True
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.02)

    def close(self) -> None:
        self._waiter.kill()
        self._waiter.wait(timeout=5)
