"""The process entry point leaves what a command loaded out of the cycle collector's last pass."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.core.session.helpers import assistant, user, write_session

PROBE = """
import gc, sys
from piwork.cli import main
before = gc.get_freeze_count()
code = main(["inspect", sys.argv[1]])
print(code, before, gc.get_freeze_count(), file=sys.stderr)
"""


def test_entry_point_freezes_what_is_alive_before_exit(tmp_path: Path) -> None:
    path = write_session(tmp_path / "s.jsonl", [user("u0", None, "hello", 1), assistant("a0", "u0", "hi", 2)])
    done = subprocess.run([sys.executable, "-c", PROBE, str(path)], capture_output=True, text=True)
    code, before, after = (int(x) for x in done.stderr.split())
    assert (code, before) == (0, 0)
    assert after > 0  # the objects alive at the end are in the permanent generation
