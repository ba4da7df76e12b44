"""The first checkpoint of a huge project is bounded (file count, time), and the shadow repository leaves out
what the project's repository ignores beyond its .gitignore files: .git/info/exclude, the user's global
excludes, the ignore files above a project that is a folder of a repository, and the agent folder itself.
Real runs over the loopback server, real git, real files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from piwork.core.checkpoints import SessionCheckpoints, TooManyFiles, project_folder
from piwork.core.checkpoints.excludes import rebase_pattern
from piwork.core.checkpoints.git_store import GitCheckpoints
from piwork.core.checkpoints.shadow import BULK_ADD, ShadowRepo
from piwork.core.workflows.runtime import AgentRuntime, create_runtime
from tests.support.checkpoint_runs import files_of, git, make_project, run_prompt, tree_hash
from tests.support.loopback_server import LoopbackServer, Text, ToolCall, Turn
from tests.support.runtime_options import runtime_options

pytestmark = pytest.mark.anyio
MB = 1024 * 1024


@pytest.fixture
def server() -> Any:
    with LoopbackServer() as srv:
        yield srv


def first_user(runtime: AgentRuntime) -> str:
    return next(str(r.id) for r in runtime.store.tree.path() if r.role == "user")


def shadow(tmp_path: Path, project: Path, max_files: int = 1000, seconds: float = 20.0) -> ShadowRepo:
    return ShadowRepo(
        project_folder(tmp_path / "agent", project), project.resolve(), 10 * MB, max_files, seconds
    )


def tree_files(repo: ShadowRepo, tree: str) -> list[str]:
    return repo.git("ls-tree", "-r", "--name-only", "-z", tree).decode().strip("\0").split("\0")


async def test_a_project_over_the_file_limit_keeps_edit_and_write_targets_and_says_so_once(
    server: LoopbackServer, tmp_path: Path
) -> None:
    project = make_project(tmp_path, "history")
    for index in range(60):  # a generated tree over the limit
        (project / "gen" / f"{index // 10}").mkdir(parents=True, exist_ok=True)
        (project / "gen" / f"{index // 10}" / f"f{index}.txt").write_text(f"{index}\n")
    git_before = tree_hash(project / ".git")
    (tmp_path / "agent").mkdir()
    (tmp_path / "agent" / "settings.json").write_text('{"piwork": {"checkpoints": {"maxFiles": 50}}}')
    runtime = await create_runtime(runtime_options(tmp_path, server))
    notices: list[str] = []
    runtime.session.subscribe(lambda e: notices.append(str(getattr(e, "message", ""))))
    start = files_of(project)
    await run_prompt(runtime, server, "first", "a")
    await run_prompt(runtime, server, "second", "b")
    skipped = [n for n in notices if n.startswith("Checkpoints skipped")]
    assert skipped == [
        "Checkpoints skipped: the project has more than 50 files (piwork.checkpoints.maxFiles); only the "
        "files edit and write change are kept, so changes made by commands cannot be restored."
    ]
    assert runtime.store.path is not None
    store = SessionCheckpoints(runtime.store.cwd, runtime.store.path, tmp_path / "agent")
    assert not store.uses_git  # the session's checkpoints are found where they were kept
    assert [r.tool_name for r in store.calls()] == ["write", "edit", "write", "edit"]
    folder = project_folder(tmp_path / "agent", project)
    assert not (folder / "index").exists() and (folder / "too-large").is_file()
    store.restore(runtime.store.tree, first_user(runtime))
    now = files_of(project)
    assert now["base.txt"] == start["base.txt"] and "a/new.txt" not in now and "b/new.txt" not in now
    assert "made-a.txt" in now  # a command's file: not seen without a whole-project checkpoint
    assert tree_hash(project / ".git") == git_before
    runtime.store.close()


def test_a_first_snapshot_that_takes_too_long_stops_and_is_remembered(tmp_path: Path) -> None:
    project = make_project(tmp_path, "plain")
    slow = shadow(tmp_path, project, seconds=0.001)
    with slow.lock, pytest.raises(TooManyFiles) as stopped:
        slow.snapshot()
    assert "the first snapshot of the project's files took more than 0.001 s" in str(stopped.value)
    assert not slow.index_file.exists()
    again = shadow(tmp_path, project, max_files=1000, seconds=20.0)
    with again.lock:
        # the same limit within a day: not walked again
        note = (slow.folder / "too-large").read_text()
        assert '"maxFiles": 1000' in note
        with pytest.raises(TooManyFiles):
            again.snapshot()
        other = shadow(tmp_path, project, max_files=2000)  # another limit: walked, and small enough
        tree, _ = other.snapshot()
        assert sorted(tree_files(other, tree)) == [".gitignore", "base.txt", "old.txt"]


def test_a_large_first_snapshot_goes_into_one_pack(tmp_path: Path) -> None:
    project = tmp_path / "project"
    for index in range(BULK_ADD + 20):
        (project / f"d{index % 7}").mkdir(parents=True, exist_ok=True)
        (project / f"d{index % 7}" / f"f{index}.txt").write_text(f"file {index}\n")
    (project / "big.bin").write_bytes(b"x" * 2048)
    repo = ShadowRepo(project_folder(tmp_path / "agent", project), project, 1024, 10_000)
    with repo.lock:
        tree, skipped = repo.snapshot()
        assert skipped == ("big.bin",)
        assert len(tree_files(repo, tree)) == BULK_ADD + 20
        packs = list((repo.git_dir / "objects" / "pack").glob("*.pack"))
        loose = [p for p in (repo.git_dir / "objects").glob("??/*")]
        assert len(packs) == 1 and len(loose) < 20  # the blobs in the pack; only the trees loose
        assert repo.snapshot()[0] == tree  # and the index is as complete as ever


async def test_info_exclude_and_global_excludes_are_honoured_and_the_projects_git_is_unchanged(
    server: LoopbackServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = make_project(tmp_path, "history")
    (project / ".git" / "info").mkdir(exist_ok=True)
    (project / ".git" / "info" / "exclude").write_text("# mine\nsecret.env\n/local/\n")
    home = tmp_path / "home"
    (home / ".config" / "git").mkdir(parents=True)
    (home / ".config" / "git" / "ignore").write_text("*.xdg\n")  # git's default: unread when one is named
    (home / "my-ignores").write_text("*.log\n")
    (home / ".gitconfig").write_text("[core]\n\texcludesFile = ~/my-ignores\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    git_before = tree_hash(project / ".git")
    runtime = await create_runtime(runtime_options(tmp_path, server))
    command = "mkdir -p local && echo s > secret.env && echo l > local/x.txt && echo d > debug.log"
    server.script(
        Turn([ToolCall("bash", {"command": f"{command} && echo x > a.xdg && echo k > kept.txt"})]),
        Turn([Text("made")]),
    )
    await runtime.session.prompt("make files")
    assert runtime.store.path is not None
    store = SessionCheckpoints(runtime.store.cwd, runtime.store.path, tmp_path / "agent")
    assert [r.changed for r in store.calls()] == [("a.xdg", "kept.txt")]  # as git itself would see it
    store.restore(runtime.store.tree, first_user(runtime))
    left = files_of(project)
    assert "kept.txt" not in left and "a.xdg" not in left  # the command's files, taken back
    for ignored in ("secret.env", "local/x.txt", "debug.log"):
        assert ignored in left  # never the restore's to delete
    assert tree_hash(project / ".git") == git_before
    runtime.store.close()


def test_the_default_global_ignore_file_is_honoured(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = make_project(tmp_path, "plain")
    (tmp_path / "home" / ".config" / "git").mkdir(parents=True)
    (tmp_path / "home" / ".config" / "git" / "ignore").write_text("*.xdg\n")
    (project / "a.xdg").write_text("x\n")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    repo = shadow(tmp_path, project)
    with repo.lock:
        tree, _ = repo.snapshot()
        assert sorted(tree_files(repo, tree)) == [".gitignore", "base.txt", "old.txt"]


def test_a_pattern_added_later_takes_a_kept_file_out_and_a_restore_leaves_it(tmp_path: Path) -> None:
    project = make_project(tmp_path, "history")
    (project / "notes.txt").write_text("one\n")
    store = GitCheckpoints(
        project_folder(tmp_path / "agent", project), project, tmp_path / "s.jsonl", MB, 1000
    )
    first = store.record("before", "e1", "c1", "bash", 1)
    assert "notes.txt" in tree_files(store.repo, store.repo.tree_of(first.commit))
    (project / ".git" / "info").mkdir(exist_ok=True)
    (project / ".git" / "info" / "exclude").write_text("notes.txt\n")
    (project / "notes.txt").write_text("two\n")
    (project / "base.txt").write_text("changed\n")
    second = store.record("after", "e1", "c1", "bash", 2, since=first.commit)
    assert second.changed == ("base.txt", "notes.txt")  # it left the snapshot
    assert "notes.txt" not in tree_files(store.repo, store.repo.tree_of(second.commit))
    plan = store.restore(first, 3)
    assert plan.modified == ("base.txt",) and plan.added == ()  # the ignored file is not written back
    assert (project / "notes.txt").read_text() == "two\n" and (
        project / "base.txt"
    ).read_text() == "alpha\nbeta\n"


def test_a_project_inside_a_repository_follows_the_ignore_files_above_it(tmp_path: Path) -> None:
    top = tmp_path / "repo"
    (top / "app" / "gen").mkdir(parents=True)
    git(top, "init", "-q")
    (top / ".gitignore").write_text("*.tmp\n/app/gen/\n/other/\n!keep.tmp\n")
    (top / ".git" / "info").mkdir(exist_ok=True)
    (top / ".git" / "info" / "exclude").write_text("/app/private.txt\n")
    for name in ("a.tmp", "keep.tmp", "gen/x.txt", "private.txt", "code.py"):
        (top / "app" / name).write_text("x\n")
    repo = shadow(tmp_path, top / "app")
    with repo.lock:
        tree, _ = repo.snapshot()
        assert sorted(tree_files(repo, tree)) == ["code.py", "keep.tmp"]
    assert not (top / ".git" / "refs" / "piwork").exists()


def test_an_agent_folder_inside_the_project_is_never_checkpointed(tmp_path: Path) -> None:
    home = tmp_path / "home"
    agent = home / ".pi" / "agent"
    (agent / "sessions").mkdir(parents=True)
    (agent / "sessions" / "s.jsonl").write_text("{}\n")
    (agent / "auth.json").write_text("{}\n")
    (home / "notes.txt").write_text("mine\n")
    repo = ShadowRepo(project_folder(agent, home), home.resolve(), 10 * MB, 1000)
    with repo.lock:
        tree, _ = repo.snapshot()
        assert tree_files(repo, tree) == ["notes.txt"]


@pytest.mark.parametrize(
    ("pattern", "base", "project", "expected"),
    [
        ("*.log", "", "app", "*.log"),  # any depth: as it is
        ("/app/gen/", "", "app", "/gen/"),
        ("app/*.txt", "", "app", "/*.txt"),
        ("/*/gen", "", "app", "/gen"),
        ("!/app/keep", "", "app", "!/keep"),
        ("/other/x", "", "app", None),  # another folder
        ("/app", "", "app", None),  # the project itself
        ("**/cache", "", "app/web", "**/cache"),
        ("lib/out/", "app", "app/lib", "/out/"),  # written in app/.gitignore, for app/lib
        ("# a comment", "", "app", None),
        ("", "", "app", None),
        ("sub/x", "", "", "/sub/x"),  # the project is the top: anchored as written
    ],
)
def test_patterns_are_rewritten_relative_to_the_project(
    pattern: str, base: str, project: str, expected: str | None
) -> None:
    assert rebase_pattern(pattern, base, project) == expected
