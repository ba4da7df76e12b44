"""Local image paths typed in a prompt become image attachments, referenced as ``[image1]``…

A screenshot is context the model should see, not a path it has to guess how to open, and never bytes
to read as text. A path is attached only when it names an existing regular image file of the project
or of the user (absolute, ``~/…`` or relative to the working folder) under the attachment cap; a
larger image stays a path, with a note that the ``read`` tool resizes it.
"""

from __future__ import annotations

import base64
import os
import re
from dataclasses import dataclass, field

from piwork.core import safe_read

IMAGE_TYPES = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
}
MAX_IMAGE_BYTES = 5 * 1024 * 1024
MAX_IMAGES = 8
_IMAGE = safe_read.FileKind("image attachment", MAX_IMAGE_BYTES)
# a path-like word ending in an image extension: quoted ("a b.png", 'a b.png') or without spaces
_CANDIDATE = re.compile(
    r"""(?P<q>["'])(?P<quoted>[^"'\n]+?\.(?:png|jpe?g|gif|webp))(?P=q)|(?P<bare>(?:~|\.{1,2})?[^\s"'`<>|]*\.(?:png|jpe?g|gif|webp))(?=[\s,;:!?)\]]|$)""",
    re.IGNORECASE,
)


@dataclass
class Attached:
    text: str  # the prompt with each attached path replaced by its [imageN] reference
    images: list[dict[str, str]] = field(default_factory=list)  # image content blocks, in order
    too_large: list[str] = field(default_factory=list)  # paths left as they are


def may_name_images(text: str) -> bool:
    """Cheap check on any thread: could ``text`` name an image file at all?"""
    return _CANDIDATE.search(text) is not None


def attach_images(text: str, cwd: str) -> Attached:
    """Read the images ``text`` names (blocking: run it off the GUI thread)."""
    out = Attached(text)
    pieces: list[str] = []
    last = 0
    seen: dict[str, str] = {}
    for match in _CANDIDATE.finditer(text):
        raw = match.group("quoted") or match.group("bare") or ""
        path = os.path.abspath(os.path.join(cwd, os.path.expanduser(raw)))
        reference = seen.get(path)
        if reference is None:
            if len(out.images) >= MAX_IMAGES or not os.path.isfile(path):
                continue
            mime = IMAGE_TYPES.get(os.path.splitext(path)[1].lower())
            try:
                data = safe_read.read_bytes(path, _IMAGE)
            except OSError:
                if mime is not None and os.path.isfile(path):
                    out.too_large.append(raw)
                continue
            if mime is None:
                continue
            out.images.append(
                {"type": "image", "data": base64.b64encode(data).decode("ascii"), "mimeType": mime}
            )
            reference = seen[path] = f"[image{len(out.images)}]"
        pieces.append(text[last : match.start()])
        pieces.append(f"{reference} ({os.path.basename(path)})")
        last = match.end()
    pieces.append(text[last:])
    out.text = "".join(pieces)
    if out.too_large:
        out.text += (
            "\n\n(Images over the attachment size, left as paths: "
            + ", ".join(out.too_large)
            + ". Open them with the read tool, which resizes them.)"
        )
    return out
