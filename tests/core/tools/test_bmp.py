"""BMP to PNG conversion: pixels survive, in the right order and colours."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

import pytest

from piwork.core.tools.bmp import bmp_to_png

from .helpers import call, text


def _bmp(
    width: int, height: int, bits: int, pixels: list[tuple[int, int, int]], top_down: bool = False
) -> bytes:
    """A BI_RGB BMP; ``pixels`` are RGB, row by row from the top."""
    stride = (width * bits + 31) // 32 * 4
    palette = sorted(set(pixels)) if bits == 8 else []
    table = b"".join(bytes((b, g, r, 0)) for r, g, b in palette)
    rows = []
    for y in range(height):
        row = pixels[y * width : (y + 1) * width]
        if bits == 8:
            raw = bytes(palette.index(p) for p in row)
        else:
            raw = b"".join(bytes((b, g, r)) + (b"\xff" if bits == 32 else b"") for r, g, b in row)
        rows.append(raw.ljust(stride, b"\0"))
    body = b"".join(rows if top_down else reversed(rows))
    offset = 54 + len(table)
    info = struct.pack(
        "<IiiHHIIiiII",
        40,
        width,
        -height if top_down else height,
        1,
        bits,
        0,
        len(body),
        0,
        0,
        len(palette),
        0,
    )
    return struct.pack("<2sIHHI", b"BM", offset + len(body), 0, 0, offset) + info + table + body


def _png_pixels(png: bytes) -> tuple[int, int, list[tuple[int, int, int]]]:
    width, height = struct.unpack(">II", png[16:24])
    start = png.index(b"IDAT") + 4
    length = struct.unpack(">I", png[start - 8 : start - 4])[0]
    raw = zlib.decompress(png[start : start + length])
    pixels = []
    for y in range(height):
        row = raw[y * (1 + 3 * width) + 1 : (y + 1) * (1 + 3 * width)]
        pixels += [tuple(row[i : i + 3]) for i in range(0, len(row), 3)]
    return width, height, pixels  # type: ignore[return-value]


PIXELS = [(255, 0, 0), (0, 255, 0), (0, 0, 255), (10, 20, 30), (200, 100, 50), (1, 2, 3)]


@pytest.mark.parametrize("bits", [8, 24, 32])
@pytest.mark.parametrize("top_down", [False, True])
def test_pixels_survive_conversion(bits: int, top_down: bool) -> None:
    png = bmp_to_png(_bmp(3, 2, bits, PIXELS, top_down))
    assert png is not None and png.startswith(b"\x89PNG")
    assert _png_pixels(png) == (3, 2, PIXELS)


def test_unsupported_bmps_are_refused() -> None:
    compressed = bytearray(_bmp(3, 2, 24, PIXELS))
    compressed[30] = 1  # RLE8
    assert bmp_to_png(bytes(compressed)) is None
    assert bmp_to_png(_bmp(3, 2, 24, PIXELS)[:60]) is None  # pixel data cut off


def test_read_returns_a_converted_bmp(tmp_path: Path) -> None:
    (tmp_path / "a.bmp").write_bytes(_bmp(3, 2, 24, PIXELS))
    out = call("read", {"path": "a.bmp"}, tmp_path)
    assert text(out) == "Read image file [image/png]\n[Image converted from image/bmp to image/png.]"
    assert out.content[1]["mimeType"] == "image/png"
