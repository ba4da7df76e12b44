"""A setting, a model list, a trust store or a project resource that is a FIFO, a device or huge is
named and skipped: start-up never waits on it and never reads it into memory."""

from __future__ import annotations

import os
import resource
import stat
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.support.loopback_server import LoopbackServer, Text, Turn

from .test_headless import Env, env, server  # noqa: F401 (fixtures)


def _bounded_memory() -> None:
    hard = resource.getrlimit(resource.RLIMIT_DATA)[1]
    limit = 2 * 1024 * 1024 * 1024
    resource.setrlimit(
        resource.RLIMIT_DATA, (limit if hard == resource.RLIM_INFINITY else min(limit, hard), hard)
    )


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _zero(path: Path) -> None:
    path.symlink_to("/dev/zero")


def _huge(path: Path) -> None:
    with open(path, "wb") as out:
        out.truncate(3 * 1024 * 1024 * 1024)  # sparse: 3 GB to read, nothing on disk


MAKERS: dict[str, Callable[[Path], None]] = {"fifo": _fifo, "dev-zero": _zero, "huge": _huge}

# Every file read at the start of a run in a trusted project, relative to the temp root.
PLACES = (
    "agent/settings.json",
    "project/.pi/settings.json",
    "agent/models.json",
    "agent/trust.json",
    "agent/AGENTS.md",
    "project/AGENTS.md",
    "project/.pi/SYSTEM.md",
    "project/.pi/APPEND_SYSTEM.md",
    "project/.pi/skills/deploy/SKILL.md",
    "project/.pi/skills/.gitignore",
    "project/.pi/prompts/review.md",
    "agent/skills/notes.md",
)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("kind", sorted(MAKERS))
def test_special_or_huge_files_everywhere_are_skipped_and_the_run_goes_on(
    kind: str,
    server: LoopbackServer,  # noqa: F811
    env: Env,  # noqa: F811
) -> None:
    made: dict[Path, os.stat_result] = {}
    for relative in PLACES:
        path = env.agent.parent / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.unlink(missing_ok=True)
        MAKERS[kind](path)
        made[path] = os.lstat(path)
    server.script(Turn([Text("ok")]))
    done = subprocess.run(
        [sys.executable, "-m", "piwork", "-p", "hi", "--approve", *env.args(server, "anthropic")],
        cwd=env.cwd,
        env=env.vars,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        preexec_fn=_bounded_memory,  # a regression reading /dev/zero fails here, not the machine
    )
    assert (done.returncode, done.stdout) == (0, "ok\n"), done.stderr
    assert "Traceback" not in done.stderr and "MemoryError" not in done.stderr
    assert str(env.agent / "settings.json") in done.stderr  # named, with what it is
    for path, before in made.items():
        after = os.lstat(path)
        assert stat.S_IFMT(after.st_mode) == stat.S_IFMT(before.st_mode) and after.st_size == before.st_size
