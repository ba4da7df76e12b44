"""A second piwork process holding a session file open for writing, to test a second opener against it.

``PiworkHolder`` opens the file with piwork's store in a child process (which takes the writer lock), then on
request appends a user message to it or lets the file go (the process keeps running), each returning once
done.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

_PROGRAM = textwrap.dedent(
    """
    import sys
    from piwork.core.session.store import open_session
    session = open_session(sys.argv[1])
    print("read-only" if session.read_only else "holding", flush=True)
    for line in sys.stdin:
        command, _, text = line.rstrip("\\n").partition(" ")
        if command == "append":
            session.tree.append_message({"role": "user", "content": text, "timestamp": 1})
        elif command == "close":
            session.close()
        print("done", flush=True)
    """
)


class PiworkHolder:
    def __init__(self, path: Path) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", _PROGRAM, str(path)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout is not None
        assert self.process.stdout.readline().strip() == "holding"

    @property
    def pid(self) -> int:
        return self.process.pid

    def _say(self, line: str) -> None:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(line + "\n")
        self.process.stdin.flush()
        assert self.process.stdout.readline().strip() == "done"

    def append(self, text: str) -> None:
        self._say(f"append {text}")

    def let_go(self) -> None:
        self._say("close")

    def stop(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        self.process.wait(timeout=10)
        if self.process.stdout is not None:
            self.process.stdout.close()

    def __enter__(self) -> PiworkHolder:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.process.poll() is None:
            self.stop()
