"""A second process that writes a session file as Pi 1.6 does, to test piwork against it.

Pi names its process ``pi`` (which hides its arguments), runs in its project folder and appends each entry
with an open, append, close of its own, holding no file open and taking no lock. ``PiLikeWriter`` starts
such a process (a small Python program that renames itself through ``/proc/self/comm``) in ``folder``;
``append`` has it append one entry line to the session file and returns once it is on disk.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

from piwork.core.session.format import serialize

_PROGRAM = textwrap.dedent(
    """
    import sys
    with open("/proc/self/comm", "w") as comm:  # what Pi's process title does
        comm.write("pi")
    print("ready", flush=True)
    for line in sys.stdin:
        path, _, entry = line.rstrip("\\n").partition("\\t")
        with open(path, "a", encoding="utf-8") as session:  # appendFileSync: open, append, close
            session.write(entry + "\\n")
        print("written", flush=True)
    """
)


class PiLikeWriter:
    def __init__(self, folder: Path) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", _PROGRAM],
            cwd=folder,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout is not None
        assert self.process.stdout.readline().strip() == "ready"

    @property
    def pid(self) -> int:
        return self.process.pid

    def append(self, path: Path, entry: dict[str, Any]) -> None:
        assert self.process.stdin is not None and self.process.stdout is not None
        line = serialize(entry).rstrip("\n")
        json.loads(line)  # one line of JSON, as Pi writes
        self.process.stdin.write(f"{path}\t{line}\n")
        self.process.stdin.flush()
        assert self.process.stdout.readline().strip() == "written"

    def stop(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        self.process.wait(timeout=10)
        if self.process.stdout is not None:
            self.process.stdout.close()

    def __enter__(self) -> PiLikeWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.process.poll() is None:
            self.stop()
