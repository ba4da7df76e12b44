"""Real git repositories in tmp folders for the worktree tests."""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

IDENTITY = ["-c", "user.name=Test", "-c", "user.email=test@example.invalid", "-c", "commit.gpgsign=false"]


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", *IDENTITY, *args], cwd=cwd, check=True, capture_output=True, text=True)
    return done.stdout


def make_repo(root: Path, name: str = "shop") -> Path:
    """A repository ``root/name`` on branch ``main`` with two committed files."""
    repo = root / name
    (repo / "src").mkdir(parents=True)
    (repo / "README.md").write_text("# Shop\n")
    (repo / "src" / "app.py").write_text("def total(items):\n    return sum(items)\n")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "first")
    return repo


def tree_hashes(folder: Path) -> dict[str, str]:
    """Every file under ``folder`` outside ``.git`` with the SHA-256 of its bytes."""
    return {
        str(path.relative_to(folder)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(folder.rglob("*"))
        if path.is_file() and ".git" not in path.relative_to(folder).parts
    }
