"""write_atomically: the target holds the old contents or the new, never a part, and no temporary file stays."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from piwork.core.fs.atomic import write_atomically


def test_replaces_the_contents_and_leaves_nothing_beside(tmp_path: Path) -> None:
    target = tmp_path / "settings.json"
    target.write_text("old")
    write_atomically(target, "new ✓\r\n", durable=False)
    assert target.read_bytes() == "new ✓\r\n".encode()  # text as UTF-8, line ends as given
    write_atomically(target, b"\x00bytes", durable=True)
    assert target.read_bytes() == b"\x00bytes"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["settings.json"]


def test_a_failed_replace_keeps_the_target_and_removes_the_temporary_file(tmp_path: Path) -> None:
    target = tmp_path / "taken"
    target.mkdir()
    (target / "inside").write_text("kept")
    with pytest.raises(OSError):
        write_atomically(target, "data", durable=True)
    assert (target / "inside").read_text() == "kept"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["taken"]


def test_private_files_are_the_owners_only_and_shared_ones_follow_the_umask(tmp_path: Path) -> None:
    private, shared = tmp_path / "models.json", tmp_path / "page.html"
    old = os.umask(0o022)
    try:
        write_atomically(private, "{}", durable=False, private=True)
        write_atomically(shared, "<html>", durable=False)
    finally:
        os.umask(old)
    assert stat.S_IMODE(private.stat().st_mode) == 0o600
    assert stat.S_IMODE(shared.stat().st_mode) == 0o644


def test_durable_writes_sync_the_file_and_its_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    synced: list[str] = []
    real_fsync = os.fsync

    def recording_fsync(fd: int) -> None:
        synced.append("folder" if stat.S_ISDIR(os.fstat(fd).st_mode) else "file")
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", recording_fsync)
    write_atomically(tmp_path / "a", "x", durable=False)
    assert synced == []
    write_atomically(tmp_path / "b", "x", durable=True)
    assert synced == ["file", "folder"]
