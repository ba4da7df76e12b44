"""BMP to PNG conversion: pixels survive, in the right order and colours."""

from __future__ import annotations

import base64
import io
import random
import struct
from pathlib import Path

import pytest
from PIL import Image

from piwork.core.tools.image_fit import MAX_BASE64_BYTES, ImageNotConvertible, base64_size, fit_image

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
    image = Image.open(io.BytesIO(png)).convert("RGB")
    return (
        image.width,
        image.height,
        [image.getpixel((x, y)) for y in range(image.height) for x in range(image.width)],
    )


PIXELS = [(255, 0, 0), (0, 255, 0), (0, 0, 255), (10, 20, 30), (200, 100, 50), (1, 2, 3)]


@pytest.mark.parametrize("bits", [8, 24, 32])
@pytest.mark.parametrize("top_down", [False, True])
def test_pixels_survive_conversion(bits: int, top_down: bool) -> None:
    fitted = fit_image(_bmp(3, 2, bits, PIXELS, top_down), "image/bmp")
    assert fitted is not None and fitted.mime == "image/png" and fitted.converted_from == "image/bmp"
    assert _png_pixels(base64.b64decode(fitted.data)) == (3, 2, PIXELS)


def test_unsupported_bmps_are_refused() -> None:
    compressed = bytearray(_bmp(3, 2, 24, PIXELS))
    compressed[30] = 1  # RLE8 with 24-bit pixels: not a valid BMP
    for broken in (bytes(compressed), _bmp(3, 2, 24, PIXELS)[:60]):  # and pixel data cut off
        with pytest.raises(ImageNotConvertible):
            fit_image(broken, "image/bmp")


def test_read_returns_a_converted_bmp(tmp_path: Path) -> None:
    (tmp_path / "a.bmp").write_bytes(_bmp(3, 2, 24, PIXELS))
    out = call("read", {"path": "a.bmp"}, tmp_path)
    assert text(out) == "Read image file [image/png]\n[Image converted from image/bmp to image/png.]"
    assert out.content[1]["mimeType"] == "image/png"


def _noise(width: int, height: int, seed: int = 7) -> Image.Image:
    rng = random.Random(seed)
    return Image.frombytes("RGB", (width, height), rng.randbytes(width * height * 3))


def _encoded(image: Image.Image, fmt: str = "PNG") -> bytes:
    out = io.BytesIO()
    image.save(out, fmt)
    return out.getvalue()


def test_an_image_within_the_limits_is_sent_as_it_is() -> None:
    data = _encoded(_noise(40, 30))
    fitted = fit_image(data, "image/png")
    assert fitted is not None and base64.b64decode(fitted.data) == data and not fitted.was_resized
    assert fitted.hints() == []


def test_a_photo_too_heavy_for_png_becomes_jpeg_at_the_preferred_quality() -> None:
    data = _encoded(_noise(2400, 1800))  # noise: about 13 MB as PNG, no compression helps
    fitted = fit_image(data, "image/png")
    assert fitted is not None and fitted.mime == "image/jpeg" and fitted.size == (2000, 1500)
    assert base64_size(len(base64.b64decode(fitted.data))) < MAX_BASE64_BYTES
    expected = io.BytesIO()
    _noise(2400, 1800).resize((2000, 1500), Image.Resampling.LANCZOS).save(expected, "JPEG", quality=80)
    assert base64.b64decode(fitted.data) == expected.getvalue()


def test_shrinks_by_a_quarter_until_the_payload_fits_and_gives_up_below_one_pixel() -> None:
    data = _encoded(_noise(400, 300))
    fitted = fit_image(data, "image/png", max_base64_bytes=6000)
    assert fitted is not None and fitted.original_size == (400, 300)
    sizes = [(400, 300)]
    while sizes[-1] != fitted.size:
        w, h = sizes[-1]
        sizes.append((max(1, int(w * 0.75)), max(1, int(h * 0.75))))
    assert len(sizes) > 3 and base64_size(len(base64.b64decode(fitted.data))) < 6000
    assert fitted.hints()[-1].startswith(
        f"[Image: original 400x300, displayed at {fitted.size[0]}x{fitted.size[1]}."
    )
    assert fit_image(data, "image/png", max_base64_bytes=8) is None


def test_exif_orientation_is_applied_before_measuring() -> None:
    image = _noise(30, 2400)
    exif = Image.Exif()
    exif[0x0112] = 6  # stored sideways: displayed rotated by 90°
    out = io.BytesIO()
    image.save(out, "JPEG", exif=exif.tobytes())
    fitted = fit_image(out.getvalue(), "image/jpeg")
    assert fitted is not None and fitted.original_size == (2400, 30) and fitted.size == (2000, 25)


def test_a_decompression_bomb_is_refused_without_decoding_it() -> None:
    bomb = _encoded(Image.new("1", (1, 1))).replace(
        struct.pack(">II", 1, 1), struct.pack(">II", 200_000, 200_000), 1
    )
    with pytest.raises(ImageNotConvertible):
        fit_image(bomb, "image/png")


def test_an_image_encoded_anew_at_its_own_size_still_gets_the_scale_note() -> None:
    """Within 2000x2000 but over the payload limit: re-encoded at the same size, noted as Pi 1.6 notes it."""
    data = _encoded(_noise(300, 200))
    fitted = fit_image(data, "image/png", max_base64_bytes=base64_size(len(data)) - 1)
    assert fitted is not None and fitted.size == (300, 200) and fitted.was_resized
    assert fitted.hints() == [
        "[Image: original 300x200, displayed at 300x200. Multiply coordinates by 1.00 to map to original image.]"
    ]


def test_the_smaller_of_png_and_jpeg_is_preferred() -> None:
    flat = Image.new("RGB", (2400, 1800), (10, 120, 200))  # one colour: PNG is far smaller than JPEG
    fitted = fit_image(_encoded(flat), "image/png")
    assert fitted is not None and fitted.mime == "image/png" and fitted.size == (2000, 1500)
