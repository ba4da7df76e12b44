"""Reading user text files the way Pi does: UTF-8 (bad bytes replaced), one leading BOM removed."""

from __future__ import annotations

import os


def read_text(path: str | os.PathLike[str]) -> str:
    with open(path, "rb") as fh:
        data = fh.read()
    return strip_bom(data.decode("utf-8", errors="replace"))


def strip_bom(text: str) -> str:
    return text[1:] if text.startswith("\ufeff") else text


def is_file(path: str) -> bool:
    """A regular file after following symlinks (broken links are not)."""
    return os.path.isfile(path)


def is_dir(path: str) -> bool:
    return os.path.isdir(path)
