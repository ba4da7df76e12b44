"""Filesystem error texts in the form the model sees from Pi (``ENOENT: no such file or directory, ...``)."""

from __future__ import annotations

import errno

_DESCRIPTIONS = {
    errno.ENOENT: "no such file or directory",
    errno.EACCES: "permission denied",
    errno.EPERM: "operation not permitted",
    errno.EISDIR: "illegal operation on a directory",
    errno.ENOTDIR: "not a directory",
    errno.ELOOP: "too many symbolic links encountered",
    errno.ENAMETOOLONG: "name too long",
    errno.EROFS: "read-only file system",
    errno.ENOSPC: "no space left on device",
    errno.EBUSY: "resource busy or locked",
    errno.EMFILE: "too many open files",
    errno.EEXIST: "file already exists",
    errno.EIO: "i/o error",
    errno.EINVAL: "invalid argument",
}


def error_code(err: OSError) -> str:
    """The symbolic code (``ENOENT``, ``EACCES``...) of an OS error."""
    if err.errno is None:
        return "EUNKNOWN"
    return errno.errorcode.get(err.errno, f"E{err.errno}")


def describe_os_error(err: OSError, syscall: str, path: str | None = None) -> str:
    """``CODE: description, syscall 'path'`` (the path is left out when ``None``)."""
    code = error_code(err)
    text = _DESCRIPTIONS.get(err.errno or 0) or (err.strerror or "unknown error").lower()
    where = f"{syscall} '{path}'" if path is not None else syscall
    return f"{code}: {text}, {where}"
