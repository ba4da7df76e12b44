"""The ``bash`` tool: run a command, stream a bounded tail, keep the full output in a private log."""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Protocol

from piwork.core.jscompat import js_number_str
from piwork.core.output import OutputAccumulator, OutputSnapshot
from piwork.core.redaction import StreamRedactor
from piwork.core.tools.base import Tool, ToolContext, ToolError, ToolFacts, ToolResult, UpdateCallback
from piwork.core.tools.logs import (
    DEFAULT_LOGS_MAX_TOTAL_MB,
    create_log_file,
    enforce_size_cap,
    fallback_log_dir,
    write_log_metadata,
)
from piwork.core.tools.shell import KILL_GRACE, ExitStatus, run_shell, shell_config, shell_env
from piwork.core.truncate import DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, format_size

MAX_TIMEOUT_SECONDS = 2147483.647
UPDATE_THROTTLE = 0.1  # seconds between streaming updates


class CommandGate(Protocol):
    """Decides around a command's run (the verifier gate may answer with a receipt instead)."""

    async def around(
        self, command: str, ctx: ToolContext, run: Callable[[], Awaitable[ToolResult]]
    ) -> ToolResult: ...


@dataclass(frozen=True, slots=True)
class BashOptions:
    """Settings for the bash tool: ``shellPath``, ``shellCommandPrefix``, the agent ``bin`` dir, log cap."""

    shell_path: str | None = None
    command_prefix: str | None = None
    bin_dir: str | None = None
    logs_max_total_mb: float = DEFAULT_LOGS_MAX_TOTAL_MB
    kill_grace: float = KILL_GRACE
    gate: CommandGate | None = None


def check_timeout(timeout: float | None) -> float | None:
    if timeout is None:
        return None
    if not math.isfinite(timeout) or timeout <= 0:
        raise ToolError("Invalid timeout: must be a finite number of seconds")
    if timeout * 1000 > MAX_TIMEOUT_SECONDS * 1000:
        raise ToolError(f"Invalid timeout: maximum is {js_number_str(MAX_TIMEOUT_SECONDS)} seconds")
    return float(timeout)


class _Updates:
    """Throttled streaming updates (at most one per :data:`UPDATE_THROTTLE`)."""

    def __init__(self, output: OutputAccumulator, on_update: UpdateCallback | None) -> None:
        self._output = output
        self._on_update = on_update
        self._last = 0.0
        self._dirty = False
        self._timer: asyncio.TimerHandle | None = None
        self.active = True

    def data(self, chunk: bytes) -> None:
        if not self.active:
            return
        self._output.append(chunk)
        if self._on_update is None:
            return
        self._dirty = True
        delay = UPDATE_THROTTLE - (time.monotonic() - self._last)
        if delay <= 0:
            self.cancel_timer()
            self.emit()
        elif self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(delay, self._fire)

    def _fire(self) -> None:
        self._timer = None
        self.emit()

    def cancel_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def emit(self) -> None:
        if self._on_update is None or not self._dirty:
            return
        self._dirty = False
        self._last = time.monotonic()
        snap = self._output.snapshot(persist_if_truncated=True)
        details: dict[str, Any] = {}
        if snap.truncation.truncated:
            details = _log_details(snap)
        self._on_update(ToolResult.text(snap.content, details or None))


def format_output(snap: OutputSnapshot, shown_line_bytes: int, empty_text: str) -> str:
    """The model-facing text: the kept tail plus one truncation notice."""
    text = snap.content or empty_text
    t = snap.truncation
    if not t.truncated:
        return text
    start = t.total_lines - t.output_lines + 1
    end = t.total_lines
    where = _full_output_note(snap)
    if t.last_line_partial:
        text += (
            f"\n\n[Showing last {format_size(t.output_bytes)} of line {end} "
            f"(line is {format_size(shown_line_bytes)}). {where}]"
        )
    elif t.truncated_by == "lines":
        text += f"\n\n[Showing lines {start}-{end} of {t.total_lines}. {where}]"
    else:
        text += (
            f"\n\n[Showing lines {start}-{end} of {t.total_lines} "
            f"({format_size(DEFAULT_MAX_BYTES)} limit). {where}]"
        )
    return text


def _full_output_note(snap: OutputSnapshot) -> str:
    if snap.full_output_path is None and snap.log_problem is not None:
        return f"The full output could not be saved: {snap.log_problem}"
    if snap.log_capped_at is not None:
        return f"Full output (first {format_size(snap.log_capped_at)} only, logs.maxTotalMB): {snap.full_output_path}"
    return f"Full output: {snap.full_output_path}"


def _log_details(snap: OutputSnapshot) -> dict[str, Any]:
    details: dict[str, Any] = {
        "truncation": snap.truncation.to_json(),
        "fullOutputPath": snap.full_output_path,
    }
    if snap.log_problem is not None:
        details["fullOutputProblem"] = snap.log_problem
    if snap.log_capped_at is not None:
        details["fullOutputCappedAt"] = snap.log_capped_at
    return details


def _with_status(text: str, status: str) -> str:
    return f"{text}\n\n{status}" if text else status


class BashTool(Tool):
    name = "bash"
    facts = ToolFacts(command_argument="command", keeps_output_tail=True)
    description = (
        "Run a bash command in the session's working directory and return its combined stdout and "
        f"stderr. Only the last {DEFAULT_MAX_LINES} lines or {DEFAULT_MAX_BYTES // 1024}KB of output are "
        "returned (whichever limit comes first); when output is cut, the complete output is saved to a "
        "log file whose path is given. An optional timeout in seconds stops long-running commands."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "required": ["command"],
        "properties": {
            "command": {"type": "string", "description": "The bash command to run"},
            "timeout": {"type": "number", "description": "Timeout in seconds (optional; none by default)"},
        },
    }
    snippet = "Run shell commands (builds, tests, git, searching and listing files)"
    strict = True
    guidelines = ("PI_* environment variables describe the current session and model.",)

    def __init__(self, options: BashOptions | None = None) -> None:
        self.options = options or BashOptions()

    async def execute(
        self, call_id: str, args: dict[str, Any], ctx: ToolContext, on_update: UpdateCallback | None = None
    ) -> ToolResult:
        gate = self.options.gate
        if gate is None:
            return await self._execute(call_id, args, ctx, on_update)
        return await gate.around(args["command"], ctx, lambda: self._execute(call_id, args, ctx, on_update))

    async def _execute(
        self, call_id: str, args: dict[str, Any], ctx: ToolContext, on_update: UpdateCallback | None
    ) -> ToolResult:
        command: str = args["command"]
        timeout = check_timeout(args.get("timeout"))
        config = shell_config(self.options.shell_path)
        if self.options.command_prefix:
            command = f"{self.options.command_prefix}\n{command}"
        env = shell_env(self.options.bin_dir, ctx.session_env)
        log_dir = ctx.log_dir
        output = OutputAccumulator(
            lambda: create_log_file(log_dir, "bash"),
            max_log_bytes=int(self.options.logs_max_total_mb * 1024 * 1024),
            redactor=StreamRedactor(ctx.secrets) if ctx.secrets else None,
        )
        updates = _Updates(output, on_update)
        if on_update is not None:
            on_update(ToolResult([], None))
        status: ExitStatus | None = None
        try:
            status = await run_shell(
                command, ctx.cwd, env, updates.data, config, timeout, self.options.kill_grace
            )
        finally:
            updates.active = False
            updates.cancel_timer()
            output.finish()
            updates.emit()
            snap = output.snapshot(persist_if_truncated=True)
            output.close()
            if snap.full_output_path is not None:
                self._record_log(snap, call_id, args["command"], status, log_dir)
        return self._result(snap, output.last_line_bytes, status, args.get("timeout"))

    def _result(self, snap: OutputSnapshot, line_bytes: int, status: ExitStatus, timeout: Any) -> ToolResult:
        details: dict[str, Any] = {}
        if snap.truncation.truncated:
            details = _log_details(snap)
        if status.aborted or status.timed_out:
            text = format_output(snap, line_bytes, "")
            if status.aborted:
                details["aborted"] = True
                raise ToolError(_with_status(text, "Command aborted"), details, aborted=True)
            details["timedOut"] = True
            said = f"Command timed out after {js_number_str(timeout)} seconds"
            if status.shell_exit is not None:  # the command's own result matters too
                code, after = status.shell_exit
                said += (
                    f". The shell exited with code {code} after {js_number_str(after)} seconds, but "
                    "background processes it started kept writing output until the timeout."
                )
            raise ToolError(_with_status(text, said), details)
        text = format_output(snap, line_bytes, "(no output)")
        if status.signal_name is not None:
            details["signal"] = status.signal_name
        if status.code != 0:
            details["exitCode"] = status.code
            raise ToolError(_with_status(text, f"Command exited with code {status.code}"), details)
        return ToolResult.text(text, details or None)

    def _record_log(
        self,
        snap: OutputSnapshot,
        call_id: str,
        command: str,
        status: ExitStatus | None,
        log_dir: Path | None,
    ) -> None:
        meta: dict[str, Any] = {
            "tool": self.name,
            "toolCallId": call_id,
            "command": command,
            "finishedAt": int(time.time() * 1000),
            "truncation": {k: v for k, v in snap.truncation.to_json().items() if k != "content"},
        }
        if status is not None:
            meta.update(
                exitCode=status.code,
                signal=status.signal_name,
                timedOut=status.timed_out,
                aborted=status.aborted,
            )
        try:
            write_log_metadata(snap.full_output_path or "", meta)
            root = log_dir.parent if log_dir is not None else fallback_log_dir()
            cap = int(self.options.logs_max_total_mb * 1024 * 1024)
            enforce_size_cap(root, cap, keep=frozenset({snap.full_output_path or ""}))
        except OSError:
            pass  # the log itself is written; bookkeeping problems must not fail the command
