"""Serialising file mutations per real path; writing into a file in place."""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import select
import stat
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TypeVar

from piwork.core.tools.base import ToolError

T = TypeVar("T")


def mutation_key(absolute_path: str) -> str:
    """The real path when it exists (so links to one file share a queue), else the absolute path."""
    try:
        return os.path.realpath(absolute_path, strict=True)
    except OSError:
        return absolute_path


class PathLocks:
    """One asyncio lock per file: writes and edits to the same file run one after another."""

    def __init__(self) -> None:
        self._locks: dict[str, asyncio.Lock] = {}
        self._users: dict[str, int] = {}

    @contextlib.asynccontextmanager
    async def hold(self, absolute_path: str) -> AsyncIterator[None]:
        key = mutation_key(absolute_path)
        lock = self._locks.setdefault(key, asyncio.Lock())
        self._users[key] = self._users.get(key, 0) + 1
        try:
            async with lock:
                yield
        finally:
            self._users[key] -= 1
            if self._users[key] == 0:
                del self._users[key]
                del self._locks[key]


class NoReader(OSError):
    """A FIFO was to be written while no process has it open for reading."""


class WriteStopped(OSError):
    """Writing into a FIFO or device was given up because the call was aborted."""


def write_into(path: str, data: bytes, stop: threading.Event | None = None) -> bool:
    """Write ``data`` into the file at ``path``, following symlinks; returns whether it was created.

    The file that is there is written in place (as Pi does), so a device, a FIFO or a symlink's target
    keeps its inode, hard links keep sharing the content and a read-only file is a permission error.
    For a regular file the space is reserved before the first byte changes, so a full disk leaves
    the old content whole; a file this call created is removed again when the write fails. A FIFO
    without a reader fails at once instead of waiting for one, and a FIFO or device that stops
    taking data is given up as soon as ``stop`` is set (a regular file is always written whole).
    """
    created = False
    try:
        fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        path = os.path.realpath(path)  # a dangling symlink: create its target, as Pi does
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)
        created = True
    except OSError as err:
        if err.errno == errno.ENXIO:
            raise NoReader(errno.ENXIO, "no process reads from the FIFO", path) from None
        raise
    try:
        info = os.fstat(fd)
        if stat.S_ISREG(info.st_mode):
            os.set_blocking(fd, True)
            _reserve(fd, len(data), info.st_size)
            _write_all(fd, data, positioned=True)
            os.ftruncate(fd, len(data))
            os.fsync(fd)
        else:
            _feed(fd, data, stop)
    except BaseException:
        os.close(fd)
        if created:
            with contextlib.suppress(OSError):
                os.unlink(path)
        raise
    os.close(fd)
    return created


def _reserve(fd: int, size: int, current: int) -> None:
    """Allocate ``size`` bytes before writing, so running out of space changes nothing."""
    if size <= current:
        return
    try:
        os.posix_fallocate(fd, 0, size)
    except OSError as err:
        if err.errno in (errno.EOPNOTSUPP, errno.EINVAL, errno.ENOSYS):
            return  # the file system cannot reserve: write and see
        with contextlib.suppress(OSError):
            os.ftruncate(fd, current)
        raise


def _feed(fd: int, data: bytes, stop: threading.Event | None) -> None:
    """Write into a non-blocking FIFO or device, waiting while it is full, until done or stopped."""
    view = memoryview(data)
    done = 0
    while done < len(view):
        if stop is not None and stop.is_set():
            raise WriteStopped(errno.EINTR, "the write was stopped")
        try:
            done += os.write(fd, view[done:])
        except BlockingIOError:
            select.select([], [fd], [], 0.1)


def _write_all(fd: int, data: bytes, positioned: bool) -> None:
    view = memoryview(data)
    done = 0
    while done < len(view):
        written = os.pwrite(fd, view[done:], done) if positioned else os.write(fd, view[done:])
        done += written


async def abort_checkpoint() -> None:
    """Turn a pending cancellation into the model-facing abort error between filesystem steps."""
    try:
        await asyncio.sleep(0)
    except asyncio.CancelledError:
        raise ToolError("Operation aborted", aborted=True) from None


async def finish_then_abort(step: Awaitable[T], on_abort: Callable[[], None] | None = None) -> T:
    """Run one filesystem step to its end even if the call is aborted meanwhile, then report the abort.

    ``on_abort`` asks a step that can stop safely (a write into a FIFO nobody drains) to stop early.
    """
    task = asyncio.ensure_future(step)
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        if on_abort is not None:
            on_abort()
        with contextlib.suppress(WriteStopped):
            await task  # the step is in flight: never leave it half done
        raise ToolError("Operation aborted", aborted=True) from None
