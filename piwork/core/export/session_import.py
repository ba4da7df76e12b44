"""Importing a session file: a byte-for-byte copy into a sessions folder; the source is only read.

The file must be a session (a valid header first); a v1/v2 file is copied as it is and migrated when
it is opened, which keeps a backup of the copy, never touching the original.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from piwork.core.export.html_export import ExportError
from piwork.core.session.format import is_valid_header, session_file_name
from piwork.core.session.listing import read_header


class ImportRefused(ExportError):
    """A file that cannot be imported (message written for the user)."""


def import_session(source: str | os.PathLike[str], sessions_folder: str | os.PathLike[str]) -> Path:
    """Copy ``source`` into ``sessions_folder`` and return the copy's path.

    The copy keeps the source's file name when it is free there (or a name made from the header's
    time and id), with ``-2``, ``-3``... added when that is taken by another file. A file that is
    already in the folder is not copied again: its path is returned.
    """
    source_path = Path(os.path.abspath(source))
    if not source_path.is_file():
        raise ImportRefused(f"No such file: {source}")
    header = read_header(source_path)
    if header is None or not is_valid_header(header):
        raise ImportRefused(f"Not a session file (its first line is not a session header): {source}")
    folder = Path(os.path.abspath(sessions_folder))
    folder.mkdir(parents=True, exist_ok=True)
    if source_path.parent == folder:
        return source_path
    name = source_path.name
    if not name.endswith(".jsonl"):
        stamp = header.get("timestamp")
        name = session_file_name(stamp if isinstance(stamp, str) else "imported", str(header["id"]))
    stem = name[: -len(".jsonl")]
    candidate = folder / name
    number = 1
    while True:
        try:
            with open(source_path, "rb") as src, open(candidate, "xb") as dst:
                shutil.copyfileobj(src, dst, 1024 * 1024)
                dst.flush()
                os.fsync(dst.fileno())
            return candidate
        except FileExistsError:
            if _same_content(candidate, source_path):
                return candidate  # imported before: open that copy
            number += 1
            candidate = folder / f"{stem}-{number}.jsonl"


def _same_content(a: Path, b: Path) -> bool:
    try:
        if a.stat().st_size != b.stat().st_size:
            return False
        with open(a, "rb") as fa, open(b, "rb") as fb:
            while True:
                block_a, block_b = fa.read(1 << 20), fb.read(1 << 20)
                if block_a != block_b:
                    return False
                if not block_a:
                    return True
    except OSError:
        return False
