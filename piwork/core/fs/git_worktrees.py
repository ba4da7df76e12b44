"""Git worktrees for a line of work: create one with its own branch, tell whether a folder is one, compare it
with the branch it started from, and remove it.

Every call runs ``git`` as a subprocess with explicit arguments and blocks: call it from a worker. Nothing here
writes in a repository's ``.git`` except what ``git worktree add/remove`` and ``git branch -d`` do by design;
the base a worktree started from is read back from the reflog entry ``git worktree add -b`` writes
("branch: Created from BASE"), so no record of piwork's own is kept.

Where a new worktree goes (the ``piwork.worktrees.location`` setting):
- ``worktrees-folder`` (the default): ``<parent>/<repo>-worktrees/<name>``, all of a repository's worktrees
  in one folder beside it;
- ``beside-repo``: ``<parent>/<repo>-<name>``.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from piwork.core.errors import PiworkError

LOCATIONS = ("worktrees-folder", "beside-repo")
GIT_TIMEOUT_S = 60.0
DIFF_CHARS_MAX = 400_000  # one file's diff shown at most (a huge generated file is cut)


class WorktreeError(PiworkError):
    """A git command refused or failed; the message is git's own, first line first."""


@dataclass(frozen=True)
class WorktreeSupport:
    """Whether a folder can get worktrees: ``repo`` is its main checkout's top folder, else ``reason`` says why."""

    repo: str | None
    reason: str | None


@dataclass(frozen=True)
class WorktreeInfo:
    """A linked worktree: its folder, its branch (``None`` when detached), the main checkout and the base."""

    path: str
    branch: str | None
    repo: str
    base: str | None


@dataclass(frozen=True)
class ChangedFile:
    """One file that differs from the base: git's status letter (A, M, D, R…, ``?`` untracked) and its diff."""

    path: str
    status: str
    diff: str


def git_executable() -> str | None:
    return shutil.which("git")


def _git(cwd: str, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    exe = git_executable()
    if exe is None:
        raise WorktreeError("git is not installed on this machine.")
    env = {**os.environ, "LC_ALL": "C", "GIT_TERMINAL_PROMPT": "0"}
    try:
        done = subprocess.run(
            [exe, "-C", cwd, *args],
            capture_output=True,
            text=True,
            encoding="utf-8",
            errors="replace",
            timeout=GIT_TIMEOUT_S,
            env=env,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired) as err:
        raise WorktreeError(f"git {args[0]} did not run: {err}") from err
    if check and done.returncode != 0:
        message = (done.stderr or done.stdout).strip() or f"git {args[0]} failed ({done.returncode})"
        raise WorktreeError(message)
    return done


def worktree_support(folder: str) -> WorktreeSupport:
    """Whether ``folder`` is inside a git repository where worktrees can be made, and its main checkout."""
    if git_executable() is None:
        return WorktreeSupport(None, "git is not installed on this machine")
    done = _git(
        folder, "rev-parse", "--path-format=absolute", "--git-common-dir", "--show-toplevel", check=False
    )
    lines = done.stdout.splitlines()
    if done.returncode != 0 or len(lines) < 2:
        return WorktreeSupport(None, f"{folder} is not in a git repository")
    common = Path(lines[0])
    # the main checkout is the folder holding the common .git (a linked worktree's own top is not it)
    repo = str(common.parent) if common.name == ".git" else lines[1]
    return WorktreeSupport(repo, None)


def slug(text: str, limit: int = 40) -> str:
    """A branch-name-like slug of a short description: lower case words joined by dashes."""
    words = re.findall(r"[a-z0-9]+", text.lower())
    out = ""
    for word in words:
        candidate = f"{out}-{word}" if out else word
        if len(candidate) > limit:
            break
        out = candidate
    return out or (words[0][:limit] if words else "")


def branch_name_problem(repo: str, name: str) -> str | None:
    """Why ``name`` cannot be a new branch (``git check-ref-format --branch``, then whether it exists)."""
    if not name.strip():
        return "A name is needed."
    if name.startswith("-"):
        return f"{name!r} is not a valid branch name."
    done = _git(repo, "check-ref-format", "--branch", name, check=False)
    if done.returncode != 0:
        return f"{name!r} is not a valid branch name."
    exists = _git(repo, "rev-parse", "--verify", "--quiet", f"refs/heads/{name}", check=False)
    if exists.returncode == 0:
        return f"A branch {name!r} exists already."
    return None


def current_base(folder: str) -> str:
    """The branch checked out in ``folder``, or its HEAD commit when detached."""
    done = _git(folder, "symbolic-ref", "--quiet", "--short", "HEAD", check=False)
    if done.returncode == 0 and done.stdout.strip():
        return done.stdout.strip()
    return _git(folder, "rev-parse", "HEAD").stdout.strip()


def worktree_path(repo: str, name: str, location: str = "worktrees-folder") -> str:
    """Where the worktree ``name`` of ``repo`` goes (see the module's doc); a ``/`` in the name makes a dash."""
    top = Path(repo)
    flat = name.replace("/", "-")
    if location == "beside-repo":
        return str(top.parent / f"{top.name}-{flat}")
    return str(top.parent / f"{top.name}-worktrees" / flat)


def create_worktree(
    folder: str, name: str, base: str | None = None, location: str = "worktrees-folder"
) -> WorktreeInfo:
    """``git worktree add -b NAME PATH BASE`` for the repository of ``folder``; the new worktree's info."""
    support = worktree_support(folder)
    if support.repo is None:
        raise WorktreeError(support.reason or "Not a git repository.")
    repo = support.repo
    problem = branch_name_problem(repo, name)
    if problem:
        raise WorktreeError(problem)
    start = (base or "").strip() or current_base(folder)
    if start.startswith("-"):
        raise WorktreeError(f"{start!r} is not a commit or branch.")
    if _git(repo, "rev-parse", "--verify", "--quiet", f"{start}^{{commit}}", check=False).returncode != 0:
        raise WorktreeError(f"{start!r} is not a commit or branch of this repository.")
    path = worktree_path(repo, name, location)
    if os.path.exists(path):
        raise WorktreeError(f"{path} exists already.")
    _git(repo, "worktree", "add", "-b", name, "--", path, start)
    return WorktreeInfo(os.path.realpath(path), name, repo, start)


def _base_of(worktree: str, branch: str | None) -> str | None:
    """The ref the branch was created from, as ``git branch``/``worktree add -b`` logged it."""
    if branch is None:
        return None
    done = _git(worktree, "reflog", "show", "--format=%gs", f"refs/heads/{branch}", "--", check=False)
    lines = done.stdout.splitlines()
    if done.returncode == 0 and lines:
        found = re.match(r"branch: Created from (.+)$", lines[-1].strip())
        if found and found.group(1) != "HEAD":
            return found.group(1)
    return None


def worktree_of(folder: str) -> WorktreeInfo | None:
    """The linked worktree ``folder`` is in (``None`` for a main checkout, a non-git folder or no git)."""
    if git_executable() is None:
        return None
    done = _git(
        folder,
        "rev-parse",
        "--path-format=absolute",
        "--git-common-dir",
        "--git-dir",
        "--show-toplevel",
        check=False,
    )
    lines = done.stdout.splitlines()
    if done.returncode != 0 or len(lines) < 3 or os.path.realpath(lines[0]) == os.path.realpath(lines[1]):
        return None
    common = Path(lines[0])
    repo = str(common.parent) if common.name == ".git" else lines[0]
    head = _git(folder, "symbolic-ref", "--quiet", "--short", "HEAD", check=False)
    branch = head.stdout.strip() if head.returncode == 0 and head.stdout.strip() else None
    base = _base_of(folder, branch)
    if base is None:  # not logged: the branch the main checkout is on
        main = _git(repo, "symbolic-ref", "--quiet", "--short", "HEAD", check=False)
        base = main.stdout.strip() if main.returncode == 0 and main.stdout.strip() else None
    return WorktreeInfo(os.path.realpath(lines[2]), branch, repo, base)


def _cut(text: str) -> str:
    if len(text) <= DIFF_CHARS_MAX:
        return text
    return text[:DIFF_CHARS_MAX] + f"\n… (diff cut at {DIFF_CHARS_MAX:,} characters)\n"


def changes_against_base(worktree: str, base: str) -> list[ChangedFile]:
    """Every file of ``worktree`` (committed, staged, unstaged or untracked) that differs from where its branch
    left ``base`` (their merge base), each with its unified diff."""
    fork = _git(worktree, "merge-base", base, "HEAD").stdout.strip()
    listed = _git(worktree, "diff", "--name-status", "-z", "--no-renames", fork, "--").stdout.split("\0")
    files: list[ChangedFile] = []
    for status, path in zip(listed[::2], listed[1::2], strict=False):
        if not path:
            continue
        diff = _git(worktree, "diff", "--no-color", "--no-ext-diff", fork, "--", path).stdout
        files.append(ChangedFile(path, status, _cut(diff)))
    untracked = _git(worktree, "ls-files", "--others", "--exclude-standard", "-z").stdout.split("\0")
    for path in filter(None, untracked):
        done = _git(worktree, "diff", "--no-color", "--no-index", "--", os.devnull, path, check=False)
        files.append(ChangedFile(path, "?", _cut(done.stdout)))
    return sorted(files, key=lambda f: f.path)


def uncommitted_changes(worktree: str) -> list[str]:
    """``git status --porcelain`` lines of the worktree (untracked files included); empty when clean."""
    return [line for line in _git(worktree, "status", "--porcelain").stdout.splitlines() if line.strip()]


def remove_worktree(info: WorktreeInfo, force: bool = False, delete_branch: bool = False) -> str | None:
    """``git worktree remove [--force] PATH`` from the main checkout, then ``git branch -d BRANCH`` if asked.

    Returns why the branch was kept when ``git branch -d`` refused (an unmerged branch), else ``None``."""
    if os.path.realpath(info.path) == os.path.realpath(info.repo):
        raise WorktreeError("That is the main checkout, not a worktree; it is never removed.")
    args = ["worktree", "remove", *(["--force"] if force else []), "--", info.path]
    _git(info.repo, *args)
    if delete_branch and info.branch:
        done = _git(info.repo, "branch", "-d", "--", info.branch, check=False)
        if done.returncode != 0:
            return (done.stderr or done.stdout).strip().splitlines()[0]
    return None


def list_worktrees(folder: str) -> list[tuple[str, str | None]]:
    """Every worktree of the repository of ``folder`` (the main checkout first): folder and branch."""
    out = _git(folder, "worktree", "list", "--porcelain").stdout
    rows: list[tuple[str, str | None]] = []
    for block in out.strip().split("\n\n"):
        path = branch = None
        for line in block.splitlines():
            if line.startswith("worktree "):
                path = line.removeprefix("worktree ")
            elif line.startswith("branch "):
                branch = line.removeprefix("branch ").removeprefix("refs/heads/")
        if path:
            rows.append((path, branch))
    return rows
