"""Reading user text files the way Pi does: UTF-8 (bad bytes replaced), one leading BOM removed.

Reads go through :mod:`piwork.core.safe_read`: only regular files, at most the cap of their kind.
Inside a load limited to reviewed files (:mod:`piwork.core.fs.review_gate`), a gated file must match the review.
"""

from __future__ import annotations

import os

from piwork.core import safe_read
from piwork.core.fs.review_gate import check_reviewed
from piwork.core.safe_read import FileKind


def read_text(path: str | os.PathLike[str], kind: FileKind) -> str:
    """The file's text; inside a load limited to reviewed files (``review_gate``), a gated file must be
    as the trust decision saw it."""
    data = safe_read.read_bytes(path, kind)
    check_reviewed(path, data)
    return strip_bom(data.decode("utf-8", errors="replace"))


def strip_bom(text: str) -> str:
    return text[1:] if text.startswith("\ufeff") else text


def is_file(path: str) -> bool:
    """A regular file after following symlinks (broken links are not)."""
    return os.path.isfile(path)


def is_dir(path: str) -> bool:
    return os.path.isdir(path)
