"""A session path that is a FIFO or a device is refused at once: never read, written or waited on."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")

PROBE = """
import json, sys
from piwork.core.errors import PiworkError
from piwork.core.export.html_export import load_for_export
from piwork.core.session.store import open_session
out = {}
for path in sys.argv[1:]:
    for name, call in (
        ("read_only", lambda: open_session(path, writable=False)),
        ("writable", lambda: open_session(path, writable=True)),
        ("export", lambda: load_for_export(path)),
    ):
        try:
            call()
            out[f"{path}:{name}"] = "opened"
        except PiworkError as error:
            out[f"{path}:{name}"] = type(error).__name__
print(json.dumps(out))
"""


def test_fifo_and_device_session_paths_are_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo.jsonl"
    os.mkfifo(fifo)
    zero = tmp_path / "zero.jsonl"
    zero.symlink_to("/dev/zero")
    done = subprocess.run(  # in a child: a regression blocks it, not the test run
        [sys.executable, "-c", PROBE, str(fifo), str(zero)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    results = json.loads(done.stdout)
    assert results == {
        f"{path}:{name}": "NotASessionFile" if name != "export" else "ExportError"
        for path in (fifo, zero)
        for name in ("read_only", "writable", "export")
    }
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)  # left as it was


def test_reading_a_session_again_refuses_what_is_no_longer_a_regular_file(tmp_path: Path) -> None:
    """What an export reads after its parse: a file is read whole; a FIFO put in its place is refused at
    once (never waited on)."""
    from piwork.core.session.reader import read_regular_bytes

    regular = tmp_path / "s.jsonl"
    regular.write_bytes(b'{"type":"session"}\n')
    assert read_regular_bytes(regular) == b'{"type":"session"}\n'
    swapped = tmp_path / "swapped.jsonl"
    os.mkfifo(swapped)
    with pytest.raises(OSError, match="not a regular file"):
        read_regular_bytes(swapped)
