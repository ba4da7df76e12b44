"""The shadow git repository that holds a project's checkpoints.

One per project, under ``<agent dir>/checkpoints/<hash of the project's real path>/``: ``git`` (its GIT_DIR)
and ``index`` (its GIT_INDEX_FILE), with the project as work tree. Every git call gets an explicit
environment: no user or system configuration, no hooks, no ``GIT_*`` variable from outside, so git never
uses the project's own ``.git`` here, and never writes it (git never adds a path named ``.git``). The index
keeps the stat data of every file, so snapshotting a large unchanged tree is one ``ls-files`` walk that
reads nothing, and its checkpoint one ``commit-tree``: the tree of an unchanged index, the trees of the
commits made here and the session's ref are known or read without a git process (the ref is written with
git's own lock file). The project's ``.gitignore`` files apply as usual, and so do its repository's
``info/exclude``, the user's global excludes and the ignore files above the project (:mod:`.excludes`).

The first snapshot of a project reads every file, so it is bounded: listing stops past ``max_files`` files
or ``first_seconds`` seconds (:class:`TooManyFiles`, remembered for a day in ``too-large``), and the files are
added into one pack rather than one object file each.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import subprocess
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from piwork.core.checkpoints.api import TooManyFiles
from piwork.core.checkpoints.excludes import shadow_exclude, user_excludes_file
from piwork.core.errors import PiworkError

FIRST_SNAPSHOT_SECONDS = 20.0
BULK_ADD = 500  # files added at once from which they go into one pack (one file, not one per object)
_TOO_LARGE_FOR = 24 * 3600  # seconds a project found too large is not walked again

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
    def __init__(
        self,
        folder: Path,
        project: Path,
        max_file_bytes: int,
        max_files: int,
        first_seconds: float = FIRST_SNAPSHOT_SECONDS,
    ) -> None:
        """``folder``: ``<agent dir>/checkpoints/<key>`` (the agent folder is two levels up)."""
        self.folder = folder
        self.project = project
        self.max_file_bytes = max_file_bytes
        self.max_files = max_files
        self.first_seconds = first_seconds
        self.agent_dir = folder.parent.parent
        self.git_dir = folder / "git"
        self.index_file = folder / "index"
        self._exclude: str | None = None  # the shadow's info/exclude as last written or read
        self._options: tuple[str, ...] | None = None  # the git options, with the user's excludes file
        # what saves a git process per checkpoint: the tree of the index as last written (by its stat),
        # and the tree of each commit made or read here
        self._tree_cache: tuple[tuple[int, ...], str] | None = None
        self._trees: dict[str, str] = {}
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

    def options(self) -> tuple[str, ...]:
        if self._options is None:
            excludes = user_excludes_file()
            extra = ("-c", f"core.excludesFile={excludes}") if excludes else ()
            self._options = (*_GIT_OPTIONS, *extra)
        return self._options

    def git(
        self,
        *args: str,
        stdin: bytes | None = None,
        literal: bool = False,
        timeout: float | None = None,
        ok: tuple[int, ...] = (0,),
    ) -> bytes:
        env = {**self._env, "GIT_LITERAL_PATHSPECS": "1"} if literal else self._env
        done = subprocess.run(
            ["git", *self.options(), *args],
            cwd=self.project,
            env=env,
            input=stdin,
            capture_output=True,
            check=False,
            timeout=timeout,
        )
        if done.returncode not in ok:
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
        those files are read, so an unchanged tree costs a walk and a ``write-tree``. The first snapshot
        (no index yet) is bounded: raises :class:`TooManyFiles`. Call under ``lock``."""
        self.ensure()
        first = not self.index_file.exists()
        self._sync_excludes(first)
        deadline = time.monotonic() + self.first_seconds if first else None
        if first:
            listed = self._list_bounded(deadline)
        else:
            listed = self.git("ls-files", "-z", "--others", "--modified", "--deleted", "--exclude-standard")
        changed = sorted(set(_nul_split(listed)))
        large = [p for p in changed if self._too_large(p)]
        if large and not first:  # a file that was small once leaves the index too: the snapshot lacks it
            self._unindex([p.encode(errors="surrogateescape") for p in large])
        rest = [p for p in changed if p not in set(large)]
        if rest:
            self._add(rest, large if first else None, deadline)
        if not first and any(p == ".gitignore" or p.endswith("/.gitignore") for p in rest):
            self._drop_ignored()
        return self._write_tree(), tuple(large)

    def _write_tree(self) -> str:
        """``write-tree``, skipped when the index is the very file the last one read (an unchanged tree)."""
        try:
            seen = self.index_file.stat()
            stamp: tuple[int, ...] | None = (seen.st_ino, seen.st_size, seen.st_mtime_ns, seen.st_ctime_ns)
        except OSError:
            stamp = None
        if stamp is not None and self._tree_cache is not None and self._tree_cache[0] == stamp:
            return self._tree_cache[1]
        tree = self.git("write-tree").decode().strip()
        self._tree_cache = (stamp, tree) if stamp is not None else None
        return tree

    def _add(self, paths: list[str], whole: list[str] | None, deadline: float | None) -> None:
        """Add ``paths`` to the index, or with ``whole`` (the first snapshot) the whole tree but those."""
        options = ("-c", "core.bigFileThreshold=1") if len(paths) >= BULK_ADD else ()
        if whole is None:
            body = b"".join(p.encode(errors="surrogateescape") + b"\0" for p in paths)
            literal = True
        else:  # one pathspec for all: thousands of literal ones are matched against each file
            specs = [".", *(f":(exclude,literal){p}" for p in whole)]
            body = b"".join(p.encode(errors="surrogateescape") + b"\0" for p in specs)
            literal = False
        add = ("add", "-A", "--ignore-errors", "--pathspec-from-file=-", "--pathspec-file-nul")
        remaining = None if deadline is None else max(0.1, deadline - time.monotonic())
        try:
            self.git(*options, *add, stdin=body, literal=literal, timeout=remaining)
        except subprocess.TimeoutExpired:
            lock = self.index_file.with_name(self.index_file.name + ".lock")
            lock.unlink(missing_ok=True)  # left by the add that was stopped
            self.index_file.unlink(missing_ok=True)
            raise self._too_large_now(seconds=self.first_seconds) from None

    def _list_bounded(self, deadline: float | None) -> bytes:
        """The untracked files of a first snapshot, stopped past ``max_files`` or the deadline."""
        marker = self.folder / "too-large"
        try:
            seen = json.loads(marker.read_text(encoding="utf-8"))
            if (
                seen.get("maxFiles") == self.max_files
                and time.time() - marker.stat().st_mtime < _TOO_LARGE_FOR
            ):
                raise TooManyFiles(self.max_files, seen.get("seconds"))
        except (OSError, ValueError, AttributeError):
            pass  # never found too large (or an unreadable note): walk
        process = subprocess.Popen(
            ["git", *self.options(), "ls-files", "-z", "--others", "--exclude-standard"],
            cwd=self.project,
            env=self._env,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        assert process.stdout is not None
        chunks: list[bytes] = []
        count = 0
        with selectors.DefaultSelector() as selector:
            selector.register(process.stdout, selectors.EVENT_READ)
            try:
                while True:
                    left = None if deadline is None else deadline - time.monotonic()
                    if left is not None and (left <= 0 or not selector.select(left)):
                        raise self._too_large_now(seconds=self.first_seconds)
                    chunk = os.read(process.stdout.fileno(), 1 << 16)
                    if not chunk:
                        break
                    chunks.append(chunk)
                    count += chunk.count(b"\0")
                    if count > self.max_files:
                        raise self._too_large_now()
            finally:
                if process.poll() is None:
                    process.kill()
                process.wait()
                process.stdout.close()
        if process.returncode != 0:
            raise GitFailed(f"git ls-files: exit status {process.returncode}")
        return b"".join(chunks)

    def _too_large_now(self, seconds: float | None = None) -> TooManyFiles:
        note = {"maxFiles": self.max_files, "seconds": seconds}
        with contextlib.suppress(OSError):  # not remembered: the next session walks again, as boundedly
            (self.folder / "too-large").write_text(json.dumps(note), encoding="utf-8")
        return TooManyFiles(self.max_files, seconds)

    def _sync_excludes(self, first: bool) -> None:
        """Bring the shadow's ``info/exclude`` up to date (:mod:`.excludes`); files it now ignores leave
        the index."""
        wanted = shadow_exclude(self.project, self.agent_dir)
        target = self.git_dir / "info" / "exclude"
        if self._exclude is None:
            try:
                self._exclude = target.read_text(encoding="utf-8", errors="surrogateescape")
            except OSError:
                self._exclude = ""
        if wanted == self._exclude:
            return
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(wanted, encoding="utf-8", errors="surrogateescape")
        self._exclude = wanted
        if not first:
            self._drop_ignored()

    def _drop_ignored(self) -> None:
        """Take out of the index the files kept before that are ignored now (a pattern added since)."""
        found = self.git("ls-files", "-z", "--cached", "--ignored", "--exclude-standard")
        self._unindex([p for p in found.split(b"\0") if p])

    def _unindex(self, paths: list[bytes]) -> None:
        """Take ``paths`` out of the index, whatever it held for them (the files stay as they are)."""
        if paths:
            self.git(
                "update-index", "-z", "--force-remove", "--stdin", stdin=b"".join(p + b"\0" for p in paths)
            )

    def ignored(self, paths: Sequence[str]) -> set[str]:
        """Which of ``paths`` the project's ignore rules leave out now (tracked or not)."""
        if not paths:
            return set()
        body = b"".join(p.encode(errors="surrogateescape") + b"\0" for p in paths)
        out = self.git("check-ignore", "--no-index", "-z", "--stdin", stdin=body, ok=(0, 1))
        return set(_nul_split(out))

    def _too_large(self, relative: str) -> bool:
        try:
            return (self.project / relative).lstat().st_size > self.max_file_bytes
        except OSError:
            return False

    def commit(self, tree: str, parent: str | None, message: str) -> str:
        parents = ["-p", parent] if parent else []
        commit = self.git("commit-tree", tree, *parents, "-F", "-", stdin=message.encode()).decode().strip()
        self._trees[commit] = tree
        return commit

    def head(self, ref: str) -> tuple[str, str] | None:
        """The commit ``ref`` points at and its tree, or None before the first checkpoint."""
        if not (self.git_dir / "HEAD").is_file():
            return None
        commit = self._read_ref(ref)
        if commit is None:
            out = self.git("for-each-ref", "--format=%(objectname) %(tree)", ref).decode().split()
            return (out[0], out[1]) if len(out) >= 2 else None
        return commit, self.tree_of(commit)

    def _read_ref(self, ref: str) -> str | None:
        """A loose ref's commit (what git writes for a ref that was never packed), or None."""
        try:
            text = (self.git_dir / ref).read_text(encoding="ascii").strip()
        except (OSError, UnicodeDecodeError):
            return None
        return text if len(text) in (40, 64) and all(c in "0123456789abcdef" for c in text) else None

    def set_ref(self, ref: str, commit: str, old: str | None) -> None:
        """Point ``ref`` at ``commit`` if it is still at ``old``: git's own lock file and rename, done here
        (it saves a process per checkpoint); ``update-ref`` where the ref is not a plain loose file."""
        path = self.git_dir / ref
        lock = path.with_name(path.name + ".lock")
        if self._read_ref(ref) != old or (old is None and path.exists()):
            self.git("update-ref", ref, commit, *([old] if old else []))  # git says what is wrong
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            descriptor = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            raise GitFailed(f"git update-ref: {lock} exists: another checkpoint is being taken") from None
        try:
            os.write(descriptor, f"{commit}\n".encode())
        finally:
            os.close(descriptor)
        if self._read_ref(ref) != old:  # moved while the lock was taken
            lock.unlink(missing_ok=True)
            raise GitFailed(f"git update-ref: {ref} moved while it was updated")
        os.replace(lock, path)

    def tree_of(self, commit: str) -> str:
        tree = self._trees.get(commit)
        if tree is None:
            tree = self._trees[commit] = self.git("rev-parse", f"{commit}^{{tree}}").decode().strip()
        return tree

    def log(self, ref: str) -> list[tuple[str, str]]:
        """(commit, message) of every commit reachable from ``ref``, oldest first."""
        if self._read_ref(ref) is None and self.head(ref) is None:
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
        return self.blobs([f"{revision}:{p}".encode(errors="surrogateescape") for p in paths])

    def blobs(self, names: Sequence[bytes]) -> list[bytes | None]:
        """The bytes of the blobs ``names`` name (an object id, or ``<revision>:<path>``), in order, read in one
        process; None where a name names no blob (missing, a folder, a nested repository's commit)."""
        if not names:
            return []
        out = self.git("cat-file", "--batch", stdin=b"".join(name + b"\n" for name in names))
        found: list[bytes | None] = []
        at = 0
        for _ in names:
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
