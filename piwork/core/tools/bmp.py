"""Converting uncompressed BMP images (8, 24 and 32 bits per pixel) to PNG, with only the stdlib."""

from __future__ import annotations

import struct
import zlib

MAX_PIXELS = 40_000_000  # refuse absurd headers instead of allocating gigabytes


def _png_chunk(kind: bytes, data: bytes) -> bytes:
    return (
        struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    )


def bmp_to_png(data: bytes) -> bytes | None:
    """PNG bytes for a BMP that uses no compression, or ``None`` when it cannot be converted."""
    try:
        pixel_offset = struct.unpack_from("<I", data, 10)[0]
        header_size = struct.unpack_from("<I", data, 14)[0]
        if header_size < 40:
            return None
        width, height, planes, bits, compression = struct.unpack_from("<iiHHI", data, 18)
        colours = struct.unpack_from("<I", data, 46)[0]
    except struct.error:
        return None
    top_down = height < 0
    height = abs(height)
    if width <= 0 or height == 0 or width * height > MAX_PIXELS or planes != 1:
        return None
    if compression != 0 and not (compression == 3 and bits == 32):
        return None
    if bits not in (8, 24, 32):
        return None
    palette: list[bytes] = []
    if bits == 8:
        count = colours or 256
        start = 14 + header_size
        raw = data[start : start + 4 * count]
        palette = [bytes((raw[i + 2], raw[i + 1], raw[i])) for i in range(0, len(raw) - 3, 4)]
        if not palette:
            return None
    padded = (palette + [b"\0\0\0"] * 256)[:256]
    tables = [bytes(colour[c] for colour in padded) for c in range(3)]
    stride = (width * bits + 31) // 32 * 4
    if pixel_offset + stride * height > len(data):
        return None
    rows: list[bytes] = []
    for y in range(height):
        source_row = y if top_down else height - 1 - y
        row = data[pixel_offset + source_row * stride : pixel_offset + source_row * stride + stride]
        if bits == 8:
            channels = [row[:width].translate(table) for table in tables]  # palette index -> R, G, B
        else:
            step = bits // 8  # stored as B, G, R(, A)
            channels = [
                row[2 : width * step : step],
                row[1 : width * step : step],
                row[0 : width * step : step],
            ]
        pixels = bytearray(width * 3)
        for offset, channel in enumerate(channels):
            pixels[offset::3] = channel
        rows.append(b"\0" + bytes(pixels))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + _png_chunk(b"IHDR", header)
        + _png_chunk(b"IDAT", zlib.compress(b"".join(rows), 6))
        + _png_chunk(b"IEND", b"")
    )
