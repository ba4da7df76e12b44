"""The one reader for files a user or a project names: regular files only, never more than a cap."""

from __future__ import annotations

import errno
import os
import threading
from pathlib import Path

import pytest

from piwork.core.safe_read import (
    FileKind,
    UnreadableFile,
    digest_file,
    read_bytes,
    read_file,
    read_start,
    read_text,
)

SMALL = FileKind("test file", 1024)


def test_a_regular_file_is_read_whole_with_its_stat(tmp_path: Path) -> None:
    path = tmp_path / "a.json"
    path.write_bytes(b"\xef\xbb\xbf{}\n")
    got = read_file(path, SMALL)
    assert got.data == b"\xef\xbb\xbf{}\n"
    assert got.size == 6 and got.mtime_ns == path.stat().st_mtime_ns
    assert read_text(path, SMALL) == "{}\n"
    assert read_text(path, SMALL, strip_bom=False) == "\ufeff{}\n"


def test_through_a_symlink_the_target_is_read(tmp_path: Path) -> None:
    (tmp_path / "real.md").write_text("body")
    (tmp_path / "link.md").symlink_to(tmp_path / "real.md")
    assert read_bytes(tmp_path / "link.md", SMALL) == b"body"


@pytest.mark.timeout(10)
def test_a_fifo_is_refused_at_once_and_named(tmp_path: Path) -> None:
    fifo = tmp_path / "settings.json"
    os.mkfifo(fifo)
    with pytest.raises(UnreadableFile) as caught:
        read_bytes(fifo, SMALL)
    assert str(fifo) in str(caught.value)
    assert "FIFO" in str(caught.value) and "not a regular file" in str(caught.value)
    assert isinstance(caught.value, OSError) and caught.value.errno == errno.EINVAL


@pytest.mark.timeout(10)
def test_a_fifo_with_a_writer_is_refused_too(tmp_path: Path) -> None:
    fifo = tmp_path / "models.json"
    os.mkfifo(fifo)
    fd = os.open(fifo, os.O_RDWR)  # holds both ends: a blocking read would wait for data forever
    try:
        with pytest.raises(UnreadableFile):
            read_text(fifo, SMALL)
    finally:
        os.close(fd)


@pytest.mark.timeout(10)
def test_a_symlink_to_dev_zero_is_refused_without_reading(tmp_path: Path) -> None:
    link = tmp_path / "SYSTEM.md"
    link.symlink_to("/dev/zero")
    for read in (read_bytes, read_text, read_file):
        with pytest.raises(UnreadableFile, match="character device"):
            read(link, SMALL)
    with pytest.raises(UnreadableFile):
        digest_file(link, SMALL)
    with pytest.raises(UnreadableFile):
        read_start(link, SMALL, 10)


def test_a_file_over_the_cap_is_refused_with_its_size(tmp_path: Path) -> None:
    big = tmp_path / "big.json"
    with open(big, "wb") as out:
        out.truncate(5 * 1024 * 1024 * 1024)  # sparse: 5 GB on paper, nothing on disk
    with pytest.raises(UnreadableFile) as caught:
        read_bytes(big, SMALL)
    message = str(caught.value)
    assert str(big) in message and "5.0 GB" in message and "1.0 KB" in message and "test file" in message
    assert caught.value.errno == errno.EFBIG
    with pytest.raises(UnreadableFile):
        digest_file(big, SMALL)


def test_exactly_the_cap_is_read(tmp_path: Path) -> None:
    path = tmp_path / "edge"
    path.write_bytes(b"x" * SMALL.limit)
    assert len(read_bytes(path, SMALL)) == SMALL.limit


def test_a_folder_and_a_missing_file_keep_their_own_errors(tmp_path: Path) -> None:
    with pytest.raises(IsADirectoryError):
        read_bytes(tmp_path, SMALL)
    with pytest.raises(FileNotFoundError):
        read_bytes(tmp_path / "missing", SMALL)


def test_read_start_reads_only_the_beginning_of_a_large_file(tmp_path: Path) -> None:
    path = tmp_path / "log"
    path.write_bytes(b"a" * 5000)
    data, size = read_start(path, SMALL, 100)
    assert data == b"a" * 100 and size == 5000


def test_digest_hashes_in_chunks_and_keeps_small_files(tmp_path: Path) -> None:
    import hashlib

    path = tmp_path / "f"
    body = os.urandom(700_000)
    path.write_bytes(body)
    kind = FileKind("test file", 1024 * 1024)
    got = digest_file(path, kind, keep=1_000_000)
    assert got.sha256 == hashlib.sha256(body).hexdigest() and got.size == len(body) and got.data == body
    assert digest_file(path, kind, keep=10).data is None


@pytest.mark.timeout(10)
def test_a_reader_never_waits_for_a_fifo_writer_in_another_thread(tmp_path: Path) -> None:
    fifo = tmp_path / "p"
    os.mkfifo(fifo)
    errors: list[BaseException] = []

    def attempt() -> None:
        try:
            read_bytes(fifo, SMALL)
        except BaseException as exc:
            errors.append(exc)

    worker = threading.Thread(target=attempt)
    worker.start()
    worker.join(5)
    assert not worker.is_alive() and isinstance(errors[0], UnreadableFile)
