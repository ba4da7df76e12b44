"""Recognising inline images by their first bytes, and reading their pixel size from the header.

piwork does not resize images (no imaging library): an image that already fits the inline limits
(2000×2000 px, base64 payload under 4.5 MiB) is sent as is, uncompressed BMPs are converted to PNG
first, and larger images are reported as omitted.
"""

from __future__ import annotations

import struct

SNIFF_BYTES = 4100
MAX_DIMENSION = 2000
MAX_BASE64_BYTES = int(4.5 * 1024 * 1024)
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


def image_size(data: bytes, mime: str) -> tuple[int, int] | None:
    """Width and height from the image header, or ``None`` when the header cannot be read."""
    try:
        if mime == "image/png":
            return _u32be(data, 16), _u32be(data, 20)
        if mime == "image/gif":
            return _u16le(data, 6), _u16le(data, 8)
        if mime == "image/jpeg":
            return _jpeg_size(data)
        if mime == "image/webp":
            return _webp_size(data)
    except (IndexError, struct.error):
        return None
    return None


def _jpeg_size(data: bytes) -> tuple[int, int] | None:
    offset = 2
    while offset + 4 <= len(data):
        if data[offset] != 0xFF:
            offset += 1
            continue
        marker = data[offset + 1]
        if marker == 0xFF:
            offset += 1
            continue
        if marker in (0x01, 0xD8) or 0xD0 <= marker <= 0xD7:
            offset += 2
            continue
        length = int(struct.unpack(">H", data[offset + 2 : offset + 4])[0])
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            height, width = struct.unpack(">HH", data[offset + 5 : offset + 9])
            return int(width), int(height)
        if length < 2:
            return None
        offset += 2 + length
    return None


def _webp_size(data: bytes) -> tuple[int, int] | None:
    kind = data[12:16]
    if kind == b"VP8 " and data[23:26] == b"\x9d\x01\x2a":
        width, height = struct.unpack("<HH", data[26:30])
        return int(width) & 0x3FFF, int(height) & 0x3FFF
    if kind == b"VP8L" and data[20] == 0x2F:
        bits = int.from_bytes(data[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if kind == b"VP8X":
        width = int.from_bytes(data[24:27], "little") + 1
        height = int.from_bytes(data[27:30], "little") + 1
        return width, height
    return None


def base64_size(byte_count: int) -> int:
    return -(-byte_count // 3) * 4
