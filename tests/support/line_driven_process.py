"""A child Python program driven a line at a time: it prints a first word once ready, then answers each
line on its stdin with one word. The second writers of the session-owner tests are built on it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Self


class LineDrivenProcess:
    def __init__(self, program: str, args: list[str], ready: str, cwd: Path | None = None) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", program, *args],
            cwd=cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout is not None
        assert self.process.stdout.readline().strip() == ready

    @property
    def pid(self) -> int:
        return self.process.pid

    def say(self, line: str, answer: str) -> None:
        """Send ``line`` and wait for the program's ``answer``."""
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(line + "\n")
        self.process.stdin.flush()
        assert self.process.stdout.readline().strip() == answer

    def stop(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        self.process.wait(timeout=10)
        if self.process.stdout is not None:
            self.process.stdout.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.process.poll() is None:
            self.stop()
