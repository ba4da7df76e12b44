"""Recognising the images the read tool returns as images, by their first bytes.

Only the signature is checked here (JPEG, non-animated PNG, GIF, WebP, a well-formed BMP header), the
way Pi decides before reading the rest; decoding, conversion and fitting into the inline limits are
in :mod:`piwork.core.tools.image_fit`.
"""

from __future__ import annotations

import struct

SNIFF_BYTES = 4100
_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def detect_image_mime(head: bytes) -> str | None:
    """The MIME type of a supported image from its first :data:`SNIFF_BYTES` bytes, else ``None``."""
    if head.startswith(b"\xff\xd8\xff"):
        return None if len(head) > 3 and head[3] == 0xF7 else "image/jpeg"
    if head.startswith(_PNG_SIGNATURE):
        return "image/png" if _is_png(head) and not _is_animated_png(head) else None
    if head.startswith(b"GIF"):
        return "image/gif"
    if head.startswith(b"RIFF") and head[8:12] == b"WEBP":
        return "image/webp"
    if head.startswith(b"BM") and _is_bmp(head):
        return "image/bmp"
    return None


def _u32be(data: bytes, offset: int) -> int:
    chunk = data[offset : offset + 4].ljust(4, b"\0")
    return int(struct.unpack(">I", chunk)[0])


def _u32le(data: bytes, offset: int) -> int:
    chunk = data[offset : offset + 4].ljust(4, b"\0")
    return int(struct.unpack("<I", chunk)[0])


def _u16le(data: bytes, offset: int) -> int:
    chunk = data[offset : offset + 2].ljust(2, b"\0")
    return int(struct.unpack("<H", chunk)[0])


def _is_png(data: bytes) -> bool:
    return len(data) >= 16 and _u32be(data, 8) == 13 and data[12:16] == b"IHDR"


def _is_animated_png(data: bytes) -> bool:
    offset = len(_PNG_SIGNATURE)
    while offset + 8 <= len(data):
        length = _u32be(data, offset)
        kind = data[offset + 4 : offset + 8]
        if kind == b"acTL":
            return True
        if kind == b"IDAT":
            return False
        following = offset + 8 + length + 4
        if following <= offset or following > len(data):
            return False
        offset = following
    return False


def _is_bmp(data: bytes) -> bool:
    if len(data) < 26:
        return False
    file_size = _u32le(data, 2)
    pixel_offset = _u32le(data, 10)
    dib_size = _u32le(data, 14)
    if file_size != 0 and file_size < 26:
        return False
    if pixel_offset < 14 + dib_size:
        return False
    if file_size != 0 and pixel_offset >= file_size:
        return False
    if dib_size == 12:
        planes, bits = _u16le(data, 22), _u16le(data, 24)
    elif 40 <= dib_size <= 124:
        if len(data) < 30:
            return False
        planes, bits = _u16le(data, 26), _u16le(data, 28)
    else:
        return False
    return planes == 1 and bits in (1, 4, 8, 16, 24, 32)
