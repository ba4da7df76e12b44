"""Commands the user runs directly (``!cmd`` / ``!!cmd``), recorded as ``bashExecution`` messages.

Unlike the bash tool, the collected text is cleaned for display: ANSI escape sequences, control
characters (other than tab and newline) and carriage returns are removed. A rolling buffer keeps about
100 K characters; once more than 50 KiB arrived, the cleaned text also goes to a private log file.
"""

from __future__ import annotations

import codecs
import contextlib
import os
import re
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from piwork.core.tools.logs import create_log_file, write_log_metadata
from piwork.core.tools.shell import KILL_GRACE, run_shell, shell_config, shell_env
from piwork.core.truncate import DEFAULT_MAX_BYTES, truncate_tail

_ANSI = re.compile(
    r"\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)"  # OSC ... BEL / ST
    r"|[\x1b\x9b][\[\]()#;?]*(?:\d{1,4}(?:[;:]\d{0,4})*)?[\dA-PR-TZcf-nq-uy=><~]"  # CSI and friends
)
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\ufff9-\ufffb]")


def clean_output(text: str) -> str:
    """Display-safe text: no ANSI sequences, no control characters except tab and newline."""
    return _CONTROL.sub("", _ANSI.sub("", text))


@dataclass(frozen=True, slots=True)
class UserCommandResult:
    """The fields of a ``bashExecution`` message (``exit_code`` is ``None`` when cancelled)."""

    output: str
    exit_code: int | None
    cancelled: bool
    truncated: bool
    full_output_path: str | None

    def message(self, command: str, timestamp_ms: int, exclude_from_context: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {
            "role": "bashExecution",
            "command": command,
            "output": self.output,
            "cancelled": self.cancelled,
            "truncated": self.truncated,
            "timestamp": timestamp_ms,
        }
        if self.exit_code is not None:
            out["exitCode"] = self.exit_code
        if self.full_output_path is not None:
            out["fullOutputPath"] = self.full_output_path
        if exclude_from_context:
            out["excludeFromContext"] = True
        return out


@dataclass
class _Collector:
    log_dir: Path | None
    on_chunk: Callable[[str], None] | None
    chunks: deque[str] = field(default_factory=deque)
    chars: int = 0
    raw_bytes: int = 0
    spill: BinaryIO | None = None
    spill_path: str | None = None
    failed: bool = False  # the log could not be written (full disk): the tail alone is kept

    def __post_init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")

    def data(self, raw: bytes) -> None:
        self.raw_bytes += len(raw)
        self._add(self._decoder.decode(raw))

    def finish(self) -> None:
        self._add(self._decoder.decode(b"", final=True))

    def _add(self, decoded: str) -> None:
        text = clean_output(decoded)
        if self.raw_bytes > DEFAULT_MAX_BYTES:
            self.ensure_spill()
        if self.spill is not None:
            self._write(text)
        if not text:
            return
        self.chunks.append(text)
        self.chars += len(text)
        while self.chars > DEFAULT_MAX_BYTES * 2 and len(self.chunks) > 1:
            self.chars -= len(self.chunks.popleft())
        if self.on_chunk is not None:
            self.on_chunk(text)

    def ensure_spill(self) -> None:
        if self.spill_path is not None or self.failed:
            return
        try:
            self.spill_path, self.spill = create_log_file(self.log_dir, "shell")
        except OSError:
            self.give_up()
            return
        for chunk in self.chunks:
            self._write(chunk)

    def _write(self, text: str) -> None:
        if self.spill is None:
            return
        try:
            self.spill.write(text.encode("utf-8"))
        except OSError:
            self.give_up()

    def close(self) -> None:
        spill, self.spill = self.spill, None
        if spill is not None:
            try:
                spill.close()
            except OSError:
                self.give_up()

    def give_up(self) -> None:
        """No log after all: remove the partial file (giving its space back) and keep the tail."""
        self.failed = True
        spill, self.spill = self.spill, None
        if spill is not None:
            with contextlib.suppress(OSError):
                spill.close()
        if self.spill_path is not None:
            with contextlib.suppress(OSError):
                os.unlink(self.spill_path)
        self.spill_path = None


async def run_user_command(
    command: str,
    cwd: str,
    *,
    log_dir: Path | None = None,
    shell_path: str | None = None,
    command_prefix: str | None = None,
    bin_dir: str | None = None,
    session_env: Mapping[str, str] | None = None,
    on_chunk: Callable[[str], None] | None = None,
    kill_grace: float = KILL_GRACE,
) -> UserCommandResult:
    """Run the user's command; cancelling the awaiting task stops it and returns a cancelled result."""
    config = shell_config(shell_path)
    full_command = f"{command_prefix}\n{command}" if command_prefix else command
    env = shell_env(bin_dir, session_env or {})
    collector = _Collector(log_dir, on_chunk)
    try:
        status = await run_shell(
            full_command, cwd, env, collector.data, config, None, kill_grace, keep_background=True
        )
    finally:
        collector.finish()
    joined = "".join(collector.chunks)
    tail = truncate_tail(joined)
    if tail.truncated:
        collector.ensure_spill()
    collector.close()
    if collector.spill_path is not None:
        meta = {"tool": "user-shell", "command": command, "finishedAt": int(time.time() * 1000)}
        meta.update(exitCode=status.code, signal=status.signal_name, aborted=status.aborted)
        with contextlib.suppress(OSError):  # the log is written; its description is a nicety
            write_log_metadata(collector.spill_path, meta)
    return UserCommandResult(
        output=tail.content if tail.truncated else joined,
        exit_code=None if status.aborted else status.code,
        cancelled=status.aborted,
        truncated=tail.truncated,
        full_output_path=collector.spill_path,
    )
