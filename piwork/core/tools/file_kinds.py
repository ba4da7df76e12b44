"""Opening a file for reading without blocking on FIFOs, and naming what is not a regular file.

``open()`` of a FIFO blocks until a writer appears, and reading a device can last forever, so the
read and edit tools open with ``O_NONBLOCK`` (no effect on regular files), look at what they got and
refuse anything but a regular file or a directory (whose own error is kept).
"""

from __future__ import annotations

import contextlib
import os
import stat

from piwork.core.fs.errors import describe_os_error
from piwork.core.tools.base import ToolError

_KINDS = (
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def special_kind(mode: int) -> str | None:
    """``"a FIFO (named pipe)"``, ``"a character device"``... for what is neither a file nor a folder."""
    for test, name in _KINDS:
        if test(mode):
            return name
    return None


def refuse_special(mode: int, verb: str, shown_path: str) -> None:
    """Raise the model-facing refusal when ``mode`` is a FIFO, device or socket."""
    kind = special_kind(mode)
    if kind is not None:
        raise ToolError(f"Cannot {verb} {shown_path}: it is {kind}, not a regular file.")


def open_regular_for_reading(absolute: str, verb: str, shown_path: str, syscall: str = "open") -> int:
    """A read-only descriptor on a regular file (blocking mode); refuses FIFOs, devices and sockets.

    A directory raises the ``EISDIR ... read`` error a read would give; other OS errors come back as
    ``CODE: description, <syscall> '<path>'``.
    """
    try:
        fd = os.open(absolute, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as err:
        raise ToolError(describe_os_error(err, syscall, absolute)) from None
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise ToolError(describe_os_error(IsADirectoryError(21, "Is a directory"), "read"))
        refuse_special(mode, verb, shown_path)
        os.set_blocking(fd, True)
    except BaseException:
        with contextlib.suppress(OSError):
            os.close(fd)
        raise
    return fd
