"""SIGTERM ends a headless run in bounded time, even when a tool step is stuck in a system call."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import time
from pathlib import Path

from tests.support.loopback_server import LoopbackServer, Text, ToolCall, Turn

from .test_headless import Env, env, server  # noqa: F401 (fixtures)


def _wait_for(proc: subprocess.Popen[str], event_type: str) -> None:
    assert proc.stdout is not None
    for line in proc.stdout:
        if json.loads(line).get("type") == event_type:
            return
    raise AssertionError(f"no {event_type} event before the end of output")


def test_sigterm_ends_a_run_whose_write_is_stuck_on_a_full_fifo(
    server: LoopbackServer,  # noqa: F811
    env: Env,  # noqa: F811
) -> None:
    fifo = env.cwd / "pipe"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # holds the pipe open and never reads
    try:
        content = "x" * (1024 * 1024)  # far more than a pipe buffer holds
        server.script(Turn([ToolCall("write", {"path": "pipe", "content": content})]), Turn([Text("done")]))
        proc = env.popen("-p", "fill the pipe", "--mode", "json", *env.args(server, "anthropic"))
        _wait_for(proc, "tool_execution_start")
        time.sleep(0.5)  # let the write reach the full pipe
        started = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        try:
            _, err = proc.communicate(timeout=30)
        finally:
            proc.kill()
        assert proc.returncode == 143, err
        assert time.monotonic() - started < 20
        assert "interrupted" in err
    finally:
        os.close(reader)
    assert stat.S_ISFIFO(fifo.lstat().st_mode)


def test_sigterm_mid_command_kills_its_process_group_and_exits(
    server: LoopbackServer,  # noqa: F811
    env: Env,  # noqa: F811
    tmp_path: Path,
) -> None:
    marker = tmp_path / "child.pid"
    command = f"(sleep 300 & echo $! > {marker}; wait) ; sleep 300"
    server.script(Turn([ToolCall("bash", {"command": command})]), Turn([Text("done")]))
    proc = env.popen("-p", "wait", "--mode", "json", *env.args(server, "anthropic"))
    _wait_for(proc, "tool_execution_start")
    deadline = time.monotonic() + 20
    while not (marker.exists() and marker.read_text().strip()) and time.monotonic() < deadline:
        time.sleep(0.05)
    child = int(marker.read_text())
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 143, err
    deadline = time.monotonic() + 10
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(child)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False
