"""``piwork worktree new/list`` as a real process on a real repository."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.git_repos import git, make_repo, tree_hashes


@pytest.fixture(autouse=True)
def own_agent_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "agent"
    folder.mkdir()
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(folder))
    return folder


def _piwork(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "piwork", "worktree", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_new_prints_the_folder_and_list_shows_it(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    before = tree_hashes(repo)
    made = _piwork("new", "fix/login", cwd=repo)
    assert made.returncode == 0, made.stderr
    folder = made.stdout.strip()
    assert folder == os.path.realpath(tmp_path / "shop-worktrees" / "fix-login")
    assert git(Path(folder), "branch", "--show-current").strip() == "fix/login"
    listed = _piwork("list", "--cwd", str(repo), cwd=tmp_path)
    assert listed.stdout.splitlines()[1] == f"{folder}\tfix/login"
    assert tree_hashes(repo) == before
    again = _piwork("new", "fix/login", cwd=repo)
    assert again.returncode == 1 and "exists already" in again.stderr


def test_the_setting_places_it_beside_the_repository(tmp_path: Path, own_agent_dir: Path) -> None:
    repo = make_repo(tmp_path)
    (own_agent_dir / "settings.json").write_text(
        json.dumps({"piwork": {"worktrees": {"location": "beside-repo"}}})
    )
    made = _piwork("new", "spike", "--base", "main", cwd=repo)
    assert made.stdout.strip() == os.path.realpath(tmp_path / "shop-spike"), made.stderr


def test_outside_git_it_says_why(tmp_path: Path) -> None:
    done = _piwork("list", cwd=tmp_path)
    assert done.returncode == 1 and "is not in a git repository" in done.stderr
