"""Running a shell command in its own process group, streaming merged output, killing the group."""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import shutil
import signal
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from piwork.core.tools.base import ToolError

SESSION_ENV_KEYS = ("PI_SESSION_ID", "PI_SESSION_FILE", "PI_PROVIDER", "PI_MODEL", "PI_REASONING_LEVEL")
EXIT_IDLE_GRACE = 0.1  # seconds without data after the shell exited before we stop reading
EXIT_DRAIN_CAP = 5.0  # never keep reading for longer than this after the shell exited
KILL_GRACE = 1.0  # seconds between SIGTERM and SIGKILL
PIPE_SIZE = 1 << 20  # bytes of pipe buffer asked for (Linux); bigger reads, fewer wake-ups


@dataclass(frozen=True, slots=True)
class ShellConfig:
    shell: str
    args: tuple[str, ...]


def shell_config(custom_shell_path: str | None = None) -> ShellConfig:
    """``/bin/bash``, else ``bash`` on PATH, else ``sh``; a configured shell path wins."""
    if custom_shell_path:
        if os.path.exists(custom_shell_path):
            return ShellConfig(custom_shell_path, ("-c",))
        raise ToolError(f"Custom shell path not found: {custom_shell_path}")
    if os.path.exists("/bin/bash"):
        return ShellConfig("/bin/bash", ("-c",))
    on_path = shutil.which("bash")
    return ShellConfig(on_path, ("-c",)) if on_path else ShellConfig("sh", ("-c",))


def shell_env(
    bin_dir: str | None, session_env: Mapping[str, str], base: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The user's environment, the agent ``bin`` dir first on PATH, session variables from the session."""
    env = dict(base if base is not None else os.environ)
    if bin_dir:
        entries = [p for p in env.get("PATH", "").split(os.pathsep) if p]
        if bin_dir not in entries:
            env["PATH"] = os.pathsep.join([bin_dir, *entries])
    for key in SESSION_ENV_KEYS:
        env.pop(key, None)
        value = session_env.get(key)
        if value:
            env[key] = value
    return env


@dataclass(frozen=True, slots=True)
class ExitStatus:
    code: int | None
    signal_name: str | None
    timed_out: bool
    aborted: bool
    # timed out after the shell itself exited (background jobs it started kept writing to the output
    # until the deadline): the shell's exit code and how many seconds in it exited (to a tenth)
    shell_exit: tuple[int, float] | None = None


class _OutputReader(asyncio.Protocol):
    """Receives the merged output pipe; remembers when data last arrived and when the pipe closed."""

    def __init__(self, on_data: Callable[[bytes], None]) -> None:
        self._on_data = on_data
        self.last_data = time.monotonic()
        self.closed = asyncio.Event()

    def data_received(self, data: bytes) -> None:
        self.last_data = time.monotonic()
        self._on_data(data)

    def eof_received(self) -> bool | None:
        return None

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed.set()


def _output_pipe() -> tuple[int, int]:
    """A pipe for the command's stdout and stderr, enlarged on Linux so reads come in bigger chunks."""
    read_fd, write_fd = os.pipe()
    if hasattr(fcntl, "F_SETPIPE_SZ"):
        with contextlib.suppress(OSError):
            fcntl.fcntl(read_fd, fcntl.F_SETPIPE_SZ, PIPE_SIZE)
    os.set_inheritable(read_fd, False)
    return read_fd, write_fd


def _signal_group(pid: int, sig: int) -> None:
    try:
        os.killpg(pid, sig)
    except (ProcessLookupError, PermissionError):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)


def _group_alive(pid: int) -> bool:
    try:
        os.killpg(pid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    return True


async def kill_group(pid: int, grace: float = KILL_GRACE) -> None:
    """SIGTERM the whole process group, then SIGKILL whatever is left after ``grace`` seconds."""
    _signal_group(pid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while _group_alive(pid) and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    if _group_alive(pid):
        _signal_group(pid, signal.SIGKILL)


async def run_shell(
    command: str,
    cwd: str,
    env: Mapping[str, str],
    on_data: Callable[[bytes], None],
    config: ShellConfig,
    timeout: float | None = None,
    kill_grace: float = KILL_GRACE,
    keep_background: bool = False,
) -> ExitStatus:
    """Run ``command``; stdout and stderr arrive merged in order through ``on_data``.

    Cancellation kills the process group and returns an aborted status instead of raising, so the
    caller can still report the output gathered so far. Jobs the command left running in the
    background (its process group) are ended with it unless ``keep_background``.
    """
    if not os.path.isdir(cwd):
        raise ToolError(f"Working directory does not exist: {cwd}\nCannot execute bash commands.")
    loop = asyncio.get_running_loop()
    read_fd, write_fd = _output_pipe()
    try:
        process = await asyncio.create_subprocess_exec(
            config.shell,
            *config.args,
            command,
            cwd=cwd,
            env=dict(env),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=write_fd,
            stderr=write_fd,  # one pipe for both keeps their arrival order
            start_new_session=True,
        )
    except BaseException:
        os.close(read_fd)
        raise
    finally:
        os.close(write_fd)
    pid = process.pid
    pipe = os.fdopen(read_fd, "rb", 0)
    try:
        transport, reader = await loop.connect_read_pipe(lambda: _OutputReader(on_data), pipe)
        if isinstance(getattr(transport, "max_size", None), int):
            transport.max_size = PIPE_SIZE  # type: ignore[attr-defined]  # read up to a full pipe at once
    except BaseException:
        pipe.close()
        _signal_group(pid, signal.SIGKILL)
        raise
    timed_out = False
    aborted = False
    started = time.monotonic()
    exited_after: float | None = None
    try:
        try:
            await asyncio.wait_for(process.wait(), timeout)
            exited_after = time.monotonic() - started
        except TimeoutError:
            timed_out = True
            await kill_group(pid, kill_grace)
            await process.wait()
        except asyncio.CancelledError:
            aborted = True
            await kill_group(pid, kill_grace)
            await process.wait()
        reader.last_data = max(reader.last_data, time.monotonic())  # the idle grace starts at exit
        try:
            deadline = started + timeout if timeout is not None and not timed_out else None
            if not await _drain(reader, deadline):
                timed_out = True  # the deadline came while the shell's background jobs kept writing
                await kill_group(pid, kill_grace)
        except asyncio.CancelledError:  # aborted while children still held the output open
            aborted = True
            await kill_group(pid, kill_grace)
        if not keep_background and _group_alive(pid):
            await kill_group(pid, kill_grace)
    finally:
        transport.close()
        if process.returncode is None:
            _signal_group(pid, signal.SIGKILL)
    code = process.returncode
    name: str | None = None
    if code is not None and code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"SIG{-code}"
        # a shell killed by a signal has no exit status: report it as shells do, 128 + the signal number
        code = 128 - code
    shell_exit = None
    if timed_out and exited_after is not None and code is not None:
        shell_exit = (code, round(exited_after * 10) / 10)
    return ExitStatus(code, name, timed_out, aborted, shell_exit)


async def _drain(reader: _OutputReader, deadline: float | None = None) -> bool:
    """After exit, read until the pipe closes or falls idle (a daemon may hold it open). False when the
    command's ``deadline`` came first, output still arriving."""
    cap = time.monotonic() + EXIT_DRAIN_CAP
    while not reader.closed.is_set():
        now = time.monotonic()
        wait = min(reader.last_data + EXIT_IDLE_GRACE, cap) - now
        if wait <= 0:
            return True
        if deadline is not None and deadline <= now + wait:
            if deadline <= now:
                return False
            wait = deadline - now
        try:
            await asyncio.wait_for(reader.closed.wait(), wait)
        except TimeoutError:
            continue
    return True
