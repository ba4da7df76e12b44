"""The reference Pi (1.6) running on a session file in RPC mode, as a second writer of that file.

``RealPi(folder, session_file, agent_dir)`` starts ``pi --mode rpc --session FILE`` in ``folder`` and returns
once it is ready; ``name_session`` has it append a ``session_info`` entry (the file changes by Pi's own
append) and returns once Pi has answered. Needs the reference implementation (see ``reference``).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from tests.support.reference import NODE, PI_DIST

CLI = PI_DIST / "bundle" / "cli.js"


class RealPi:
    def __init__(self, folder: Path, session_file: Path, agent_dir: Path) -> None:
        env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
        env.update({"HOME": str(agent_dir.parent), "PI_CODING_AGENT_DIR": str(agent_dir)})
        self.process = subprocess.Popen(
            [str(NODE), str(CLI), "--mode", "rpc", "--session", str(session_file)],
            cwd=folder,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        self._next = 0
        self.command({"type": "get_state"})  # answered once the session is loaded

    @property
    def pid(self) -> int:
        return self.process.pid

    def command(self, command: dict[str, Any]) -> dict[str, Any]:
        """Send one RPC command and return Pi's response to it (events before it are skipped)."""
        assert self.process.stdin is not None and self.process.stdout is not None
        self._next += 1
        wanted = str(self._next)
        self.process.stdin.write(json.dumps({**command, "id": wanted}) + "\n")
        self.process.stdin.flush()
        while True:
            line = self.process.stdout.readline()
            if not line:
                raise RuntimeError(f"Pi ended before answering {command['type']}")
            message = json.loads(line)
            if message.get("type") == "response" and message.get("id") == wanted:
                assert message.get("success"), message
                return dict(message)

    def name_session(self, name: str) -> None:
        self.command({"type": "set_session_name", "name": name})

    def stop(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        self.process.wait(timeout=30)
        if self.process.stdout is not None:
            self.process.stdout.close()

    def __enter__(self) -> RealPi:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.process.poll() is None:
            self.stop()
