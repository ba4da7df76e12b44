"""A full-output log that cannot be written: the command still finishes and says so, with its tail.

A real small file system (tmpfs with ``size=``) is mounted when the tests run as root; a writer that
fails with ENOSPC at the OS call stands in elsewhere. ``logs.maxTotalMB`` bounds the log being written.
"""

from __future__ import annotations

import asyncio
import errno
import os
import subprocess
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

import pytest

from piwork.core.output import OutputAccumulator
from piwork.core.tools.base import ToolContext, ToolError, ToolResult
from piwork.core.tools.bash import BashOptions, BashTool

BIG_OUTPUT = "head -c 3000000 /dev/zero | tr '\\0' 'x'; echo; seq 1 3000"


@pytest.fixture
def tiny_fs(tmp_path: Path) -> Iterator[Path]:
    mount = tmp_path / "tiny"
    mount.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root (the injected-writer test covers this case)")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=512k,mode=0700", "tmpfs", str(mount)])
    if done.returncode != 0:
        pytest.skip("tmpfs cannot be mounted here")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=True)


def _run(tool: BashTool, command: str, log_dir: Path, cwd: Path) -> ToolResult | ToolError:
    async def go() -> ToolResult | ToolError:
        try:
            return await asyncio.wait_for(
                tool.execute("call-1", {"command": command}, ToolContext(cwd=str(cwd), log_dir=log_dir)), 60
            )
        except ToolError as err:
            return err

    return asyncio.run(go())


def _text(result: ToolResult | ToolError) -> str:
    if isinstance(result, ToolError):
        return str(result)
    return "".join(block["text"] for block in result.content if block["type"] == "text")


def test_a_full_disk_keeps_the_tail_and_says_the_log_could_not_be_written(
    tiny_fs: Path, tmp_path: Path
) -> None:
    log_dir = tiny_fs / "logs" / "session"
    tracemalloc.start()
    try:
        result = _run(BashTool(), BIG_OUTPUT, log_dir, tmp_path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert isinstance(result, ToolResult), _text(result)
    body = _text(result)
    assert body.endswith(
        "2999\n3000\n\n[Showing lines 1002-3001 of 3001. "
        "The full output could not be saved: ENOSPC: no space left on device]"
    )
    assert result.details is not None and result.details["fullOutputPath"] is None
    assert "no space left" in result.details["fullOutputProblem"]
    assert list(log_dir.glob("*.log")) == []  # the partial log is removed, the space given back
    assert peak < 32 * 1024**2


class _FullDisk:
    """A writable handle whose writes fail with ENOSPC after ``room`` bytes, as the OS reports it."""

    def __init__(self, path: Path, room: int) -> None:
        self.handle: BinaryIO = open(path, "wb")  # noqa: SIM115 (closed by close())
        self.room = room

    def write(self, data: bytes) -> int:
        if len(data) > self.room:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        self.room -= len(data)
        return self.handle.write(data)

    def flush(self) -> None:
        self.handle.flush()

    def close(self) -> None:
        self.handle.close()


def test_an_accumulator_whose_log_fills_the_disk_goes_on_in_memory(tmp_path: Path) -> None:
    path = tmp_path / "out.log"
    opened: list[_FullDisk] = []

    def open_spill() -> tuple[str, BinaryIO]:
        opened.append(_FullDisk(path, 100_000))
        return str(path), opened[-1]  # type: ignore[return-value]

    output = OutputAccumulator(open_spill)
    for i in range(20_000):
        output.append(b"line %d\n" % i)
    output.finish()
    snap = output.snapshot(persist_if_truncated=True)
    output.close()
    assert len(opened) == 1  # tried once, not again and again
    assert snap.full_output_path is None and snap.log_problem is not None
    assert "no space left on device" in snap.log_problem
    assert snap.content.endswith("line 19999\n") or snap.content.endswith("line 19999")
    assert not path.exists()


def test_the_log_being_written_stops_at_the_logs_size_cap(tmp_path: Path) -> None:
    log_dir = tmp_path / "logs" / "session"
    tool = BashTool(BashOptions(logs_max_total_mb=1))
    result = _run(tool, BIG_OUTPUT, log_dir, tmp_path)
    assert isinstance(result, ToolResult)
    (log,) = log_dir.glob("*.log")
    assert log.stat().st_size == 1024 * 1024
    assert result.details is not None and result.details["fullOutputPath"] == str(log)
    assert _text(result).endswith(
        f"[Showing lines 1002-3001 of 3001. Full output (first 1.0MB only, logs.maxTotalMB): {log}]"
    )


def test_a_user_command_on_a_full_disk_keeps_its_tail(tiny_fs: Path, tmp_path: Path) -> None:
    from piwork.core.tools.user_shell import run_user_command

    result = asyncio.run(run_user_command(BIG_OUTPUT, str(tmp_path), log_dir=tiny_fs / "logs"))
    assert result.exit_code == 0 and result.truncated and result.full_output_path is None
    assert result.output.endswith("2999\n3000")
    assert list((tiny_fs / "logs").glob("*.log")) == []
