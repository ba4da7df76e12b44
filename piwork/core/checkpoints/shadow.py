"""The shadow git repository that holds a project's checkpoints.

One per project, under ``<agent dir>/checkpoints/<hash of the project's real path>/``: ``git`` (its
GIT_DIR) and ``index`` (its GIT_INDEX_FILE), with the project as work tree. Every git call gets an explicit
environment: no user or system configuration, no hooks, no ``GIT_*`` variable from outside, so the
project's own ``.git`` is never read or written (git never adds a path named ``.git``). The index keeps
the stat data of every file, so snapshotting a large unchanged tree is one ``git add -A`` that reads
nothing and a ``write-tree`` that writes nothing new. The project's ``.gitignore`` files apply as usual.
"""

from __future__ import annotations

import os
import subprocess
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from piwork.core.errors import PiworkError

_GIT_OPTIONS = (
    "-c",
    "core.hooksPath=/dev/null",
    "-c",
    "core.autocrlf=false",
    "-c",
    "core.safecrlf=false",
    "-c",
    "core.fsmonitor=false",
    "-c",
    "core.untrackedCache=true",
    "-c",
    "core.quotePath=false",
    "-c",
    "gc.auto=0",
    "-c",
    "advice.addEmbeddedRepo=false",
)
_IDENTITY = {
    "GIT_AUTHOR_NAME": "piwork",
    "GIT_AUTHOR_EMAIL": "piwork@localhost",
    "GIT_COMMITTER_NAME": "piwork",
    "GIT_COMMITTER_EMAIL": "piwork@localhost",
}
_locks: dict[Path, threading.Lock] = {}
_locks_guard = threading.Lock()


class GitFailed(PiworkError):
    """A git command of the shadow repository failed."""


def _lock_for(path: Path) -> threading.Lock:
    with _locks_guard:
        return _locks.setdefault(path, threading.Lock())


@dataclass(frozen=True)
class TreeDiff:
    added: tuple[str, ...]
    modified: tuple[str, ...]
    removed: tuple[str, ...]

    @property
    def paths(self) -> tuple[str, ...]:
        return tuple(sorted((*self.added, *self.modified, *self.removed)))


class ShadowRepo:
    def __init__(self, folder: Path, project: Path, max_file_bytes: int) -> None:
        self.folder = folder
        self.project = project
        self.max_file_bytes = max_file_bytes
        self.git_dir = folder / "git"
        self.index_file = folder / "index"
        self.lock = _lock_for(folder)  # one snapshot or restore at a time per project in this process
        env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
        env.update(_IDENTITY)
        env.update(
            GIT_DIR=str(self.git_dir),
            GIT_WORK_TREE=str(project),
            GIT_INDEX_FILE=str(self.index_file),
            GIT_CONFIG_NOSYSTEM="1",
            GIT_CONFIG_GLOBAL="/dev/null",
            GIT_TERMINAL_PROMPT="0",
            GIT_OPTIONAL_LOCKS="0",
            LC_ALL="C",
        )
        self._env = env

    def git(self, *args: str, stdin: bytes | None = None, literal: bool = False) -> bytes:
        env = {**self._env, "GIT_LITERAL_PATHSPECS": "1"} if literal else self._env
        done = subprocess.run(
            ["git", *_GIT_OPTIONS, *args],
            cwd=self.project,
            env=env,
            input=stdin,
            capture_output=True,
            check=False,
        )
        if done.returncode != 0:
            message = done.stderr.decode(errors="replace").strip() or f"exit status {done.returncode}"
            raise GitFailed(f"git {args[0]}: {message}")
        return done.stdout

    def ensure(self) -> None:
        if (self.git_dir / "HEAD").is_file():
            return
        self.folder.mkdir(parents=True, exist_ok=True)
        self.git("init", "-q")
        (self.folder / "project").write_text(str(self.project) + "\n", encoding="utf-8")

    # ---- snapshots ---------------------------------------------------------------------------------

    def snapshot(self) -> tuple[str, tuple[str, ...]]:
        """The tree of the project's files now (ignored files and ``.git`` left out), and the files left
        out for being over the size limit. One walk of the tree lists what differs from the index; only
        those files are read, so an unchanged tree costs a walk and a ``write-tree``. Call under ``lock``."""
        self.ensure()
        listed = self.git("ls-files", "-z", "--others", "--modified", "--deleted", "--exclude-standard")
        changed = sorted(set(_nul_split(listed)))
        large = [p for p in changed if self._too_large(p)]
        if large:  # a file that was small once leaves the index too: the snapshot does not hold it
            self.git("rm", "-q", "--cached", "--ignore-unmatch", "--", *large, literal=True)
        rest = [p for p in changed if p not in set(large)]
        if rest:
            body = b"".join(p.encode(errors="surrogateescape") + b"\0" for p in rest)
            self.git(
                "add",
                "-A",
                "--ignore-errors",
                "--pathspec-from-file=-",
                "--pathspec-file-nul",
                stdin=body,
                literal=True,
            )
        tree = self.git("write-tree").decode().strip()
        return tree, tuple(large)

    def _too_large(self, relative: str) -> bool:
        try:
            return (self.project / relative).lstat().st_size > self.max_file_bytes
        except OSError:
            return False

    def commit(self, tree: str, parent: str | None, message: str) -> str:
        parents = ["-p", parent] if parent else []
        return self.git("commit-tree", tree, *parents, "-F", "-", stdin=message.encode()).decode().strip()

    def head(self, ref: str) -> tuple[str, str] | None:
        """The commit ``ref`` points at and its tree, or None before the first checkpoint."""
        if not (self.git_dir / "HEAD").is_file():
            return None
        out = self.git("for-each-ref", "--format=%(objectname) %(tree)", ref).decode().split()
        return (out[0], out[1]) if len(out) >= 2 else None

    def set_ref(self, ref: str, commit: str, old: str | None) -> None:
        self.git("update-ref", ref, commit, *([old] if old else []))

    def tree_of(self, commit: str) -> str:
        return self.git("rev-parse", f"{commit}^{{tree}}").decode().strip()

    def log(self, ref: str) -> list[tuple[str, str]]:
        """(commit, message) of every commit reachable from ``ref``, oldest first."""
        if self.head(ref) is None:
            return []
        out = self.git("log", "--format=%H%x01%B%x02", ref).decode(errors="replace")
        pairs = []
        for chunk in out.split("\x02"):
            commit, _, message = chunk.strip().partition("\x01")
            if commit:
                pairs.append((commit, message))
        pairs.reverse()
        return pairs

    def diff(self, old_tree: str, new_tree: str) -> TreeDiff:
        if old_tree == new_tree:
            return TreeDiff((), (), ())
        out = self.git("diff-tree", "-r", "-z", "--no-renames", "--name-status", old_tree, new_tree)
        fields = _nul_split(out)
        added: list[str] = []
        modified: list[str] = []
        removed: list[str] = []
        for status, path in zip(fields[::2], fields[1::2], strict=False):
            {"A": added, "D": removed}.get(status[:1], modified).append(path)
        return TreeDiff(tuple(added), tuple(modified), tuple(removed))

    def contents(self, revision: str, paths: Sequence[str]) -> list[bytes | None]:
        """The bytes of ``paths`` in ``revision`` (None where it has no such file), read in one process."""
        if not paths or not (self.git_dir / "HEAD").is_file():
            return [None] * len(paths)
        asked = b"".join(f"{revision}:{p}".encode(errors="surrogateescape") + b"\n" for p in paths)
        out = self.git("cat-file", "--batch", stdin=asked)
        found: list[bytes | None] = []
        at = 0
        for _ in paths:
            end = out.index(b"\n", at)
            header = out[at:end].split(b" ")
            at = end + 1
            if len(header) != 3 or header[1] != b"blob":  # "<name> missing", or not a file
                found.append(None)
                continue
            size = int(header[2])
            found.append(out[at : at + size])
            at += size + 1  # the blob, then a newline
        return found

    # ---- restoring ---------------------------------------------------------------------------------

    def write_files(self, tree: str, paths: Sequence[str]) -> None:
        """Write ``paths`` from ``tree`` into the project, bytes and mode (index updated for them)."""
        if paths:
            body = b"".join(p.encode() + b"\0" for p in paths)
            self.git(
                "checkout", tree, "--pathspec-from-file=-", "--pathspec-file-nul", stdin=body, literal=True
            )

    def remove_files(self, paths: Sequence[str]) -> None:
        """Delete ``paths`` from the project, then the folders they leave empty (never the project)."""
        root = self.project.resolve()
        for relative in paths:
            target = self.project / relative
            target.unlink(missing_ok=True)
            folder = target.parent
            while folder.resolve() != root and root in folder.resolve().parents:
                try:
                    folder.rmdir()
                except OSError:
                    break
                folder = folder.parent


def _nul_split(data: bytes) -> list[str]:
    return [p.decode(errors="surrogateescape") for p in data.split(b"\0") if p]
