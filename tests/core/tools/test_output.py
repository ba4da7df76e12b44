"""The streaming output accumulator: decoding across chunks, counts, tail trimming, spill rule."""

from __future__ import annotations

import io
import os
import stat
from pathlib import Path

import pytest

from piwork.core.output import OutputAccumulator
from piwork.core.tools.logs import create_log_file
from piwork.core.truncate import truncate_tail


def _accumulator(tmp_path: Path, **limits: int) -> OutputAccumulator:
    return OutputAccumulator(lambda: create_log_file(tmp_path / "logs", "bash"), **limits)


def _feed(acc: OutputAccumulator, data: bytes, size: int) -> None:
    for i in range(0, len(data), size):
        acc.append(data[i : i + size])
    acc.finish()


@pytest.mark.parametrize("size", [1, 2, 3, 5, 7, 64])
def test_multibyte_characters_split_at_every_chunk_boundary(tmp_path: Path, size: int) -> None:
    data = "aé🙂\nβ€ z\n".encode() * 3
    acc = _accumulator(tmp_path)
    _feed(acc, data, size)
    snap = acc.snapshot()
    assert snap.content == data.decode()
    assert acc.total_lines == 6 and acc.total_decoded_bytes == len(data)
    assert not snap.truncation.truncated and snap.full_output_path is None


def test_invalid_utf8_becomes_replacement_characters_and_raw_bytes_are_spilled(tmp_path: Path) -> None:
    data = b"ok\xff\xfe\x80\n" + b"\xe2\x82" + b"x" * 60000
    acc = _accumulator(tmp_path)
    _feed(acc, data, 4096)
    snap = acc.snapshot(persist_if_truncated=True)
    acc.close()
    assert snap.full_output_path is not None
    assert Path(snap.full_output_path).read_bytes() == data
    assert snap.truncation.truncated and snap.truncation.last_line_partial
    assert acc.total_raw_bytes == len(data)
    assert acc.total_decoded_bytes == len(data.decode("utf-8", "replace").encode())


def test_spill_starts_only_past_the_limits_and_keeps_every_byte(tmp_path: Path) -> None:
    acc = _accumulator(tmp_path, max_bytes=100, max_lines=5)
    acc.append(b"1\n2\n3\n4\n5\n")
    assert acc.full_output_path is None
    acc.append(b"6\n")
    assert acc.full_output_path is not None
    acc.append(b"7")
    acc.finish()
    snap = acc.snapshot()
    acc.close()
    assert Path(acc.full_output_path).read_bytes() == b"1\n2\n3\n4\n5\n6\n7"
    assert snap.content == "3\n4\n5\n6\n7"
    record = snap.truncation
    assert (record.total_lines, record.output_lines, record.truncated_by) == (7, 5, "lines")


def test_spill_file_is_private_and_exclusive(tmp_path: Path) -> None:
    acc = _accumulator(tmp_path, max_bytes=10)
    _feed(acc, b"x" * 50, 7)
    acc.close()
    path = Path(acc.full_output_path or "")
    assert path.is_absolute() and path.parent == tmp_path / "logs"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert path.name.startswith("bash-") and path.suffix == ".log"


def test_persist_if_truncated_opens_the_file_for_a_truncated_view(tmp_path: Path) -> None:
    acc = _accumulator(tmp_path, max_bytes=1000, max_lines=2)
    acc.append(b"a\nb\nc")
    # three lines > 2: the spill rule already fired
    assert acc.full_output_path is not None
    small = _accumulator(tmp_path, max_bytes=1000)
    small.append(b"abc")
    assert small.snapshot(persist_if_truncated=True).full_output_path is None


def test_tail_is_trimmed_and_snapshot_drops_the_cut_line(tmp_path: Path) -> None:
    lines = [f"line {i} " + "x" * (i % 50) for i in range(20000)]
    data = ("\n".join(lines) + "\n").encode()
    acc = _accumulator(tmp_path)
    _feed(acc, data, 65536)
    snap = acc.snapshot(persist_if_truncated=True)
    acc.close()
    expected = truncate_tail(data.decode())
    assert snap.content == expected.content
    assert snap.truncation.total_lines == 20000 and snap.truncation.total_bytes == len(data)
    assert snap.truncation.output_lines == expected.output_lines
    assert snap.truncation.truncated_by == expected.truncated_by == "bytes"
    assert Path(snap.full_output_path or "").read_bytes() == data


def test_output_without_newlines_keeps_the_raw_tail(tmp_path: Path) -> None:
    data = ("é" * 150_000).encode()  # 300 KB, no newline, crosses the trim trigger
    acc = _accumulator(tmp_path)
    _feed(acc, data, 8191)
    snap = acc.snapshot()
    acc.close()
    assert snap.truncation.last_line_partial and snap.truncation.truncated_by == "bytes"
    assert snap.content == "é" * (51200 // 2)
    assert acc.last_line_bytes == len(data) and acc.open_line_bytes == len(data)


def test_last_line_size_counts_the_whole_terminated_line(tmp_path: Path) -> None:
    acc = _accumulator(tmp_path)
    acc.append(b"short\n" + b"y" * 70000)
    acc.append(b"y" * 10 + b"\n")
    acc.finish()
    assert acc.open_line_bytes == 0
    assert acc.last_line_bytes == 70010


def test_appending_after_finish_is_a_bug(tmp_path: Path) -> None:
    acc = _accumulator(tmp_path)
    acc.finish()
    with pytest.raises(RuntimeError):
        acc.append(b"x")


def test_spill_opener_is_called_once(tmp_path: Path) -> None:
    opened: list[io.BytesIO] = []

    def opener() -> tuple[str, io.BytesIO]:
        buf = io.BytesIO()
        buf.close = lambda: None  # type: ignore[method-assign]
        opened.append(buf)
        return str(tmp_path / "spill.log"), buf

    acc = OutputAccumulator(opener, max_bytes=4)
    for _ in range(10):
        acc.append(b"abc")
        acc.snapshot(persist_if_truncated=True)
    acc.finish()
    assert len(opened) == 1 and opened[0].getvalue() == b"abc" * 10
    assert os.path.basename(acc.full_output_path or "") == "spill.log"


def test_a_huge_last_line_ending_in_newline_still_shows_its_tail(tmp_path: Path) -> None:
    acc = _accumulator(tmp_path)
    _feed(acc, b"z" * 300_000 + b"\n", 65536)
    snap = acc.snapshot(persist_if_truncated=True)
    acc.close()
    assert snap.content == "z" * 51200 and snap.truncation.last_line_partial
    assert acc.last_line_bytes == 300_000 and acc.open_line_bytes == 0


@pytest.mark.parametrize("prefix", [0, 1, 2, 3])
@pytest.mark.parametrize("char", ["é", "€", "🙂"])
def test_the_byte_cut_lands_on_a_character_boundary(tmp_path: Path, prefix: int, char: str) -> None:
    data = b"a" * prefix + char.encode() * (80_000 // len(char.encode()))
    acc = _accumulator(tmp_path)
    _feed(acc, data, 4099)
    snap = acc.snapshot(persist_if_truncated=True)
    acc.close()
    kept = snap.content.encode()
    assert "\ufffd" not in snap.content and data.endswith(kept)
    assert 51200 - len(char.encode()) < len(kept) <= 51200 == snap.truncation.max_bytes
    assert snap.truncation.output_bytes == len(kept)
