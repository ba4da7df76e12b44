"""``piwork checkpoints`` and ``piwork restore`` in real subprocesses over a session recorded by a real run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from piwork.core.workflows.runtime import create_runtime
from tests.support.checkpoint_runs import files_of, make_project, run_prompt
from tests.support.loopback_server import LoopbackServer
from tests.support.runtime_options import runtime_options

pytestmark = pytest.mark.anyio


@pytest.fixture
def server() -> Any:
    with LoopbackServer() as srv:
        yield srv


def piwork(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PI_CODING_AGENT_DIR": str(tmp_path / "agent"), "HOME": str(tmp_path / "home")}
    return subprocess.run(
        [sys.executable, "-m", "piwork", *args], env=env, capture_output=True, text=True, timeout=60
    )


async def test_list_dry_run_restore_force_and_undo_from_the_command_line(
    server: LoopbackServer, tmp_path: Path
) -> None:
    project = make_project(tmp_path, "history")
    start = files_of(project)
    runtime = await create_runtime(runtime_options(tmp_path, server))
    await run_prompt(runtime, server, "first", "a")
    (project / "notes.txt").write_text("by hand\n")
    await run_prompt(runtime, server, "second", "b")
    first_user = next(str(r.id) for r in runtime.store.tree.path() if r.role == "user")
    assert runtime.store.path is not None
    session = str(runtime.store.path)
    runtime.store.close()
    end = files_of(project)

    listed = piwork(tmp_path, "checkpoints", session, "--json")
    assert listed.returncode == 0, listed.stderr
    report = json.loads(listed.stdout)
    assert report["git"] is True and [c["tool"] for c in report["calls"]] == ["write", "edit", "bash"] * 2
    assert report["calls"][3]["outside"] == ["notes.txt"]
    text = piwork(tmp_path, "checkpoints", session)
    assert "changed outside piwork before it: notes.txt" in text.stdout and "bash:" in text.stdout

    dry = piwork(tmp_path, "restore", session, "--leaf", first_user, "--dry-run", "--json")
    assert dry.returncode == 0, dry.stderr
    plan = json.loads(dry.stdout)
    assert plan["restored"] is False and "notes.txt" in plan["removed"] and "old.txt" in plan["added"]
    assert files_of(project) == end

    (project / "base.txt").write_text("edited by hand\n")
    blocked = piwork(tmp_path, "restore", session, "--leaf", first_user)
    assert blocked.returncode == 2 and "base.txt" in blocked.stderr and "--force" in blocked.stderr
    assert (project / "base.txt").read_text() == "edited by hand\n"
    forced = piwork(tmp_path, "restore", session, "--leaf", first_user, "--force")
    assert forced.returncode == 0, forced.stderr
    assert "removed: notes.txt" in forced.stdout
    assert files_of(project) == start
    undone = piwork(tmp_path, "restore", session, "--undo")
    assert undone.returncode == 0, undone.stderr
    assert (project / "base.txt").read_text() == "edited by hand\n" and (project / "notes.txt").exists()

    missing = piwork(tmp_path, "restore", session, "--leaf", "nope")
    assert missing.returncode == 1 and "nope not found" in missing.stderr
