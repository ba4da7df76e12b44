"""A second piwork process holding a session file open for writing, to test a second opener against it.

``PiworkHolder`` opens the file with piwork's store in a child process (which takes the writer lock), then on
request appends a user message to it or lets the file go (the process keeps running), each returning once
done.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

from tests.support.line_driven_process import LineDrivenProcess

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


class PiworkHolder(LineDrivenProcess):
    def __init__(self, path: Path) -> None:
        super().__init__(_PROGRAM, [str(path)], "holding")

    def append(self, text: str) -> None:
        self.say(f"append {text}", "done")

    def let_go(self) -> None:
        self.say("close", "done")
