"""Fitting an image into the inline limits the providers accept, the way Pi fits it.

An image within 2000×2000 px whose base64 payload is under 4.5 MiB is sent as it is. A larger one is
scaled (Lanczos) to fit 2000×2000, then encoded as PNG and as JPEG: the smaller of the two at the
preferred JPEG quality, else JPEG at falling qualities; the first encoding under the payload limit
wins (and the note on the scale is given even when the size did not change). When none fits, the size shrinks by a quarter and the
encodings are tried again, down to 1×1. Formats providers do not take inline (BMP, TIFF ...) are
converted to PNG first. Decoding uses Pillow, with its decompression-bomb guard: an image that claims
an absurd pixel count is refused rather than decoded.
"""

from __future__ import annotations

import base64
import io
import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from PIL import Image

MAX_DIMENSION = 2000
MAX_BASE64_BYTES = int(4.5 * 1024 * 1024)
JPEG_QUALITIES = (80, 85, 70, 55, 40)  # the first is the preferred quality; the rest are fallbacks
SHRINK = 0.75
INLINE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})


@dataclass(frozen=True)
class FittedImage:
    data: str  # base64
    mime: str
    original_size: tuple[int, int]
    size: tuple[int, int]
    converted_from: str | None = None  # the source type when it had to become PNG first
    reencoded: bool = False  # encoded anew to fit the payload limit (possibly at the same size)

    @property
    def was_resized(self) -> bool:
        """Sent as a new encoding: the note on the scale is given even when the size stayed the same."""
        return self.reencoded or self.size != self.original_size

    def hints(self) -> list[str]:
        """The notes the read tool puts before the image (format conversion, then the scale)."""
        notes = []
        if self.converted_from and self.converted_from != self.mime:
            notes.append(f"[Image converted from {self.converted_from} to {self.mime}.]")
        if self.was_resized:
            (ow, oh), (w, h) = self.original_size, self.size
            notes.append(
                f"[Image: original {ow}x{oh}, displayed at {w}x{h}. "
                f"Multiply coordinates by {ow / w:.2f} to map to original image.]"
            )
        return notes


class ImageNotConvertible(Exception):
    """The bytes could not be decoded as an image."""


def base64_size(byte_count: int) -> int:
    return -(-byte_count // 3) * 4


def _decode(data: bytes) -> Image.Image:
    # Pillow is imported by the first image, never by a run that reads none
    from PIL import Image, UnidentifiedImageError

    errors = (UnidentifiedImageError, OSError, ValueError, Image.DecompressionBombError, SyntaxError)
    with warnings.catch_warnings():
        warnings.simplefilter("error", Image.DecompressionBombWarning)  # refuse, do not just warn
        try:
            image = Image.open(io.BytesIO(data))
            image.load()
        except (*errors, Image.DecompressionBombWarning) as err:
            raise ImageNotConvertible(str(err)) from err
    return image


def _encode(image: Image.Image, fmt: str, quality: int | None = None) -> bytes:
    out = io.BytesIO()
    if fmt == "JPEG":
        flat = image if image.mode == "RGB" else image.convert("RGB")
        flat.save(out, "JPEG", quality=quality)
    else:
        image.save(out, "PNG")
    return out.getvalue()


def _fit_box(width: int, height: int, limit: int) -> tuple[int, int]:
    if width > limit:
        height, width = round(height * limit / width), limit
    if height > limit:
        width, height = round(width * limit / height), limit
    return max(1, width), max(1, height)


def fit_image(
    data: bytes, mime: str, *, max_dimension: int = MAX_DIMENSION, max_base64_bytes: int = MAX_BASE64_BYTES
) -> FittedImage | None:
    """The image as it can be sent inline, or None when even 1×1 does not fit the payload limit.

    Raises :class:`ImageNotConvertible` when the bytes are not a decodable image.
    """
    from PIL import Image, ImageOps

    converted_from: str | None = None
    image = _decode(data)
    if mime not in INLINE_TYPES:
        converted_from, mime = mime, "image/png"
        data = _encode(image, "PNG")
    image = ImageOps.exif_transpose(image) or image
    original = image.size
    within = original[0] <= max_dimension and original[1] <= max_dimension
    if within and base64_size(len(data)) < max_base64_bytes:
        return FittedImage(base64.b64encode(data).decode("ascii"), mime, original, original, converted_from)
    if image.mode not in ("RGB", "RGBA", "L", "LA"):
        image = image.convert("RGBA" if "A" in image.getbands() or "transparency" in image.info else "RGB")
    width, height = _fit_box(*original, max_dimension)
    while True:
        scaled = image.resize((width, height), Image.Resampling.LANCZOS)
        png = ("image/png", _encode(scaled, "PNG"))
        jpeg = ("image/jpeg", _encode(scaled, "JPEG", JPEG_QUALITIES[0]))
        # the smaller of PNG and JPEG at the preferred quality first; lower qualities only if neither fits
        candidates = [jpeg, png] if len(jpeg[1]) < len(png[1]) else [png, jpeg]
        candidates += [("image/jpeg", _encode(scaled, "JPEG", q)) for q in JPEG_QUALITIES[1:]]
        for candidate_mime, encoded in candidates:
            if base64_size(len(encoded)) < max_base64_bytes:
                payload = base64.b64encode(encoded).decode("ascii")
                return FittedImage(payload, candidate_mime, original, (width, height), converted_from, True)
        if (width, height) == (1, 1):
            return None
        width, height = max(1, int(width * SHRINK)), max(1, int(height * SHRINK))
