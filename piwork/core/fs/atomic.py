"""Replacing a file's contents in one step: readers see the old file or the new one, never a part.

The data goes to a new temporary file beside the target (same folder, so the same file system), which
is then renamed over it. ``durable`` also asks the disk: the temporary file is fsynced before the rename
and the folder after it, so after a crash or power loss the file holds the old contents or the new ones.
Without it a crash soon after the rename can leave an empty or partial file on some file systems; that
is fine for what can be made again (an HTML page, a cache), not for what the user wrote or chose.
"""

from __future__ import annotations

import os
import secrets
from contextlib import suppress
from pathlib import Path

_PRIVATE_MODE = 0o600  # the owner only: files that may hold keys or personal choices
_SHARED_MODE = 0o666  # narrowed by the umask, as an ordinary new file is


def write_atomically(
    path: str | os.PathLike[str], data: bytes | str, *, durable: bool, private: bool = False
) -> None:
    """Replace ``path`` with ``data`` (text is written as UTF-8, line ends as given).

    ``private`` makes the new file readable and writable by its owner only. The folder must exist.
    On any failure the target is left as it was and the temporary file is removed."""
    target = Path(path)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    fd, temporary = _create_beside(target, _PRIVATE_MODE if private else _SHARED_MODE)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(payload)
            if durable:
                out.flush()
                os.fsync(out.fileno())
        os.replace(temporary, target)
    except BaseException:
        with suppress(OSError):
            os.unlink(temporary)
        raise
    if durable:
        fsync_folder(target.parent)


def fsync_folder(folder: str | os.PathLike[str]) -> None:
    """Make a rename or a new name in ``folder`` durable (where the system allows a folder to be synced)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _create_beside(target: Path, mode: int) -> tuple[int, Path]:
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    while True:
        temporary = target.with_name(f".{target.name}.{secrets.token_hex(4)}.tmp")
        try:
            return os.open(temporary, flags, mode), temporary
        except FileExistsError:
            continue
