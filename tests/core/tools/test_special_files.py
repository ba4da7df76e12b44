"""write, read and edit against files that are not plain regular files, or are very large.

``write`` writes into the file that is there (as Pi does): a device, a FIFO or a symlink's target keeps
its inode and a read-only file is an error, never silently replaced. ``read`` and ``edit`` refuse what
is not a regular file and stay bounded in time and memory on huge or sparse files.
"""

from __future__ import annotations

import asyncio
import os
import random
import stat
import threading
import time
import tracemalloc
from pathlib import Path

import pytest

from piwork.core.tools import line_window
from piwork.core.tools.base import ToolContext, ToolError
from piwork.core.tools.mutation import PathLocks
from piwork.core.tools.write import WriteTool
from piwork.core.truncate import TruncationResult, format_size, truncate_head

from .helpers import call, text
from .test_permission_denied import _call as call_without_file_mode_bypass
from .test_permission_denied import workdir  # noqa: F401 (fixture)


def _null_device(folder: Path) -> Path:
    node = folder / "null-device"
    try:
        os.mknod(node, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except PermissionError:
        pytest.skip("creating a device node needs CAP_MKNOD")
    return node


def test_write_into_a_regular_file_keeps_its_inode_and_mode(tmp_path: Path) -> None:
    target = tmp_path / "run.sh"
    target.write_text("a much longer original content\n")
    target.chmod(0o751)
    inode = target.stat().st_ino
    out = call("write", {"path": "run.sh", "content": "short\n"}, tmp_path)
    assert not out.is_error, text(out)
    assert target.read_text() == "short\n"
    assert target.stat().st_ino == inode and stat.S_IMODE(target.stat().st_mode) == 0o751
    assert out.details == {"bytes": 6, "created": False}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.sh"]


def test_write_into_a_device_writes_through_it_and_keeps_the_node(tmp_path: Path) -> None:
    node = _null_device(tmp_path)
    out = call("write", {"path": node.name, "content": "into the void"}, tmp_path)
    assert not out.is_error, text(out)
    info = node.lstat()
    assert stat.S_ISCHR(info.st_mode) and info.st_rdev == os.makedev(1, 3)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["null-device"]


def test_write_through_a_symlink_to_a_device_keeps_both(tmp_path: Path) -> None:
    devices = tmp_path / "dev"
    devices.mkdir()
    node = _null_device(devices)
    (tmp_path / "link").symlink_to(node)
    out = call("write", {"path": "link", "content": "x"}, tmp_path)
    assert not out.is_error, text(out)
    assert (tmp_path / "link").is_symlink() and stat.S_ISCHR(node.lstat().st_mode)
    assert sorted(p.name for p in devices.iterdir()) == ["null-device"]


def test_write_into_a_fifo_feeds_its_reader(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received: list[bytes] = []
    reader_ready = threading.Event()

    def reader() -> None:
        fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
        reader_ready.set()
        chunks = []
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                chunk = os.read(fd, 65536)
            except BlockingIOError:
                time.sleep(0.01)
                continue
            if chunk:
                chunks.append(chunk)
            elif chunks:
                break
            else:
                time.sleep(0.01)
        os.close(fd)
        received.append(b"".join(chunks))

    thread = threading.Thread(target=reader)
    thread.start()
    reader_ready.wait(10)
    out = call("write", {"path": "pipe", "content": "through the pipe"}, tmp_path)
    thread.join(30)
    assert not out.is_error, text(out)
    assert received == [b"through the pipe"]
    assert stat.S_ISFIFO(fifo.lstat().st_mode)


def test_write_into_a_fifo_without_reader_fails_at_once(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    started = time.monotonic()
    out = call("write", {"path": "pipe", "content": "nobody listens"}, tmp_path)
    assert time.monotonic() - started < 10
    assert out.is_error and "ENXIO" in text(out) and "no process reads" in text(out)
    assert stat.S_ISFIFO(fifo.lstat().st_mode)


def test_write_through_a_symlink_writes_the_target_in_place(tmp_path: Path) -> None:
    real = tmp_path / "real.txt"
    real.write_text("old content")
    inode = real.stat().st_ino
    (tmp_path / "link.txt").symlink_to(real)
    out = call("write", {"path": "link.txt", "content": "new"}, tmp_path)
    assert not out.is_error
    assert (tmp_path / "link.txt").is_symlink() and real.read_text() == "new"
    assert real.stat().st_ino == inode


def test_write_into_a_directory_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "folder").mkdir()
    out = call("write", {"path": "folder", "content": "x"}, tmp_path)
    assert out.is_error and text(out).startswith("EISDIR")
    assert (tmp_path / "folder").is_dir()


def test_write_into_a_read_only_file_is_a_permission_error(workdir: Path) -> None:  # noqa: F811
    target = workdir / "ro.txt"
    target.write_text("keep me\n")
    target.chmod(0o444)
    out = call_without_file_mode_bypass("write", {"path": "ro.txt", "content": "replaced"}, workdir)
    assert out["isError"] and out["text"] == f"EACCES: permission denied, open '{target}'"
    assert target.read_text() == "keep me\n" and stat.S_IMODE(target.stat().st_mode) == 0o444


# -- read and edit ------------------------------------------------------------------------------


def test_read_of_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    started = time.monotonic()
    out = call("read", {"path": "pipe"}, tmp_path)
    assert time.monotonic() - started < 10
    assert out.is_error and text(out) == "Cannot read pipe: it is a FIFO (named pipe), not a regular file."


def test_read_of_a_device_is_refused(tmp_path: Path) -> None:
    node = _null_device(tmp_path)
    out = call("read", {"path": node.name}, tmp_path)
    assert out.is_error and text(out) == (
        "Cannot read null-device: it is a character device, not a regular file."
    )


def test_edit_of_a_fifo_or_device_is_refused(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    node = _null_device(tmp_path)
    for name, kind in (("pipe", "a FIFO (named pipe)"), (node.name, "a character device")):
        started = time.monotonic()
        out = call("edit", {"path": name, "edits": [{"oldText": "a", "newText": "b"}]}, tmp_path)
        assert time.monotonic() - started < 10
        assert out.is_error and text(out) == f"Cannot edit {name}: it is {kind}, not a regular file."
    assert stat.S_ISFIFO((tmp_path / "pipe").lstat().st_mode) and stat.S_ISCHR(node.lstat().st_mode)


def test_read_of_a_huge_sparse_file_is_bounded(tmp_path: Path) -> None:
    target = tmp_path / "sparse.log"
    head = b"".join(b"line %d\n" % i for i in range(1, 10_001))
    with open(target, "wb") as handle:
        handle.write(head)
        handle.seek(64 * 1024**3)  # a 64 GiB hole: line 10001 is made of NUL bytes
        handle.write(b"\nthe end\n")
    tracemalloc.start()
    started = time.monotonic()
    try:
        out = call("read", {"path": "sparse.log", "limit": 3}, tmp_path)
        tail = call("read", {"path": "sparse.log", "offset": 10_002}, tmp_path)
        hole = call("read", {"path": "sparse.log", "offset": 10_001}, tmp_path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert time.monotonic() - started < 30 and peak < 64 * 1024**2
    assert text(out) == "line 1\nline 2\nline 3\n\n[10000 more lines in file. Use offset=4 to continue.]"
    assert text(tail) == "the end\n"
    size = format_size(64 * 1024**3 - len(head))
    assert text(hole) == (
        f"[Line 10001 is {size}, exceeds 50.0KB limit. Use bash: sed -n '10001p' sparse.log | head -c 51200]"
    )


def test_read_of_a_large_file_streams_only_what_it_shows(tmp_path: Path) -> None:
    target = tmp_path / "big.txt"
    line = b"x" * 99 + b"\n"
    with open(target, "wb") as handle:
        for _ in range(64):
            handle.write(line * 10_000)  # 64 MB, 640 000 lines
    tracemalloc.start()
    try:
        out = call("read", {"path": "big.txt", "offset": 320_001, "limit": 5}, tmp_path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 16 * 1024**2
    body = "\n".join(["x" * 99] * 5)
    assert text(out) == f"{body}\n\n[319996 more lines in file. Use offset=320006 to continue.]"


def test_edit_of_a_file_over_the_size_limit_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "huge.txt"
    with open(target, "wb") as handle:
        handle.write(b"needle\n")
        handle.truncate(200 * 1024**2)  # sparse: cheap to make
    out = call("edit", {"path": "huge.txt", "edits": [{"oldText": "needle", "newText": "pin"}]}, tmp_path)
    assert out.is_error and text(out) == (
        "Cannot edit huge.txt: it is 200.0MB, more than the 64.0MB edit limit. "
        "Use bash (for example sed -i) to change a file this large."
    )
    assert target.read_bytes()[:7] == b"needle\n"


def test_write_through_a_dangling_symlink_creates_its_target(tmp_path: Path) -> None:
    (tmp_path / "link.txt").symlink_to(tmp_path / "target.txt")
    out = call("write", {"path": "link.txt", "content": "made"}, tmp_path)
    assert not out.is_error, text(out)
    assert (tmp_path / "link.txt").is_symlink() and (tmp_path / "target.txt").read_text() == "made"
    assert out.details == {"bytes": 4, "created": True}


def _whole_file_window(
    data: bytes, start: int, limit: int | None, max_lines: int, max_bytes: int
) -> tuple[TruncationResult | None, int | None, int]:
    """What read computed before it streamed: the whole file decoded and split."""
    lines = data.decode("utf-8", "replace").split("\n")
    if start >= len(lines):
        return (None, None, len(lines))
    end = min(start + limit, len(lines)) if limit is not None else len(lines)
    truncation = truncate_head("\n".join(lines[start:end]), max_lines, max_bytes)
    first = len(lines[start].encode("utf-8")) if truncation.first_line_exceeds_limit else None
    return (truncation, first, len(lines))


@pytest.mark.parametrize("chunk", [1, 3, 4096, 1 << 20])
def test_streamed_windows_equal_whole_file_reads(
    tmp_path: Path, chunk: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(line_window, "CHUNK_BYTES", chunk)
    rng = random.Random(chunk)
    pieces = [b"a", b"\n", b"\xc3\xa9", b"\xf0\x9f\x98\x80", b"\xff", b"\xc3", b"\r", b"\n\n", b"x" * 50]
    path = tmp_path / "f"
    for _ in range(300):
        with open(path, "wb") as handle:
            for _ in range(rng.randint(1, 3)):
                handle.write(b"".join(rng.choice(pieces) for _ in range(rng.randint(0, 150))))
                handle.seek(rng.choice([0, 0, 8192]), 1)
            handle.write(b"end" if rng.random() < 0.5 else b"")
            handle.truncate(handle.tell())
        start = rng.choice([0, 0, 1, 2, 4, 30])
        limit = rng.choice([None, 1, 3, 40])
        max_lines, max_bytes = rng.randint(1, 30), rng.choice([20, 300, 100_000])
        fd = os.open(path, os.O_RDONLY)
        try:
            window = line_window.scan_lines(fd, start, limit, threading.Event(), max_lines, max_bytes)
        finally:
            os.close(fd)
        truncation, first, total = _whole_file_window(path.read_bytes(), start, limit, max_lines, max_bytes)
        assert window.total_file_lines == total
        if truncation is not None:
            assert window.truncation == truncation
            assert first is None or window.first_line_bytes == first


def test_aborting_a_write_into_a_fifo_nobody_drains_ends_it(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # open, never read: the pipe fills up
    tool = WriteTool(PathLocks())

    async def write_then_abort() -> BaseException | None:
        task = asyncio.ensure_future(
            tool.execute("c1", {"path": "pipe", "content": "x" * 1024 * 1024}, ToolContext(cwd=str(tmp_path)))
        )
        await asyncio.sleep(0.5)
        task.cancel()
        try:
            await asyncio.wait_for(task, 10)
        except ToolError as err:
            return err
        return None

    try:
        started = time.monotonic()
        error = asyncio.run(write_then_abort())
        assert time.monotonic() - started < 10
        assert isinstance(error, ToolError) and error.aborted and str(error) == "Operation aborted"
    finally:
        os.close(reader)
    assert stat.S_ISFIFO(fifo.lstat().st_mode)
