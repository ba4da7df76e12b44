"""Checkpoints and restore end to end: real runs over the loopback server, real tools, real git, real files."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest

from piwork.core.approvals import ApprovalAnswer, ApprovalRequest, ApprovalStore, ProjectRules
from piwork.core.checkpoints import (
    NO_GIT_NOTICE,
    NoCheckpoint,
    RestoreBlocked,
    SessionCheckpoints,
    project_folder,
)
from piwork.core.workflows.runtime import AgentRuntime, create_runtime
from tests.support.checkpoint_runs import files_of, make_project, run_prompt, tree_hash
from tests.support.loopback_server import LoopbackServer, Text, ToolCall, Turn
from tests.support.runtime_options import runtime_options

pytestmark = pytest.mark.anyio


@pytest.fixture
def server() -> Any:
    with LoopbackServer() as srv:
        yield srv


def last_assistant(runtime: AgentRuntime) -> str:
    tree = runtime.store.tree
    return next(str(r.id) for r in reversed(tree.path()) if r.role == "assistant")


def user_entry(runtime: AgentRuntime, index: int = -1) -> str:
    tree = runtime.store.tree
    return [str(r.id) for r in tree.path() if r.role == "user"][index]


def checkpoints_for(runtime: AgentRuntime, tmp_path: Path) -> SessionCheckpoints:
    assert runtime.store.path is not None
    return SessionCheckpoints(runtime.store.cwd, runtime.store.path, tmp_path / "agent")


@pytest.mark.parametrize("kind", ["history", "no-history", "plain"])
async def test_three_branches_restore_byte_for_byte_and_undo(
    server: LoopbackServer, tmp_path: Path, kind: str
) -> None:
    project = make_project(tmp_path, kind)
    git_before = tree_hash(project / ".git") if kind != "plain" else None
    runtime = await create_runtime(runtime_options(tmp_path, server))
    states = {"start": files_of(project)}

    await run_prompt(runtime, server, "first", "a")  # the trunk
    fork, trunk_user = last_assistant(runtime), user_entry(runtime)
    states["fork"] = files_of(project)
    await run_prompt(runtime, server, "branch one", "b")
    tip_one, states["one"] = last_assistant(runtime), files_of(project)

    store = checkpoints_for(runtime, tmp_path)
    plan = store.restore(runtime.store.tree, fork)  # back to the fork, then a second branch from it
    assert files_of(project) == states["fork"]
    assert {"b/new.txt", "made-b.txt"} <= set(plan.removed) and "base.txt" in plan.modified
    await runtime.session.navigate(fork)
    await run_prompt(runtime, server, "branch two", "c")
    tip_two, states["two"] = last_assistant(runtime), files_of(project)

    store.restore(runtime.store.tree, trunk_user)  # before any change: the third branch starts from scratch
    assert files_of(project) == states["start"]
    await runtime.session.navigate(trunk_user)  # a user entry: the leaf moves to its parent
    await run_prompt(runtime, server, "again", "d")
    tip_three, states["three"] = last_assistant(runtime), files_of(project)
    assert states["three"] != states["two"] != states["one"]

    tree = runtime.store.tree
    for entry, expected in [
        (tip_one, "one"),
        (tip_two, "two"),
        (fork, "fork"),
        (trunk_user, "start"),
        (tip_three, "three"),
    ]:
        before = files_of(project)
        dry = store.plan_restore(tree, entry)
        assert files_of(project) == before  # a dry run changes nothing
        store.restore(tree, entry)
        after = files_of(project)
        assert after == states[expected], entry
        assert set(dry.added) | set(dry.modified) | set(dry.removed) == {
            p for p in set(before) | set(after) if before.get(p) != after.get(p)
        }
        assert (project / "build" / "out.bin").read_bytes() == b"\x00ignored"  # ignored: untouched
    # undo brings back what the last restore replaced; undoing again redoes it
    store.restore(tree, trunk_user)
    assert files_of(project) == states["start"]
    store.undo_restore()
    assert files_of(project) == states["three"]
    store.undo_restore()
    assert files_of(project) == states["start"]

    rows = store.calls()
    assert len(rows) == 12 and [r.tool_name for r in rows[:3]] == ["write", "edit", "bash"]
    assert rows[0].entry_id == rows[1].entry_id == rows[2].entry_id  # the reply holding the three calls
    assert runtime.store.tree.record(rows[0].entry_id).role == "assistant"
    assert {"base.txt", "old.txt", "made-a.txt"} <= set(rows[2].changed)  # side by side: not told apart
    assert "a/new.txt" in rows[0].changed
    if git_before is not None:
        assert tree_hash(project / ".git") == git_before
    shadow = project_folder(tmp_path / "agent", project)
    assert (shadow / "git" / "HEAD").is_file() and not (project / ".git" / "refs" / "piwork").exists()
    runtime.store.close()


async def test_a_file_changed_by_hand_is_reported_and_a_restore_over_it_needs_force(
    server: LoopbackServer, tmp_path: Path
) -> None:
    project = make_project(tmp_path, "history")
    runtime = await create_runtime(runtime_options(tmp_path, server))
    await run_prompt(runtime, server, "first", "a")
    fork = last_assistant(runtime)
    (project / "notes.txt").write_text("mine\n")  # between turns, by hand
    await run_prompt(runtime, server, "second", "b")
    store = checkpoints_for(runtime, tmp_path)
    rows = store.calls()
    assert rows[3].outside == ("notes.txt",) and all(not r.outside for i, r in enumerate(rows) if i != 3)
    # restoring to the fork keeps the hand-made file: it was there before the second turn's calls
    store.restore(runtime.store.tree, fork)
    assert (project / "notes.txt").read_text() == "mine\n"

    (project / "base.txt").write_text("edited by hand\n")
    with pytest.raises(RestoreBlocked) as blocked:
        store.restore(runtime.store.tree, user_entry(runtime, 0))
    assert blocked.value.plan.outside == ("base.txt",)
    assert (project / "base.txt").read_text() == "edited by hand\n"  # nothing was changed
    assert store.plan_restore(runtime.store.tree, user_entry(runtime, 0)).outside == ("base.txt",)
    store.restore(runtime.store.tree, user_entry(runtime, 0), force=True)
    assert (project / "base.txt").read_text() == "alpha\nbeta\n"
    store.undo_restore()  # the hand edit comes back
    assert (project / "base.txt").read_text() == "edited by hand\n"
    runtime.store.close()


async def test_large_files_are_left_out_and_named(server: LoopbackServer, tmp_path: Path) -> None:
    project = make_project(tmp_path, "plain")
    (tmp_path / "agent").mkdir()
    (tmp_path / "agent" / "settings.json").write_text('{"piwork": {"checkpoints": {"maxFileMB": 0.001}}}')
    (project / "big.bin").write_bytes(b"x" * 5000)
    runtime = await create_runtime(runtime_options(tmp_path, server))
    await run_prompt(runtime, server, "first", "a")
    store = checkpoints_for(runtime, tmp_path)
    assert store.calls()[0].skipped == ("big.bin",)
    (project / "big.bin").write_bytes(b"y" * 6000)
    store.restore(runtime.store.tree, user_entry(runtime), force=True)
    assert (project / "big.bin").read_bytes() == b"y" * 6000  # never the restore's to write or delete
    assert (project / "base.txt").read_text() == "alpha\nbeta\n"
    runtime.store.close()


async def test_without_git_edit_and_write_targets_are_kept_and_restored(
    server: LoopbackServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = make_project(tmp_path, "plain")
    monkeypatch.setenv("PATH", str(tmp_path / "no-git-here"))
    runtime = await create_runtime(runtime_options(tmp_path, server))
    notices: list[str] = []
    runtime.session.subscribe(lambda e: notices.append(getattr(e, "message", "")))
    server.script(
        Turn(
            [
                ToolCall("write", {"path": "new.txt", "content": "fresh\n"}),
                ToolCall("edit", {"path": "base.txt", "edits": [{"oldText": "beta", "newText": "gamma"}]}),
            ]
        ),
        Turn([Text("done")]),
        Turn([ToolCall("write", {"path": "base.txt", "content": "rewritten\n"})]),
        Turn([Text("done again")]),
    )
    await runtime.session.prompt("change")
    fork = last_assistant(runtime)
    after_first = files_of(project)
    await runtime.session.prompt("more")
    assert notices.count(NO_GIT_NOTICE) == 1
    store = checkpoints_for(runtime, tmp_path)
    assert not store.uses_git and [r.tool_name for r in store.calls()] == ["write", "edit", "write"]
    dry = store.plan_restore(runtime.store.tree, user_entry(runtime, 0))
    assert (dry.added, dry.modified, dry.removed) == ((), ("base.txt",), ("new.txt",))
    store.restore(runtime.store.tree, fork)
    assert files_of(project) == after_first
    store.restore(runtime.store.tree, user_entry(runtime, 0))
    assert (project / "base.txt").read_text() == "alpha\nbeta\n" and not (project / "new.txt").exists()
    store.undo_restore()
    assert files_of(project) == after_first
    assert not (project_folder(tmp_path / "agent", project) / "git").exists()
    runtime.store.close()


async def test_without_git_a_fifo_named_by_a_write_is_not_read_and_a_torn_record_is_skipped(
    server: LoopbackServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Keeping a write's target must not open a FIFO the call names (it would wait for a writer for ever),
    and a journal whose last line was torn (or holds a foreign one) still lists the checkpoints it has."""
    project = make_project(tmp_path, "plain")
    os.mkfifo(project / "pipe")
    monkeypatch.setenv("PATH", str(tmp_path / "no-git-here"))
    runtime = await create_runtime(runtime_options(tmp_path, server))
    server.script(
        Turn([ToolCall("write", {"path": "pipe", "content": "x"})]),
        Turn([Text("tried")]),
        Turn([ToolCall("write", {"path": "base.txt", "content": "rewritten\n"})]),
        Turn([Text("done")]),
    )
    await asyncio.wait_for(runtime.session.prompt("write the pipe"), timeout=30)
    journal = project_folder(tmp_path / "agent", project) / "plain" / "records.jsonl"
    with journal.open("a", encoding="utf-8") as out:
        out.write(
            '[1, 2]\n{"session_file": ' + json.dumps(str(runtime.store.path)) + ', "bogus": 1}\n{"kind": "bef'
        )
    await runtime.session.prompt("rewrite base")
    store = checkpoints_for(runtime, tmp_path)
    assert [r.tool_name for r in store.calls()] == ["write", "write"]
    store.restore(runtime.store.tree, user_entry(runtime, 1))
    assert (project / "base.txt").read_text() == "alpha\nbeta\n"
    runtime.store.close()


async def test_an_entry_without_any_checkpoint_says_so(server: LoopbackServer, tmp_path: Path) -> None:
    make_project(tmp_path, "plain")
    runtime = await create_runtime(runtime_options(tmp_path, server))
    server.script(Turn([ToolCall("read", {"path": "base.txt"})]), Turn([Text("read it")]))
    await runtime.session.prompt("look")
    store = checkpoints_for(runtime, tmp_path)
    assert store.calls() == []  # a read changes nothing: no checkpoint
    with pytest.raises(NoCheckpoint):
        store.plan_restore(runtime.store.tree, last_assistant(runtime))
    assert not project_folder(tmp_path / "agent", runtime.store.cwd).exists()
    runtime.store.close()


async def test_a_call_refused_by_approvals_is_not_checkpointed(
    server: LoopbackServer, tmp_path: Path
) -> None:
    make_project(tmp_path, "plain")
    ApprovalStore(tmp_path / "agent").update(str(tmp_path / "project"), lambda _r: ProjectRules("ask"))
    asked: list[str] = []

    async def deny_bash(request: ApprovalRequest) -> ApprovalAnswer:
        asked.append(request.tool)
        return ApprovalAnswer("deny" if request.tool == "bash" else "approve")

    server.script(
        Turn(
            [
                ToolCall("bash", {"command": "echo no > refused.txt"}),
                ToolCall("write", {"path": "allowed.txt", "content": "yes\n"}),
            ]
        ),
        Turn([Text("done")]),
    )
    runtime = await create_runtime(runtime_options(tmp_path, server, ask_approval=deny_bash))
    await runtime.session.prompt("go")
    assert asked == ["bash", "write"] and not (tmp_path / "project" / "refused.txt").exists()
    rows = checkpoints_for(runtime, tmp_path).calls()
    assert [r.tool_name for r in rows] == ["write"] and "allowed.txt" in rows[0].changed
    runtime.store.close()
