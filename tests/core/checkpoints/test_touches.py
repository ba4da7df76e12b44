"""Files Touched and the branch comparison with what the checkpoints saw: real runs over the loopback server,
real tools and real git; a command's files appear, named by the tool, with their diffs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from piwork.core.checkpoints import (
    checkpointed_comparison,
    checkpointed_path_activity,
    session_checkpoints,
    touch_diff,
)
from piwork.core.session import BranchActivity, path_activity
from piwork.core.workflows.runtime import AgentRuntime, create_runtime
from tests.support.checkpoint_runs import make_project, run_prompt
from tests.support.loopback_server import LoopbackServer, Text, ToolCall, Turn
from tests.support.runtime_options import runtime_options

pytestmark = pytest.mark.anyio


@pytest.fixture
def server() -> Any:
    with LoopbackServer() as srv:
        yield srv


def last_assistant(runtime: AgentRuntime) -> str:
    return next(str(r.id) for r in reversed(runtime.store.tree.path()) if r.role == "assistant")


def words(activity: BranchActivity) -> dict[str, list[str]]:
    return {f.display: f.words for f in activity.files()}


async def test_files_a_command_changed_and_files_changed_by_hand_are_listed_with_their_diffs(
    server: LoopbackServer, tmp_path: Path
) -> None:
    project = make_project(tmp_path, "history")
    runtime = await create_runtime(runtime_options(tmp_path, server))
    await run_prompt(runtime, server, "first", "a")  # write a/new.txt, edit base.txt, bash changes three
    (project / "notes.txt").write_text("mine\n")  # by hand, between the turns
    await run_prompt(runtime, server, "second", "b")
    tree, path = runtime.store.tree, runtime.store.path
    checkpoints = session_checkpoints(tree, path, tmp_path / "agent")
    assert checkpoints is not None

    plain = path_activity(tree)
    assert sorted(words(plain)) == ["a/new.txt", "b/new.txt", "base.txt"]  # the file tools' own
    seen = checkpointed_path_activity(tree, None, checkpoints)
    assert seen.checkpointed_calls == 6
    assert words(seen) == {
        "a/new.txt": ["written"],
        "base.txt": ["edited"],  # named by the edit: not listed again for the command beside it
        "old.txt": ["changed by bash"],
        "made-a.txt": ["changed by bash"],
        "notes.txt": ["changed outside piwork"],
        "b/new.txt": ["written"],
        "made-b.txt": ["changed by bash"],
    }
    by_name = {f.display: f for f in seen.files()}
    made = by_name["made-a.txt"].touches[0]
    first_reply = next(r for r in tree.path() if r.role == "assistant")
    assert made.call_entry_id == first_reply.id and made.tool == "bash"
    assert touch_diff(checkpoints, made) == ("+1 a", "")
    removed, _ = touch_diff(checkpoints, by_name["old.txt"].touches[0])
    assert removed == "-1 to be removed"
    assert touch_diff(checkpoints, by_name["notes.txt"].touches[0]) == ("+1 mine", "")
    assert touch_diff(checkpoints, by_name["base.txt"].touches[0]) == (None, "Not seen by the checkpoints.")
    # the file tools' touches come first in their reply, what the checkpoints add after them
    order = [t.path for t in seen.touches]
    assert order.index("base.txt") < order.index("made-a.txt") < order.index("notes.txt")
    runtime.store.close()


async def test_each_side_of_a_comparison_lists_the_files_its_commands_changed(
    server: LoopbackServer, tmp_path: Path
) -> None:
    make_project(tmp_path, "no-history")
    runtime = await create_runtime(runtime_options(tmp_path, server))
    server.script(Turn([Text("ready")]))
    await runtime.session.prompt("start")
    fork = last_assistant(runtime)
    await run_prompt(runtime, server, "one", "one")
    tip_one = last_assistant(runtime)
    await runtime.session.navigate(fork)
    server.script(
        Turn([ToolCall("bash", {"command": "mkdir -p gen && echo x > gen/two.txt"})]), Turn([Text("made")])
    )
    await runtime.session.prompt("two")
    tip_two = last_assistant(runtime)
    tree = runtime.store.tree
    checkpoints = session_checkpoints(tree, runtime.store.path, tmp_path / "agent")

    result = checkpointed_comparison(tree, tip_one, tip_two, checkpoints)
    assert result.ancestor_id == fork
    assert words(result.a) == {
        "one/new.txt": ["written"],
        "base.txt": ["edited"],
        "old.txt": ["changed by bash"],
        "made-one.txt": ["changed by bash"],
    }
    # the second branch's command ran over the first branch's files (nothing was restored): it changed
    # only its own file, and only that is its side's
    assert words(result.b) == {"gen/two.txt": ["changed by bash"]}
    assert result.a.checkpointed_calls == 3 and result.b.checkpointed_calls == 1
    runtime.store.close()


async def test_a_session_without_checkpoints_keeps_the_activity_it_tells(
    server: LoopbackServer, tmp_path: Path
) -> None:
    """A session Pi made (or one with checkpoints off) has none: the activity is the file tools' alone."""
    make_project(tmp_path, "plain")
    (tmp_path / "agent").mkdir()
    (tmp_path / "agent" / "settings.json").write_text('{"piwork": {"checkpoints": {"enabled": false}}}')
    runtime = await create_runtime(runtime_options(tmp_path, server))
    await run_prompt(runtime, server, "first", "a")
    tree = runtime.store.tree
    checkpoints = session_checkpoints(tree, runtime.store.path, tmp_path / "agent")
    assert checkpoints is not None and checkpoints.calls() == []
    seen = checkpointed_path_activity(tree, None, checkpoints)
    assert seen == path_activity(tree) and seen.checkpointed_calls == 0
    assert not (tmp_path / "agent" / "checkpoints").exists()  # reading created nothing
    assert session_checkpoints(tree, None, tmp_path / "agent") is None  # an unsaved session: none
    runtime.store.close()


async def test_without_git_nothing_is_added_and_the_heading_count_stays_nil(
    server: LoopbackServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The plain store keeps only edit/write targets: it saw no command's files, so it adds nothing."""
    make_project(tmp_path, "plain")
    monkeypatch.setenv("PATH", str(tmp_path / "no-git-here"))
    runtime = await create_runtime(runtime_options(tmp_path, server))
    await run_prompt(runtime, server, "first", "a")
    tree = runtime.store.tree
    checkpoints = session_checkpoints(tree, runtime.store.path, tmp_path / "agent")
    assert checkpoints is not None and not checkpoints.uses_git and len(checkpoints.calls()) == 2
    seen = checkpointed_path_activity(tree, None, checkpoints)
    assert seen == path_activity(tree) and seen.checkpointed_calls == 0
    runtime.store.close()
