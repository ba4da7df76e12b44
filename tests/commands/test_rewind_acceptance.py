"""Rewinding files with the conversation, end to end: three branches recorded by real runs over the loopback
server, each writing, editing and creating files through write, edit and bash, rewound with ``piwork restore``
to each branch point, byte for byte (the listing, the first restore, a blocked one and the last undo in real
subprocesses, the others through the same command in this process); undoing brings the later state back; a
file changed by hand between turns is reported and never lost. On a git project without history and on a
plain folder."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from piwork.commands.restore import main as restore_command
from piwork.core.workflows.runtime import AgentRuntime, create_runtime
from tests.support.checkpoint_runs import files_of, make_project, run_prompt, tree_hash
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


def restore(tmp_path: Path, session: str, *args: str) -> dict[str, Any]:
    done = piwork(tmp_path, "restore", session, *args, "--json")
    assert done.returncode == 0, done.stderr
    plan: dict[str, Any] = json.loads(done.stdout)
    return plan


def restore_here(capsys: pytest.CaptureFixture[str], session: str, *args: str) -> dict[str, Any]:
    """The same command run in this process (``PI_CODING_AGENT_DIR`` set): a subprocess each costs a second."""
    capsys.readouterr()
    assert restore_command([session, *args, "--json"]) == 0
    plan: dict[str, Any] = json.loads(capsys.readouterr().out)
    return plan


def last_assistant(runtime: AgentRuntime) -> str:
    return next(str(r.id) for r in reversed(runtime.store.tree.path()) if r.role == "assistant")


def changed_between(before: dict[str, bytes], after: dict[str, bytes]) -> set[str]:
    return {p for p in set(before) | set(after) if before.get(p) != after.get(p)}


@pytest.mark.parametrize("kind", ["no-history", "plain"])
async def test_three_branches_rewound_from_the_command_line_byte_for_byte(
    server: LoopbackServer,
    tmp_path: Path,
    kind: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    project = make_project(tmp_path, kind)
    git_before = tree_hash(project / ".git") if kind != "plain" else None
    runtime = await create_runtime(runtime_options(tmp_path, server))
    assert runtime.store.path is not None
    session = str(runtime.store.path)
    states = {"start": files_of(project)}

    await run_prompt(runtime, server, "trunk", "a")
    fork = last_assistant(runtime)
    trunk_user = next(str(r.id) for r in runtime.store.tree.path() if r.role == "user")
    (project / "notes.txt").write_text("by hand\n")  # between turns, outside piwork
    states["fork"] = files_of(project)
    await run_prompt(runtime, server, "branch one", "b")
    tip_one, states["one"] = last_assistant(runtime), files_of(project)

    listed = json.loads(piwork(tmp_path, "checkpoints", session, "--json").stdout)
    assert [c["tool"] for c in listed["calls"]] == ["write", "edit", "bash"] * 2
    assert listed["calls"][3]["outside"] == ["notes.txt"]  # reported at the next call
    plan = restore(tmp_path, session, "--leaf", fork)  # back to the branch point: the hand-made file stays
    assert files_of(project) == states["fork"] and (project / "notes.txt").read_text() == "by hand\n"
    assert {"b/new.txt", "made-b.txt"} <= set(plan["removed"]) and "old.txt" not in plan["added"]

    await runtime.session.navigate(fork)
    await run_prompt(runtime, server, "branch two", "c")
    tip_two, states["two"] = last_assistant(runtime), files_of(project)
    restore_here(capsys, session, "--leaf", trunk_user)  # before any change: the third branch starts afresh
    assert files_of(project) == states["start"]
    await runtime.session.navigate(trunk_user)
    await run_prompt(runtime, server, "branch three", "d")
    tip_three, states["three"] = last_assistant(runtime), files_of(project)
    assert states["one"] != states["two"] != states["three"] != states["one"]
    runtime.store.close()

    for entry, expected in [
        (tip_one, "one"),
        (fork, "fork"),
        (tip_two, "two"),
        (trunk_user, "start"),
        (tip_three, "three"),
    ]:
        before = files_of(project)
        plan = restore_here(capsys, session, "--leaf", entry)
        after = files_of(project)
        assert after == states[expected], expected  # deleted files back, new ones gone, bytes equal
        assert set(plan["added"]) | set(plan["modified"]) | set(plan["removed"]) == changed_between(
            before, after
        )
        assert (project / "build" / "out.bin").read_bytes() == b"\x00ignored"  # ignored: never touched

    restore_here(capsys, session, "--leaf", tip_one)
    restore_here(capsys, session, "--undo")  # the later state comes back
    assert files_of(project) == states["three"]

    # a file changed by hand since the last checkpoint: the restore says so and changes nothing
    (project / "base.txt").write_text("edited by hand\n")
    blocked = piwork(tmp_path, "restore", session, "--leaf", trunk_user)
    assert blocked.returncode == 2 and "base.txt" in blocked.stderr
    assert (project / "base.txt").read_text() == "edited by hand\n"
    restore_here(capsys, session, "--leaf", trunk_user, "--force")
    assert files_of(project) == states["start"]
    restore(tmp_path, session, "--undo")  # and the hand edit is not lost
    assert (project / "base.txt").read_text() == "edited by hand\n"
    if git_before is not None:
        assert tree_hash(project / ".git") == git_before
