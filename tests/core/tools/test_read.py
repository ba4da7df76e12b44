"""The read tool: notices, offsets, long lines, images, binary files and path handling."""

from __future__ import annotations

import base64
import struct
import zlib
from pathlib import Path

import pytest

from .helpers import call, text


def _png(width: int, height: int) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    raw = b"".join(b"\0" + b"\x80" * width for _ in range(min(height, 4)))
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")
    )


def test_small_file_is_returned_unchanged(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one\ntwo\n")
    out = call("read", {"path": "a.txt"}, tmp_path)
    assert text(out) == "one\ntwo\n" and out.details is None


def test_line_limit_notice_counts_the_trailing_newline_as_a_line(tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_text("".join(f"line {i}\n" for i in range(1, 3001)))
    out = call("read", {"path": "big.txt"}, tmp_path)
    assert text(out).endswith("line 2000\n\n[Showing lines 1-2000 of 3001. Use offset=2001 to continue.]")
    assert out.details is not None and out.details["truncation"]["truncatedBy"] == "lines"
    tail = call("read", {"path": "big.txt", "offset": 2990}, tmp_path)
    assert text(tail) == "".join(f"line {i}\n" for i in range(2990, 3001))


def test_byte_limit_notice(tmp_path: Path) -> None:
    (tmp_path / "wide.txt").write_text("".join("é" * 99 + "\n" for _ in range(600)))
    out = call("read", {"path": "wide.txt", "offset": 2}, tmp_path)
    assert text(out).endswith("\n\n[Showing lines 2-258 of 601 (50.0KB limit). Use offset=259 to continue.]")


def test_limit_notice_and_offset_errors(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("a\nb\nc\nd")
    assert text(call("read", {"path": "f.txt", "limit": 2}, tmp_path)) == (
        "a\nb\n\n[2 more lines in file. Use offset=3 to continue.]"
    )
    assert text(call("read", {"path": "f.txt", "offset": "3", "limit": "1"}, tmp_path)) == (
        "c\n\n[1 more lines in file. Use offset=4 to continue.]"
    )
    assert text(call("read", {"path": "f.txt", "offset": 0}, tmp_path)) == "a\nb\nc\nd"
    beyond = call("read", {"path": "f.txt", "offset": 9}, tmp_path)
    assert beyond.is_error and text(beyond) == "Offset 9 is beyond end of file (4 lines total)"
    assert call("read", {"path": "f.txt", "limit": 0}, tmp_path).is_error
    assert call("read", {"path": "f.txt", "offset": 1.5}, tmp_path).is_error


@pytest.mark.parametrize("name", ["min.js", "it's here.js"])
def test_first_line_over_the_limit_gives_a_recovery_hint(tmp_path: Path, name: str) -> None:
    (tmp_path / name).write_text("x" * 100_000 + "\nshort\n")
    out = call("read", {"path": name}, tmp_path)
    quoted = "min.js" if name == "min.js" else "'it'\"'\"'s here.js'"
    assert (
        text(out)
        == f"[Line 1 is 97.7KB, exceeds 50.0KB limit. Use bash: sed -n '1p' {quoted} | head -c 51200]"
    )
    assert out.details is not None and out.details["truncation"]["firstLineExceedsLimit"] is True


def test_missing_file_and_directory_errors(tmp_path: Path) -> None:
    out = call("read", {"path": "nope.txt"}, tmp_path)
    assert (
        out.is_error and text(out) == f"ENOENT: no such file or directory, access '{tmp_path / 'nope.txt'}'"
    )
    (tmp_path / "d").mkdir()
    assert text(call("read", {"path": "d"}, tmp_path)) == "EISDIR: illegal operation on a directory, read"


def test_paths_outside_cwd_home_at_prefix_and_file_urls(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("far away")
    cwd = tmp_path / "project"
    cwd.mkdir()
    assert text(call("read", {"path": "../outside.txt"}, cwd)) == "far away"
    assert text(call("read", {"path": f"@{outside}"}, cwd)) == "far away"
    assert text(call("read", {"path": outside.as_uri()}, cwd)) == "far away"
    monkeypatch.setenv("HOME", str(tmp_path))
    assert text(call("read", {"path": "~/outside.txt"}, cwd)) == "far away"


def test_macos_screenshot_name_variants(tmp_path: Path) -> None:
    (tmp_path / "Shot 10.00.00\u202fAM.txt").write_text("shot")
    (tmp_path / "Capture d\u2019e\u0301cran.txt").write_text("capture")
    assert text(call("read", {"path": "Shot 10.00.00 AM.txt"}, tmp_path)) == "shot"
    assert text(call("read", {"path": "Capture d'\u00e9cran.txt"}, tmp_path)) == "capture"


def test_invalid_utf8_is_replaced_and_binary_is_refused(tmp_path: Path) -> None:
    (tmp_path / "latin1.txt").write_bytes(b"caf\xe9\n")
    assert text(call("read", {"path": "latin1.txt"}, tmp_path)) == "caf\ufffd\n"
    (tmp_path / "prog.bin").write_bytes(b"\x7fELF\x00\x01\x02" * 50)
    out = call("read", {"path": "prog.bin"}, tmp_path)
    assert out.is_error and "binary file" in text(out)


def test_images_are_returned_as_image_content(tmp_path: Path) -> None:
    data = _png(3, 2)
    (tmp_path / "pic.png").write_bytes(data)
    out = call("read", {"path": "pic.png"}, tmp_path)
    assert out.content == [
        {"type": "text", "text": "Read image file [image/png]"},
        {"type": "image", "data": base64.b64encode(data).decode(), "mimeType": "image/png"},
    ]
    blind = call("read", {"path": "pic.png"}, tmp_path, model_supports_images=False)
    assert text(blind) == (
        "Read image file [image/png]\n"
        "[Current model does not support images. The image will be omitted from this request.]"
    )


def test_images_over_the_inline_limits_are_resized(tmp_path: Path) -> None:
    (tmp_path / "wide.png").write_bytes(_png(2500, 10))
    out = call("read", {"path": "wide.png"}, tmp_path)
    assert text(out) == (
        "Read image file [image/png]\n"
        "[Image: original 2500x10, displayed at 2000x8. Multiply coordinates by 1.25 to map to original image.]"
    )
    assert out.content[1]["mimeType"] == "image/png"
    gif = b"GIF89a" + struct.pack("<HH", 10, 10) + b"\0" * 20  # a header with nothing decodable after it
    (tmp_path / "a.gif").write_bytes(gif)
    assert text(call("read", {"path": "a.gif"}, tmp_path)) == (
        "Read image file [image/gif]\n[Image omitted: could not be resized below the inline image size limit.]"
    )
    bmp = b"BM" + struct.pack("<IHHIIiiHH", 70, 0, 0, 54, 40, 1, 1, 1, 24) + b"\0" * 40
    (tmp_path / "a.bmp").write_bytes(bmp)
    assert text(call("read", {"path": "a.bmp"}, tmp_path)).endswith(
        "[Image converted from image/bmp to image/png.]"
    )
    rle = bytearray(bmp)
    rle[30] = 1  # run-length encoded 24-bit pixels: no such format, nothing to convert
    (tmp_path / "rle.bmp").write_bytes(bytes(rle))
    assert text(call("read", {"path": "rle.bmp"}, tmp_path)) == (
        "Read image file [image/bmp]\n[Image omitted: could not be converted to a supported inline image format.]"
    )


def test_jpeg_and_webp_are_recognised_by_their_first_bytes() -> None:
    from piwork.core.tools.images import detect_image_mime

    jpeg = b"\xff\xd8\xff\xe0" + struct.pack(">H", 16) + b"JFIF\0" + b"\0" * 9
    assert detect_image_mime(jpeg) == "image/jpeg"
    webp = (
        b"RIFF"
        + b"\0" * 4
        + b"WEBPVP8X"
        + b"\0" * 8
        + (99).to_bytes(3, "little")
        + (49).to_bytes(3, "little")
    )
    assert detect_image_mime(webp) == "image/webp"
    assert detect_image_mime(b"\xff\xd8\xff\xf7") is None
