"""``@file`` arguments of a headless run: text files inlined into the first prompt, images attached.

Each file becomes a ``<file name="ABSOLUTE PATH">`` element: a text file's content (a leading BOM
dropped) between line breaks, an image's processing notes (format conversion, scale) or nothing. An
image that cannot be sent inline is named with the reason instead. Empty files are skipped. Files are
read through the bounded reader: a FIFO, a device or a file past the cap is refused with its name.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from piwork.core import safe_read
from piwork.core.tools.image_fit import ImageNotConvertible, fit_image
from piwork.core.tools.images import detect_image_mime
from piwork.core.tools.paths import resolve_read_path

FILE_ARGUMENT = safe_read.FileKind("file named with @", 64 * safe_read.MIB)
SNIFF_BYTES = 4100
NOT_CONVERTIBLE = "[Image omitted: could not be converted to a supported inline image format.]"
TOO_LARGE = "[Image omitted: could not be resized below the inline image size limit.]"


class FileArgumentError(Exception):
    """A named file is missing or cannot be read (the message names it)."""


@dataclass
class FileArguments:
    text: str = ""
    images: list[dict[str, Any]] = field(default_factory=list)


def read_file_arguments(names: list[str], cwd: str) -> FileArguments:
    """The text and images the ``@`` arguments add to the first prompt (paths relative to ``cwd``)."""
    result = FileArguments()
    for name in names:
        path = os.path.abspath(resolve_read_path(name, cwd))
        if not os.path.lexists(path):
            raise FileArgumentError(f"File not found: {path}")
        try:
            data = safe_read.read_bytes(path, FILE_ARGUMENT)
        except safe_read.UnreadableFile as err:
            raise FileArgumentError(f"Could not read file {path}: {err.strerror}") from None
        except OSError as err:
            raise FileArgumentError(f"Could not read file {path}: {err.strerror or err}") from None
        if not data:
            continue
        mime = detect_image_mime(data[:SNIFF_BYTES])
        if mime is None:
            text = data.decode("utf-8", "replace").removeprefix("\ufeff")
            result.text += f'<file name="{path}">\n{text}\n</file>\n'
            continue
        try:
            fitted = fit_image(data, mime)
        except ImageNotConvertible:
            result.text += f'<file name="{path}">{NOT_CONVERTIBLE}</file>\n'
            continue
        if fitted is None:
            result.text += f'<file name="{path}">{TOO_LARGE}</file>\n'
            continue
        result.images.append({"type": "image", "mimeType": fitted.mime, "data": fitted.data})
        notes = "\n".join(fitted.hints())
        result.text += f'<file name="{path}">{notes}</file>\n'
    return result
