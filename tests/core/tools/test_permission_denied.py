"""Permission failures, as an unprivileged user would meet them.

File modes do not stop root, so each call runs in a child process that first gives up the
capabilities that bypass file modes (``CAP_DAC_OVERRIDE``, ``CAP_DAC_READ_SEARCH``); a root child
then meets permission errors exactly as a normal user does. The tool runs for real, against real
files whose modes deny access.
"""

from __future__ import annotations

import ctypes
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

PR_CAPBSET_DROP = 24
CAP_DAC_OVERRIDE = 1
CAP_DAC_READ_SEARCH = 2
REPO = Path(__file__).resolve().parents[3]

_CHILD = """
import json, sys
from tests.core.tools.helpers import call, text
tool, args, cwd = json.loads(sys.argv[1])
out = call(tool, args, __import__("pathlib").Path(cwd), log_dir=__import__("pathlib").Path(cwd) / ".logs")
print(json.dumps({"isError": out.is_error, "text": text(out)}))
"""


def _drop_file_mode_bypass() -> None:
    # Removed from the bounding set, the capabilities are gone from the program exec'd next.
    libc = ctypes.CDLL(None, use_errno=True)
    for cap in (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH):
        if libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 and os.geteuid() == 0:
            raise OSError(ctypes.get_errno(), "could not drop a capability")


@pytest.fixture
def workdir() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="piwork-perm-"))
    try:
        yield path
    finally:
        for p in [path, *path.rglob("*")]:
            if not p.is_symlink():
                p.chmod(0o700)
        shutil.rmtree(path)


def _call(tool: str, args: dict[str, Any], cwd: Path) -> dict[str, Any]:
    result = subprocess.run(
        [sys.executable, "-c", _CHILD, json.dumps([tool, args, str(cwd)])],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO), "HOME": str(cwd)},
        preexec_fn=_drop_file_mode_bypass,
    )
    assert result.returncode == 0, result.stderr
    outcome: dict[str, Any] = json.loads(result.stdout)
    return outcome


def test_read_of_an_unreadable_file_is_an_error(workdir: Path) -> None:
    secret = workdir / "secret.txt"
    secret.write_text("classified")
    secret.chmod(0)
    out = _call("read", {"path": "secret.txt"}, workdir)
    assert out["isError"] and out["text"].startswith("EACCES: permission denied")
    assert "classified" not in out["text"]


def test_grep_reports_unreadable_files_next_to_matches(workdir: Path) -> None:
    (workdir / "a.txt").write_text("needle\n")
    (workdir / "b.txt").write_text("needle\n")
    (workdir / "b.txt").chmod(0)
    out = _call("grep", {"pattern": "needle"}, workdir)
    assert out["text"].startswith("a.txt:1: needle\n\n[Some files could not be searched: ")


def test_write_into_a_read_only_folder_fails_and_creates_nothing(workdir: Path) -> None:
    locked = workdir / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    out = _call("write", {"path": "locked/new.txt", "content": "data"}, workdir)
    assert out["isError"] and "EACCES" in out["text"]
    assert not (locked / "new.txt").exists()


def test_edit_of_a_read_only_file_fails_and_leaves_it_unchanged(workdir: Path) -> None:
    target = workdir / "ro.txt"
    target.write_text("old text\n")
    target.chmod(0o444)
    out = _call("edit", {"path": "ro.txt", "edits": [{"oldText": "old", "newText": "new"}]}, workdir)
    assert out["isError"] and "EACCES" in out["text"]
    assert target.read_text() == "old text\n"
