"""Reading a file a user or a project names, without letting the file decide how long or how much.

Settings, models.json, trust.json, context files, skills, prompt templates, SYSTEM.md and the files
piwork keeps beside them are all read here. A path can point anywhere: a FIFO blocks ``open()`` until
a writer appears, ``/dev/zero`` never ends, and a regular file can be gigabytes. So every read

- opens with ``O_NONBLOCK`` (a FIFO opens at once instead of waiting for a writer; no effect on a
  regular file),
- looks at what it opened (``fstat`` of the descriptor, so a swap after a check cannot fool it) and
  refuses anything but a regular file,
- reads at most the cap of its kind of file, and refuses a file that is larger.

A refusal is an :class:`UnreadableFile`, an ``OSError`` whose text names the file and says why, so
code that already reports a file it cannot read (and goes on) reports these too.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass

KIB = 1024
MIB = 1024 * KIB
_CHUNK = 256 * KIB


@dataclass(frozen=True)
class FileKind:
    """What a file is to piwork (named in messages) and how many bytes of it piwork will read."""

    name: str
    limit: int


SETTINGS = FileKind("settings file", 8 * MIB)
MODELS = FileKind("models.json", 64 * MIB)
TRUST_STORE = FileKind("trust store", 16 * MIB)
AUTH = FileKind("auth.json", 4 * MIB)
CONTEXT_FILE = FileKind("context file", 8 * MIB)
SKILL = FileKind("skill", 4 * MIB)
PROMPT_TEMPLATE = FileKind("prompt template", 4 * MIB)
SYSTEM_PROMPT = FileKind("system prompt file", 4 * MIB)
PACKAGE_MANIFEST = FileKind("package.json", 4 * MIB)
IGNORE_FILE = FileKind("ignore file", 4 * MIB)
GIT_POINTER = FileKind("git pointer file", 64 * KIB)
THEME = FileKind("theme", 4 * MIB)
FINGERPRINTS = FileKind("trust fingerprint file", 16 * MIB)
SNAPSHOT = FileKind("trust snapshot", 64 * MIB)
GATED_FILE = FileKind("project resource", 64 * MIB)  # hashed for trust; not kept in memory whole
PROJECT_DATA = FileKind("piwork project file", 16 * MIB)  # profile, context snapshot, memory
PROJECT_FILE = FileKind("project file", 16 * MIB)  # a file of the project read as text
HASHED_PROJECT_FILE = FileKind("project file", 1024 * MIB)  # hashed in chunks, never held whole
CONTEXT_INDEX = FileKind("context index", 64 * MIB)
TELEMETRY = FileKind("telemetry file", 256 * MIB)
TOKENIZER = FileKind("tokenizer file", 64 * MIB)
APPROVAL_RULES = FileKind("approval rules file", 8 * MIB)
CACHE = FileKind("cache file", 64 * MIB)


class UnreadableFile(OSError):
    """A file piwork will not read: not a regular file, or larger than its kind's cap."""

    def __init__(self, path: str, reason: str, code: int) -> None:
        super().__init__(code, reason, path)

    def __str__(self) -> str:
        return f"{self.filename}: not read, {self.strerror}"


@dataclass(frozen=True)
class FileBytes:
    """The bytes read and what ``fstat`` said of the file when it was opened."""

    data: bytes
    size: int
    mtime_ns: int


_SPECIAL = (
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def describe_mode(mode: int) -> str:
    """What a non-regular file is, in a few words (``"a FIFO (named pipe)"``, ``"a directory"``...)."""
    if stat.S_ISDIR(mode):
        return "a directory"
    for test, name in _SPECIAL:
        if test(mode):
            return name
    return "not a regular file"


def format_bytes(size: int) -> str:
    if size < KIB:
        return f"{size} bytes"
    if size < MIB:
        return f"{size / KIB:.1f} KB"
    if size < 1024 * MIB:
        return f"{size / MIB:.1f} MB"
    return f"{size / (1024 * MIB):.1f} GB"


def _too_large(path: str, size: int | None, kind: FileKind) -> UnreadableFile:
    what = f"{format_bytes(size)}, more" if size is not None else "more"
    reason = f"it is {what} than the {format_bytes(kind.limit)} piwork reads of a {kind.name}"
    return UnreadableFile(path, reason, errno.EFBIG)


def open_regular(path: str | os.PathLike[str], kind: FileKind) -> tuple[int, os.stat_result]:
    """A read-only descriptor on a regular file and its ``fstat``; the caller closes it.

    Raises ``IsADirectoryError`` for a folder, :class:`UnreadableFile` for a FIFO, device or socket,
    and the usual ``OSError`` (``FileNotFoundError``...) when it cannot be opened.
    """
    shown = os.fspath(path)
    fd = os.open(shown, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | getattr(os, "O_NOCTTY", 0))
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise IsADirectoryError(errno.EISDIR, "Is a directory", shown)
        if not stat.S_ISREG(info.st_mode):
            raise UnreadableFile(
                shown, f"it is {describe_mode(info.st_mode)}, not a regular file", errno.EINVAL
            )
    except BaseException:
        os.close(fd)
        raise
    return fd, info


def read_file(path: str | os.PathLike[str], kind: FileKind) -> FileBytes:
    """All of a regular file, refused (:class:`UnreadableFile`) when larger than ``kind.limit``."""
    shown = os.fspath(path)
    fd, info = open_regular(shown, kind)
    try:
        if info.st_size > kind.limit:
            raise _too_large(shown, info.st_size, kind)
        chunks: list[bytes] = []
        total = 0
        while True:
            chunk = os.read(fd, min(_CHUNK, kind.limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if total > kind.limit:  # it grew while being read
                raise _too_large(shown, None, kind)
    finally:
        os.close(fd)
    return FileBytes(b"".join(chunks), info.st_size, info.st_mtime_ns)


def read_bytes(path: str | os.PathLike[str], kind: FileKind) -> bytes:
    """All of a regular file's bytes (see :func:`read_file`)."""
    return read_file(path, kind).data


def read_text(
    path: str | os.PathLike[str], kind: FileKind, *, errors: str = "replace", strip_bom: bool = True
) -> str:
    """A regular file as UTF-8 text (bad bytes replaced unless ``errors`` says otherwise), one
    leading BOM removed unless ``strip_bom`` is false."""
    text = read_bytes(path, kind).decode("utf-8", errors=errors)
    return text[1:] if strip_bom and text.startswith("\ufeff") else text


def read_start(path: str | os.PathLike[str], kind: FileKind, count: int) -> tuple[bytes, int]:
    """The first ``count`` bytes of a regular file (however large it is) and its size."""
    shown = os.fspath(path)
    fd, info = open_regular(shown, kind)
    try:
        chunks: list[bytes] = []
        total = 0
        while total < count:
            chunk = os.read(fd, min(_CHUNK, count - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
    finally:
        os.close(fd)
    return b"".join(chunks), info.st_size


@dataclass(frozen=True)
class FileDigest:
    """A regular file's SHA-256 (over at most ``kind.limit`` bytes), size, mtime, and its first
    ``keep`` bytes when the whole file fits in them."""

    sha256: str
    size: int
    mtime_ns: int
    data: bytes | None


def digest_file(path: str | os.PathLike[str], kind: FileKind, keep: int = 0) -> FileDigest:
    """Hash a regular file in bounded memory; refused when larger than ``kind.limit``."""
    shown = os.fspath(path)
    fd, info = open_regular(shown, kind)
    try:
        if info.st_size > kind.limit:
            raise _too_large(shown, info.st_size, kind)
        digest = hashlib.sha256()
        kept: list[bytes] = []
        total = 0
        for chunk in _chunks(fd, kind.limit + 1):
            total += len(chunk)
            if total > kind.limit:
                raise _too_large(shown, None, kind)
            digest.update(chunk)
            if total <= keep:
                kept.append(chunk)
    finally:
        os.close(fd)
    return FileDigest(digest.hexdigest(), total, info.st_mtime_ns, b"".join(kept) if total <= keep else None)


def _chunks(fd: int, budget: int) -> Iterator[bytes]:
    left = budget
    while left > 0:
        chunk = os.read(fd, min(_CHUNK, left))
        if not chunk:
            return
        left -= len(chunk)
        yield chunk


def is_regular_file(path: str | os.PathLike[str]) -> bool:
    """A regular file after following symlinks (never blocks: only ``stat``)."""
    with contextlib.suppress(OSError, ValueError):
        return stat.S_ISREG(os.stat(path).st_mode)
    return False
