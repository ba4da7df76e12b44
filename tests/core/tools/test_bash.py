"""The bash tool against real processes: output, exit status, limits, logs, timeout and abort."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import time
from pathlib import Path
from typing import Any

import pytest

from piwork.core.tools.base import ToolContext, ToolResult
from piwork.core.tools.bash import BashOptions, BashTool
from piwork.core.tools.logs import list_session_logs

from .helpers import call, text


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_stdout_and_stderr_are_merged_in_order(tmp_path: Path) -> None:
    out = call("bash", {"command": "echo one; echo two >&2; echo three"}, tmp_path)
    assert not out.is_error and text(out) == "one\ntwo\nthree\n" and out.details is None


def test_runs_in_the_session_cwd_with_session_variables(tmp_path: Path) -> None:
    env = {"PI_SESSION_ID": "abc", "PI_MODEL": "m1"}
    out = call(
        "bash",
        {"command": "pwd; echo $PI_SESSION_ID $PI_MODEL ${PI_PROVIDER:-none}"},
        tmp_path,
        session_env=env,
    )
    assert text(out) == f"{tmp_path}\nabc m1 none\n"


@pytest.mark.parametrize(
    ("command", "expected", "details"),
    [
        ("exit 3", "(no output)\n\nCommand exited with code 3", {"exitCode": 3}),
        ("echo oops; exit 1", "oops\n\n\nCommand exited with code 1", {"exitCode": 1}),
        (
            "kill -TERM $$",
            "(no output)\n\nCommand exited with code 143",
            {"signal": "SIGTERM", "exitCode": 143},
        ),
        (
            "kill -KILL $$",
            "(no output)\n\nCommand exited with code 137",
            {"signal": "SIGKILL", "exitCode": 137},
        ),
    ],
)
def test_failures_are_errors_with_metadata(tmp_path: Path, command: str, expected: str, details: Any) -> None:
    out = call("bash", {"command": command}, tmp_path)
    assert out.is_error and text(out) == expected and out.details == details


def test_empty_output_and_invalid_utf8(tmp_path: Path) -> None:
    assert text(call("bash", {"command": "true"}, tmp_path)) == "(no output)"
    out = call("bash", {"command": r"printf 'a\xff\xfeb\n'"}, tmp_path)
    assert text(out) == "a\ufffd\ufffdb\n"


@pytest.mark.parametrize(
    ("timeout", "message"),
    [
        (0, "Invalid timeout: must be a finite number of seconds"),
        (-1, "Invalid timeout: must be a finite number of seconds"),
        (3e6, "Invalid timeout: maximum is 2147483.647 seconds"),
    ],
)
def test_invalid_timeouts(tmp_path: Path, timeout: float, message: str) -> None:
    out = call("bash", {"command": "true", "timeout": timeout}, tmp_path)
    assert out.is_error and text(out) == message


def test_missing_cwd(tmp_path: Path) -> None:
    gone = tmp_path / "gone"
    out = call("bash", {"command": "true"}, gone, log_dir=tmp_path / "logs")
    assert text(out) == f"Working directory does not exist: {gone}\nCannot execute bash commands."


def test_many_lines_keep_the_tail_and_log_everything(tmp_path: Path) -> None:
    logs = tmp_path / "logs" / "session-1"
    out = call("bash", {"command": "seq 1 3000"}, tmp_path, log_dir=logs)
    assert not out.is_error
    [log] = list_session_logs(logs)
    assert text(out).endswith(f"\n3000\n\n[Showing lines 1001-3000 of 3000. Full output: {log.path}]")
    assert text(out).startswith("1001\n")
    assert log.path.read_bytes() == "".join(f"{i}\n" for i in range(1, 3001)).encode()
    assert log.metadata["command"] == "seq 1 3000" and log.metadata["toolCallId"] == "call-1"
    assert log.metadata["exitCode"] == 0
    assert out.details is not None and out.details["fullOutputPath"] == str(log.path)
    assert out.details["truncation"]["totalLines"] == 3000


def test_bytes_limit_notice(tmp_path: Path) -> None:
    out = call("bash", {"command": "for i in $(seq 1 1000); do printf '%099d\\n' $i; done"}, tmp_path)
    body = text(out)
    assert body.endswith("(50.0KB limit). Full output: " + out.details["fullOutputPath"] + "]")  # type: ignore[index]
    assert "[Showing lines 489-1000 of 1000 (50.0KB limit)" in body


@pytest.mark.parametrize("count", [50_000, 150_000])
def test_single_huge_line_shows_its_tail_and_real_size(tmp_path: Path, count: int) -> None:
    command = f"yes é | head -n {count} | tr -d '\\n'; printf 'Z%.0s' $(seq 1 100000); echo"
    out = call("bash", {"command": command}, tmp_path)
    path = out.details["fullOutputPath"]  # type: ignore[index]
    size = Path(path).stat().st_size - 1
    notice = f"\n\n[Showing last 50.0KB of line 1 (line is {size / 1024:.1f}KB). Full output: {path}]"
    assert text(out) == "Z" * 51200 + notice
    assert Path(path).read_bytes() == "é".encode() * count + b"Z" * 100000 + b"\n"


def test_binary_output_is_logged_byte_for_byte(tmp_path: Path) -> None:
    blob = bytes(range(256)) * 400
    (tmp_path / "blob.bin").write_bytes(blob)
    out = call("bash", {"command": "cat blob.bin"}, tmp_path)
    assert not out.is_error
    assert Path(out.details["fullOutputPath"]).read_bytes() == blob  # type: ignore[index]


def test_timeout_kills_the_group_and_keeps_output(tmp_path: Path) -> None:
    started = time.monotonic()
    out = call("bash", {"command": "echo started; sleep 30 & echo $!; wait", "timeout": 0.5}, tmp_path)
    assert time.monotonic() - started < 10
    lines = text(out).split("\n")
    assert lines[0] == "started" and text(out).endswith("\n\nCommand timed out after 0.5 seconds")
    assert out.details == {"timedOut": True}
    assert not _alive(int(lines[1]))


def test_a_timeout_after_the_shell_exited_names_its_exit_code(tmp_path: Path) -> None:
    """The shell exits (code 3) but a background job it started keeps writing until the deadline: the
    timeout says both, and the job is ended with the group."""
    command = "(while true; do echo tick; sleep 0.05; done) & echo $! > bg.pid; exit 3"
    out = call("bash", {"command": command, "timeout": 1.5}, tmp_path)
    assert out.is_error and out.details is not None and out.details.get("timedOut") is True
    status = text(out).rsplit("\n\n", 1)[1]
    assert status.startswith("Command timed out after 1.5 seconds. The shell exited with code 3 after 0")
    assert status.endswith(
        "seconds, but background processes it started kept writing output until the timeout."
    )
    assert "tick" in text(out)
    assert not _alive(int((tmp_path / "bg.pid").read_text()))


def test_background_output_that_stops_before_the_deadline_is_not_a_timeout(tmp_path: Path) -> None:
    out = call("bash", {"command": "(sleep 0.05; echo late) & exit 0", "timeout": 5}, tmp_path)
    assert not out.is_error and text(out).strip() == "late"


async def _abort_after_output(
    tool: BashTool, command: str, ctx: ToolContext, marker: str
) -> tuple[Any, list[str]]:
    seen: list[str] = []
    ready = asyncio.Event()

    def on_update(partial: ToolResult) -> None:
        body = "".join(b["text"] for b in partial.content)
        seen.append(body)
        if marker in body:
            ready.set()

    task = asyncio.ensure_future(tool.execute("c", {"command": command}, ctx, on_update))
    await asyncio.wait_for(ready.wait(), 30)  # a hang guard only: generous for a loaded machine
    task.cancel()
    try:
        await task
    except Exception as err:  # the tool turns cancellation into its abort error
        return err, seen
    raise AssertionError("an aborted command must fail")


def test_abort_kills_forked_children_and_a_sigterm_ignoring_process(tmp_path: Path) -> None:
    tool = BashTool(BashOptions(kill_grace=0.3))
    ctx = ToolContext(cwd=str(tmp_path), log_dir=tmp_path / "logs")
    command = (
        "trap '' TERM; sleep 60 & echo child $!; (trap '' TERM; sleep 60) & echo child $!; echo ready; wait"
    )
    err, seen = asyncio.run(_abort_after_output(tool, command, ctx, "ready"))
    message = str(err)
    assert getattr(err, "aborted", False) and message.endswith("ready\n\n\nCommand aborted")
    pids = [int(line.split()[1]) for line in message.splitlines() if line.startswith("child ")]
    assert len(pids) == 2
    deadline = time.monotonic() + 5
    while any(_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(_alive(p) for p in pids)
    assert seen[0] == ""  # the initial empty update


def test_streaming_updates_are_throttled(tmp_path: Path) -> None:
    updates: list[ToolResult] = []
    tool = BashTool()
    ctx = ToolContext(cwd=str(tmp_path), log_dir=tmp_path / "logs")
    command = "for i in $(seq 1 30); do echo $i; sleep 0.02; done"
    started = time.monotonic()
    result = asyncio.run(tool.execute("c", {"command": command}, ctx, updates.append))
    elapsed = time.monotonic() - started
    assert updates[0].content == [] and len(updates) <= elapsed / 0.1 + 3
    assert "".join(b["text"] for b in updates[-1].content) == "".join(f"{i}\n" for i in range(1, 31))
    assert "".join(b["text"] for b in result.content).endswith("30\n")


def test_background_process_holding_the_pipe_does_not_hang(tmp_path: Path) -> None:
    started = time.monotonic()
    out = call("bash", {"command": "(sleep 30; echo late) & echo done"}, tmp_path)
    assert text(out) == "done\n" and time.monotonic() - started < 7
    os.killpg(os.getpgid(os.getpid()), 0)  # our own group is untouched


def test_custom_shell_and_prefix(tmp_path: Path) -> None:
    ctx = ToolContext(cwd=str(tmp_path), log_dir=tmp_path / "logs")
    missing = BashTool(BashOptions(shell_path=str(tmp_path / "nosh")))
    with pytest.raises(Exception, match="Custom shell path not found: "):
        asyncio.run(missing.execute("c", {"command": "true"}, ctx))
    prefixed = BashTool(BashOptions(shell_path="/bin/sh", command_prefix="X=from-prefix"))
    result = asyncio.run(prefixed.execute("c", {"command": "echo $X"}, ctx))
    assert result.content[0]["text"] == "from-prefix\n"


def test_log_sidecar_is_valid_json(tmp_path: Path) -> None:
    logs = tmp_path / "logs" / "s"
    call("bash", {"command": "seq 1 5000; exit 4"}, tmp_path, log_dir=logs)
    [log] = list_session_logs(logs)
    meta = json.loads(log.path.with_suffix(".json").read_text())
    assert meta["exitCode"] == 4 and meta["truncation"]["totalLines"] == 5000
    assert signal.SIGTERM  # keeps the import meaningful for readers of the abort test


def test_abort_while_a_background_child_keeps_writing(tmp_path: Path) -> None:
    tool = BashTool(BashOptions(kill_grace=0.3))
    ctx = ToolContext(cwd=str(tmp_path), log_dir=tmp_path / "logs")
    command = "(while true; do echo tick; sleep 0.05; done) & echo bg $!; echo ready"
    # abort once the parent has printed the child's pid and finished, while the child still writes
    # (waiting for the first "tick" alone raced the parent's "bg" line)
    err, _seen = asyncio.run(_abort_after_output(tool, command, ctx, "ready\ntick"))
    assert getattr(err, "aborted", False) and str(err).endswith("\n\nCommand aborted")
    pid = int(str(err).split("bg ")[1].split()[0])
    deadline = time.monotonic() + 5
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(pid)


def test_background_jobs_end_with_the_command(tmp_path: Path) -> None:
    pidfile = tmp_path / "job.pid"
    out = call(
        "bash", {"command": f"sleep 300 >/dev/null 2>&1 & echo $! > {pidfile}; echo started"}, tmp_path
    )
    assert not out.is_error and text(out) == "started\n"
    job = int(pidfile.read_text())
    deadline = time.monotonic() + 10
    while _alive(job) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not _alive(job)
