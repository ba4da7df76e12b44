"""Git worktrees on real repositories: create one with its branch, find its base, compare, remove."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from piwork.core.fs import (
    WorktreeError,
    branch_name_problem,
    changes_against_base,
    create_worktree,
    list_worktrees,
    remove_worktree,
    slug,
    uncommitted_changes,
    worktree_of,
    worktree_path,
    worktree_support,
)
from tests.support.git_repos import git, make_repo, tree_hashes


def test_slug_of_a_description() -> None:
    assert slug("Fix the login page's CSS!") == "fix-the-login-page-s-css"
    assert slug("   ") == ""
    assert len(slug("word " * 40)) <= 40


def test_branch_names_are_checked_by_git(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    assert branch_name_problem(str(repo), "fix/login") is None
    assert branch_name_problem(str(repo), "bad..name") == "'bad..name' is not a valid branch name."
    assert branch_name_problem(str(repo), "-x") is not None
    assert branch_name_problem(str(repo), "main") == "A branch 'main' exists already."


def test_a_worktree_goes_where_the_setting_says(tmp_path: Path) -> None:
    assert worktree_path("/a/shop", "fix/login") == "/a/shop-worktrees/fix-login"
    assert worktree_path("/a/shop", "fix", "beside-repo") == "/a/shop-fix"


def test_create_find_compare_and_remove(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    before = tree_hashes(repo)
    info = create_worktree(str(repo), "fix-total")
    assert info.path == os.path.realpath(tmp_path / "shop-worktrees" / "fix-total")
    assert (info.branch, info.base) == ("fix-total", "main")
    found = worktree_of(info.path)
    assert found is not None
    assert (found.branch, found.base, found.repo) == ("fix-total", "main", str(repo))
    assert worktree_of(str(repo)) is None  # the main checkout is no linked worktree
    assert worktree_support(info.path).repo == str(repo)

    wt = Path(info.path)
    (wt / "src" / "app.py").write_text("def total(items):\n    return sum(items) * 2\n")
    (wt / "NOTES.md").write_text("new\n")
    changed = {c.path: c for c in changes_against_base(info.path, "main")}
    assert set(changed) == {"NOTES.md", "src/app.py"}
    assert changed["src/app.py"].status == "M"
    assert "+    return sum(items) * 2" in changed["src/app.py"].diff
    assert changed["NOTES.md"].status == "?" and "+new" in changed["NOTES.md"].diff
    assert tree_hashes(repo) == before  # the main checkout never changes
    assert len(uncommitted_changes(info.path)) == 2

    with pytest.raises(WorktreeError, match="modified or untracked"):
        remove_worktree(found)
    assert wt.is_dir()
    git(wt, "add", ".")
    git(wt, "commit", "-q", "-m", "double")
    # committed, unmerged: the worktree goes, the branch is kept with git's reason
    kept = remove_worktree(found, delete_branch=True)
    assert not wt.exists()
    assert kept is not None and "not fully merged" in kept
    assert "fix-total" in git(repo, "branch", "--list", "fix-total")
    assert tree_hashes(repo) == before


def test_force_removal_and_branch_deletion(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    info = create_worktree(str(repo), "spike", location="beside-repo")
    assert info.path == os.path.realpath(tmp_path / "shop-spike")
    (Path(info.path) / "scratch.txt").write_text("x")
    assert remove_worktree(info, force=True, delete_branch=True) is None
    assert not Path(info.path).exists()
    assert git(repo, "branch", "--list", "spike") == ""
    assert [branch for _path, branch in list_worktrees(str(repo))] == ["main"]


def test_a_base_other_than_the_current_branch(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    git(repo, "branch", "release")
    info = create_worktree(str(repo), "hotfix", base="release")
    found = worktree_of(info.path)
    assert found is not None and found.base == "release"
    with pytest.raises(WorktreeError, match="not a commit or branch"):
        create_worktree(str(repo), "other", base="no-such-ref")
    with pytest.raises(WorktreeError, match="exists already"):
        create_worktree(str(repo), "hotfix")


def test_a_folder_outside_git_cannot_have_worktrees(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    support = worktree_support(str(plain))
    assert support.repo is None and support.reason == f"{plain} is not in a git repository"
    assert worktree_of(str(plain)) is None


def test_no_git_on_the_machine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = make_repo(tmp_path)
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert worktree_support(str(repo)).reason == "git is not installed on this machine"
    with pytest.raises(WorktreeError, match="git is not installed"):
        create_worktree(str(repo), "x")
