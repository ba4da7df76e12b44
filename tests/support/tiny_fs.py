"""A real, tiny file system for out-of-space tests: a tmpfs mounted with ``size=`` (needs root)."""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest


@contextlib.contextmanager
def tiny_tmpfs(where: Path, size: str = "512k") -> Iterator[Path]:
    """Mount a tmpfs of ``size`` at ``where`` for the duration; skips the test when that is not possible."""
    where.mkdir(parents=True, exist_ok=True)
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs", str(where)])
    if done.returncode != 0:
        pytest.skip("tmpfs cannot be mounted here")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=True)


def fill(folder: Path) -> None:
    """Use up every free byte of the file system holding ``folder``."""
    fd = os.open(folder / "filler", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        block = b"\1" * 4096
        with contextlib.suppress(OSError):
            while os.write(fd, block):
                pass
    finally:
        os.close(fd)
