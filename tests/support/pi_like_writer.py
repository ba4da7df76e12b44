"""A second process that writes a session file as Pi 1.6 does, to test piwork against it.

Pi names its process ``pi`` (which hides its arguments), runs in its project folder and appends each entry
with an open, append, close of its own, holding no file open and taking no lock. ``PiLikeWriter`` starts
such a process (a small Python program that renames itself through ``/proc/self/comm``) in ``folder``;
``append`` has it append one entry line to the session file and returns once it is on disk.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

from piwork.core.session.format import serialize
from tests.support.line_driven_process import LineDrivenProcess

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


class PiLikeWriter(LineDrivenProcess):
    def __init__(self, folder: Path) -> None:
        super().__init__(_PROGRAM, [], "ready", cwd=folder)

    def append(self, path: Path, entry: dict[str, Any]) -> None:
        line = serialize(entry).rstrip("\n")
        json.loads(line)  # one line of JSON, as Pi writes
        self.say(f"{path}\t{line}", "written")
