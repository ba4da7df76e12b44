"""Changes since an entry, hunk by hunk, revert and reviewed marks: real runs over the loopback server,
real tools (bash included), real git, real files."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from piwork.core.checkpoints import (
    REVIEW_CUSTOM_TYPE,
    ChangedSinceShown,
    FileChange,
    NoCheckpoint,
    SessionCheckpoints,
    branch_start,
    changes_since,
    record_review,
    revert_file,
    revert_hunk,
    reviewed_keys,
)
from piwork.core.checkpoints.changes import MAX_DIFF_BYTES, hunks_of, split_lines
from piwork.core.session import open_session
from piwork.core.workflows.runtime import AgentRuntime, create_runtime
from tests.core.compaction.pi_reference import reference_context
from tests.support.checkpoint_runs import files_of, make_project, run_prompt
from tests.support.loopback_server import LoopbackServer, Text, ToolCall, Turn
from tests.support.runtime_options import runtime_options

pytestmark = pytest.mark.anyio


@pytest.fixture
def server() -> Any:
    with LoopbackServer() as srv:
        yield srv


def checkpoints_for(runtime: AgentRuntime, tmp_path: Path) -> SessionCheckpoints:
    assert runtime.store.path is not None
    return SessionCheckpoints(runtime.store.cwd, runtime.store.path, tmp_path / "agent")


def by_path(files: tuple[FileChange, ...]) -> dict[str, FileChange]:
    return {f.path: f for f in files}


async def test_every_change_since_the_start_is_listed_bash_made_and_deleted_files_included(
    server: LoopbackServer, tmp_path: Path
) -> None:
    project = make_project(tmp_path, "history")
    runtime = await create_runtime(runtime_options(tmp_path, server))
    await run_prompt(runtime, server, "first", "a")
    tree = runtime.store.tree
    start = branch_start(tree)
    assert start == str(tree.path()[0].id)  # no fork yet: the session's first entry
    changes = changes_since(checkpoints_for(runtime, tmp_path), tree, start)
    files = by_path(changes.files)
    assert {p: f.status for p, f in files.items()} == {
        "a/new.txt": "added",
        "base.txt": "modified",
        "made-a.txt": "added",  # written by the command
        "old.txt": "removed",  # deleted by the command
    }
    assert "build/out.bin" not in files  # ignored by the project's .gitignore
    base = files["base.txt"]
    now = (project / "base.txt").read_text()  # the edit and the command ran side by side: either order
    assert now in ("alpha\nbeta a\na\n", "alpha\nbeta a\n", "alpha\nbeta\na\n")
    assert changes.texts["base.txt"] == ("alpha\nbeta\n", now)
    assert [h.header for h in base.hunks] == [f"@@ -1,2 +1,{now.count(chr(10))} @@"]
    rows = [(r.kind, r.text) for r in base.hunks[0].rows]
    assert rows[0] == (" ", "alpha") and [t for k, t in rows if k == "+"] == [
        line for line in now.splitlines() if line not in ("alpha", "beta")
    ]
    assert (base.added, base.removed) == (sum(k == "+" for k, _ in rows), sum(k == "-" for k, _ in rows))
    assert [(r.kind, r.text) for r in files["old.txt"].hunks[0].rows] == [("-", "to be removed")]
    assert (project / "base.txt").read_text() == now  # computing the changes changed nothing
    runtime.store.close()


async def test_changes_since_a_later_entry_start_from_its_checkpoint_and_a_fork_is_the_branch_start(
    server: LoopbackServer, tmp_path: Path
) -> None:
    make_project(tmp_path, "no-history")
    runtime = await create_runtime(runtime_options(tmp_path, server))
    await run_prompt(runtime, server, "first", "a")
    fork = next(str(r.id) for r in reversed(runtime.store.tree.path()) if r.role == "assistant")
    await run_prompt(runtime, server, "second", "b")
    store = checkpoints_for(runtime, tmp_path)
    tree = runtime.store.tree
    since_fork = by_path(changes_since(store, tree, fork).files)
    assert set(since_fork) == {"b/new.txt", "base.txt", "made-b.txt"}  # old.txt was gone already
    assert any(r.kind == "+" and "b" in r.text for r in since_fork["base.txt"].hunks[0].rows)

    store.restore(tree, fork)
    await runtime.session.navigate(fork)
    await run_prompt(runtime, server, "third", "c")
    assert branch_start(runtime.store.tree) == fork  # two branches leave the fork: this one starts there
    assert set(by_path(changes_since(store, tree, fork).files)) == {"c/new.txt", "base.txt", "made-c.txt"}
    runtime.store.close()


def test_hunks_are_whole_lines_and_rejoin_to_the_exact_bytes() -> None:
    then = b"one\r\ntwo\r\nthree\r\nfour\nfive\nsix\nseven\neight\nnine\nten\neleven\ntwelve\nlast"
    now = then.replace(b"two\r\n", b"TWO\r\n").replace(b"eleven\n", b"").replace(b"last", b"last\n")
    assert b"".join(split_lines(then)) == then
    hunks = hunks_of("f.txt", then, now)
    assert len(hunks) == 2
    first, second = hunks
    assert first.old_lines[1:2] == (b"two\r\n",) and first.new_lines[1:2] == (b"TWO\r\n",)
    assert any(r.kind == "\\" for r in second.rows)  # "last" had no newline then
    # a hunk's key is what it changes, not where: the same change lower in the file keeps its key
    moved = hunks_of("f.txt", b"pad\n" + then, b"pad\n" + now)
    assert [h.key for h in moved] == [h.key for h in hunks]
    assert hunks_of("other.txt", then, now)[0].key != first.key


async def test_reverting_one_hunk_puts_back_exactly_its_bytes_and_nothing_else(
    server: LoopbackServer, tmp_path: Path
) -> None:
    project = make_project(tmp_path, "history")
    lines = [f"line {i}\r\n" for i in range(1, 31)]
    (project / "code.py").write_bytes("".join(lines).encode())
    runtime = await create_runtime(runtime_options(tmp_path, server))
    server.script(
        Turn(
            [
                ToolCall(
                    "bash",
                    {
                        "command": "python3 -c \"import pathlib; p = pathlib.Path('code.py'); "
                        "b = p.read_bytes().replace(b'line 3\\r\\n', b'LINE 3\\r\\n')"
                        ".replace(b'line 25\\r\\n', b'line 25\\r\\nadded\\r\\n'); p.write_bytes(b)\""
                    },
                )
            ]
        ),
        Turn([Text("changed")]),
    )
    await runtime.session.prompt("change code")
    store = checkpoints_for(runtime, tmp_path)
    tree = runtime.store.tree
    start = branch_start(tree)
    assert start is not None
    changes = changes_since(store, tree, start)
    code = by_path(changes.files)["code.py"]
    assert len(code.hunks) == 2
    revert_hunk(store, changes, code, code.hunks[1])
    expected = "".join(lines).replace("line 3\r\n", "LINE 3\r\n").encode()
    assert (project / "code.py").read_bytes() == expected  # the second hunk gone, the first kept, CRLF kept
    changed = (
        "".join(lines).replace("line 3\r\n", "LINE 3\r\n").replace("line 25\r\n", "line 25\r\nadded\r\n")
    )
    last = store.last_restore()
    assert last is not None and last.target == changes.base.commit and last.changed == ("code.py",)
    store.undo_restore()  # a revert is undone like a restore...
    assert (project / "code.py").read_bytes() == changed.encode()
    store.undo_restore()  # ...and undoing again makes it again
    assert (project / "code.py").read_bytes() == expected

    with pytest.raises(ChangedSinceShown):  # the file moved on since these changes were computed
        revert_hunk(store, changes, code, code.hunks[0])
    later = changes_since(store, tree, start)
    again = by_path(later.files)["code.py"]
    assert len(again.hunks) == 1
    revert_hunk(store, later, again, again.hunks[0])
    assert (project / "code.py").read_bytes() == "".join(lines).encode()
    assert "code.py" not in by_path(changes_since(store, tree, start).files)
    runtime.store.close()


@pytest.mark.parametrize("kind", ["git", "plain"])
async def test_reverting_a_file_brings_back_its_bytes_or_removes_it(
    server: LoopbackServer, tmp_path: Path, kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = make_project(tmp_path, "plain")
    if kind == "plain":
        monkeypatch.setenv("PATH", str(tmp_path / "no-git-here"))
    start_files = files_of(project)
    runtime = await create_runtime(runtime_options(tmp_path, server))
    server.script(
        Turn(
            [
                ToolCall("write", {"path": "new/fresh.txt", "content": "fresh\n"}),
                ToolCall("edit", {"path": "base.txt", "edits": [{"oldText": "beta", "newText": "gamma"}]}),
            ]
        ),
        Turn([Text("done")]),
    )
    await runtime.session.prompt("change")
    store = checkpoints_for(runtime, tmp_path)
    assert store.uses_git is (kind == "git")
    tree = runtime.store.tree
    start = branch_start(tree)
    assert start is not None
    changes = changes_since(store, tree, start)
    assert changes.uses_git is (kind == "git")
    files = by_path(changes.files)
    assert {p: f.status for p, f in files.items()} == {"new/fresh.txt": "added", "base.txt": "modified"}
    revert_file(store, changes, files["base.txt"])
    revert_file(store, changes, files["new/fresh.txt"])
    assert files_of(project) == start_files
    assert changes_since(store, tree, start).files == ()
    server.script(Turn([ToolCall("write", {"path": "later.txt", "content": "later\n"})]), Turn([Text("ok")]))
    await runtime.session.prompt("one more")
    if kind == "git":  # the reverts were checkpointed: the next call does not see them as outside changes
        assert store.calls()[-1].outside == ()
    runtime.store.close()


async def test_binary_and_too_large_files_are_listed_with_a_reason_not_diffed(
    server: LoopbackServer, tmp_path: Path
) -> None:
    make_project(tmp_path, "no-history")
    runtime = await create_runtime(runtime_options(tmp_path, server))
    big = MAX_DIFF_BYTES // 20 + 10
    server.script(
        Turn(
            [
                ToolCall(
                    "bash",
                    {
                        "command": "printf 'PNG\\000\\001\\002' > image.bin && "
                        f"python3 -c \"print('x' * 20 * {big})\" > big.txt"
                    },
                )
            ]
        ),
        Turn([Text("made")]),
    )
    await runtime.session.prompt("make files")
    store = checkpoints_for(runtime, tmp_path)
    tree = runtime.store.tree
    start = branch_start(tree)
    assert start is not None
    files = by_path(changes_since(store, tree, start).files)
    assert files["image.bin"].hunks == () and "binary" in (files["image.bin"].note or "")
    assert files["big.txt"].hunks == () and "not compared" in (files["big.txt"].note or "")
    assert files["big.txt"].status == "added" and files["big.txt"].can_revert
    runtime.store.close()


async def test_an_entry_before_any_checkpoint_says_so(server: LoopbackServer, tmp_path: Path) -> None:
    make_project(tmp_path, "plain")
    runtime = await create_runtime(runtime_options(tmp_path, server))
    server.script(Turn([Text("nothing to do")]))
    await runtime.session.prompt("hello")
    start = branch_start(runtime.store.tree)
    assert start is not None
    with pytest.raises(NoCheckpoint):
        changes_since(checkpoints_for(runtime, tmp_path), runtime.store.tree, start)
    runtime.store.close()


async def test_reviewed_marks_survive_reopening_lapse_when_a_hunk_changes_and_never_reach_the_model(
    server: LoopbackServer, tmp_path: Path
) -> None:
    project = make_project(tmp_path, "history")
    runtime = await create_runtime(runtime_options(tmp_path, server))
    await run_prompt(runtime, server, "first", "a")
    store = checkpoints_for(runtime, tmp_path)
    tree = runtime.store.tree
    start = branch_start(tree)
    assert start is not None
    files = by_path(changes_since(store, tree, start).files)
    base, made = files["base.txt"], files["made-a.txt"]
    record_review(tree, [base.hunks[0].key], [base.path])
    record_review(tree, made.review_keys(), [made.path])
    record_review(tree, [files["old.txt"].key], ["old.txt"])
    record_review(tree, [files["old.txt"].key], ["old.txt"], reviewed=False)  # the latest word wins
    marks = reviewed_keys(tree)
    assert base.reviewed(marks) and made.reviewed(marks) and not files["old.txt"].reviewed(marks)

    # the next request carries the conversation without any mark
    server.script(Turn([Text("ok")]))
    await runtime.session.prompt("go on")
    body = json.dumps(server.requests[-1].body)
    assert REVIEW_CUSTOM_TYPE not in body and base.hunks[0].key not in body
    assert all(m.get("customType") != REVIEW_CUSTOM_TYPE for m in tree.build_context().messages)
    path = runtime.store.path
    assert path is not None
    runtime.store.close()

    reopened = open_session(path, writable=False)  # marks are in the file, as Pi writes custom entries
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    marks_written = [e for e in lines if e.get("customType") == REVIEW_CUSTOM_TYPE]
    assert len(marks_written) == 4 and all(e["type"] == "custom" for e in marks_written)
    assert list(marks_written[0])[:3] == ["type", "customType", "data"]
    assert reviewed_keys(reopened.tree) == marks
    reopened.close()

    # the same hunk changed again: a new hunk, not reviewed
    (project / "base.txt").write_text("alpha\nbeta a, once more\na\n")
    again = by_path(changes_since(store, tree, start).files)["base.txt"]
    assert not again.reviewed(marks)
    assert os.path.exists(path)


@pytest.mark.oracle
async def test_pi_reads_a_session_with_review_marks_as_the_same_conversation(
    server: LoopbackServer, tmp_path: Path
) -> None:
    """Pi itself opens the file: its leaf is piwork's (the last mark) and its context holds no mark."""
    make_project(tmp_path, "history")
    runtime = await create_runtime(runtime_options(tmp_path, server))
    await run_prompt(runtime, server, "first", "a")
    store = checkpoints_for(runtime, tmp_path)
    tree = runtime.store.tree
    start = branch_start(tree)
    assert start is not None
    for change in changes_since(store, tree, start).files:
        record_review(tree, change.review_keys(), [change.path])
    path = runtime.store.path
    assert path is not None
    runtime.store.close()
    pi = reference_context(path)
    reopened = open_session(path, writable=False)
    assert pi["leafId"] == reopened.tree.leaf_id
    assert reopened.tree.record(pi["leafId"]).type == "custom"  # type: ignore[union-attr]
    assert pi["context"] == reopened.tree.build_context().to_json()
    assert REVIEW_CUSTOM_TYPE not in json.dumps(pi["context"])
    reopened.close()


async def test_a_mode_change_alone_is_listed_and_reverting_the_file_brings_the_mode_back(
    server: LoopbackServer, tmp_path: Path
) -> None:
    project = make_project(tmp_path, "history")
    runtime = await create_runtime(runtime_options(tmp_path, server))
    server.script(Turn([ToolCall("bash", {"command": "chmod +x base.txt"})]), Turn([Text("made runnable")]))
    await runtime.session.prompt("chmod")
    store = checkpoints_for(runtime, tmp_path)
    tree = runtime.store.tree
    start = branch_start(tree)
    assert start is not None
    changes = changes_since(store, tree, start)
    (change,) = changes.files
    assert change.path == "base.txt" and change.status == "modified" and change.hunks == ()
    assert change.note == "only its mode changed (100644 → 100755)"
    revert_file(store, changes, change)
    assert not os.access(project / "base.txt", os.X_OK)
    assert changes_since(store, tree, start).files == ()
    runtime.store.close()


async def test_a_repository_made_inside_the_project_is_listed_not_compared(
    server: LoopbackServer, tmp_path: Path
) -> None:
    make_project(tmp_path, "history")
    runtime = await create_runtime(runtime_options(tmp_path, server))
    command = (
        "mkdir inner && cd inner && git init -q && echo x > x.txt && git add x.txt && "
        "git -c user.name=a -c user.email=a@a commit -q -m first"
    )
    server.script(Turn([ToolCall("bash", {"command": command})]), Turn([Text("made a repository")]))
    await runtime.session.prompt("nest")
    store = checkpoints_for(runtime, tmp_path)
    tree = runtime.store.tree
    start = branch_start(tree)
    assert start is not None
    files = by_path(changes_since(store, tree, start).files)
    assert set(files) == {"inner"}  # git keeps a repository inside the work tree as a link to its commit
    inner = files["inner"]
    assert inner.status == "added" and inner.hunks == () and inner.note == "a nested repository: not compared"
    assert not inner.can_revert and inner.revert_note == "a nested repository is left to its own history"
    runtime.store.close()


async def test_whole_texts_for_colouring_are_kept_only_up_to_a_budget(
    server: LoopbackServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from piwork.core.checkpoints import changes as changes_module

    make_project(tmp_path, "history")
    runtime = await create_runtime(runtime_options(tmp_path, server))
    await run_prompt(runtime, server, "first", "a")
    store = checkpoints_for(runtime, tmp_path)
    tree = runtime.store.tree
    start = branch_start(tree)
    assert start is not None
    monkeypatch.setattr(changes_module, "TEXTS_KEPT_CHARS", 20)
    changes = changes_since(store, tree, start)
    assert len(changes.files) == 4 and all(f.hunks for f in changes.files)  # every file still diffed
    kept = sum(len(a) + len(b) for a, b in changes.texts.values())
    assert 0 < kept <= 20 and len(changes.texts) < 4  # only what fits is kept whole
    runtime.store.close()
