"""What changed in the project's files since a session entry: the files, and each text file's hunks.

The files "then" are the entry's checkpoint (:func:`checkpoint_for`); the files "now" are a fresh snapshot
of the project (git store: the shadow index, so command-made, deleted and created files all show; plain
store: the edit/write targets it kept). A text file's changes are hunks of whole lines, computed here on
the bytes, so reverting one hunk puts back exactly that hunk's lines (line endings and all). Binary files,
files over the diff limit and files left out of the checkpoints are listed with the reason they are not
diffed. Everything here reads files and runs git: call it off the event loop.
"""

from __future__ import annotations

import difflib
import hashlib
import os
import re
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from piwork.core.checkpoints.points import checkpoint_for
from piwork.core.checkpoints.records import CheckpointRecord
from piwork.core.errors import PiworkError
from piwork.core.safe_read import HASHED_PROJECT_FILE, FileKind, UnreadableFile, digest_file, format_bytes
from piwork.core.safe_read import read_bytes as read_bounded
from piwork.core.session.tree import SessionTree

if TYPE_CHECKING:
    from piwork.core.checkpoints.api import SessionCheckpoints
    from piwork.core.checkpoints.git_store import GitCheckpoints
    from piwork.core.checkpoints.plain_store import PlainCheckpoints

MAX_DIFF_BYTES = 2 * 1024 * 1024  # a side larger than this is listed, not diffed
MAX_DIFF_LINES = 20_000
CONTEXT_LINES = 3
TEXTS_KEPT_CHARS = 32_000_000  # whole texts kept for colouring; past this, further files show plain
_BINARY_PROBE = 8000
_DIFFED = FileKind("file to compare", MAX_DIFF_BYTES)
_LINES = re.compile(rb"[^\n]*\n|[^\n]+\Z")

FileStatus = Literal["added", "modified", "removed"]
LineKind = Literal[" ", "-", "+", "\\"]
NO_NEWLINE = "No newline at end of file"


class ChangedSinceShown(PiworkError):
    """The file on disk is no longer the one the changes were computed from: show them again first."""


@dataclass(frozen=True)
class DiffLine:
    kind: LineKind  # " " context, "-" only then, "+" only now, "\\" the line above has no newline
    text: str  # the line as text (decoded, without its line ending)
    old_no: int | None  # 1-based line number then / now
    new_no: int | None


@dataclass(frozen=True)
class Hunk:
    """Consecutive changed lines with their context: ``new_lines`` (now, from ``new_start``) replace
    ``old_lines`` (then, from ``old_start``); both 0-based line indexes and the exact bytes."""

    old_start: int
    old_lines: tuple[bytes, ...]
    new_start: int
    new_lines: tuple[bytes, ...]
    rows: tuple[DiffLine, ...]
    key: str  # what the hunk changes, not where: a reviewed mark follows it, and lapses if it changes

    @property
    def header(self) -> str:
        return f"@@ -{_range(self.old_start, len(self.old_lines))} +{_range(self.new_start, len(self.new_lines))} @@"


@dataclass(frozen=True)
class FileChange:
    path: str  # relative to the project, with "/"
    status: FileStatus
    before: str | None  # the bytes then, as "sha256:<hex>" (or the store's blob id); None: absent then
    after: str | None  # the bytes now, "sha256:<hex>"; None: absent now
    hunks: tuple[Hunk, ...] = ()
    note: str | None = None  # why the file is listed but not diffed (binary, too large...)
    added: int = 0  # lines
    removed: int = 0
    can_revert: bool = True
    revert_note: str | None = None  # why it cannot be reverted

    @cached_property
    def key(self) -> str:
        """The file's reviewed mark: this change of this file, from these bytes to these."""
        return "file:" + _digest(f"{self.path}\0{self.before}\0{self.after}".encode())

    def reviewed(self, marks: frozenset[str] | set[str]) -> bool:
        if self.key in marks:
            return True
        return bool(self.hunks) and all(h.key in marks for h in self.hunks)

    def review_keys(self) -> tuple[str, ...]:
        """Every mark reviewing the whole file sets (or clears)."""
        return (self.key, *(h.key for h in self.hunks))


@dataclass(frozen=True)
class ChangeSet:
    """The files changed since ``entry_id`` (its checkpoint ``base``) up to now, sorted by path."""

    entry_id: str
    base: CheckpointRecord
    files: tuple[FileChange, ...]
    uses_git: bool
    texts: dict[str, tuple[str, str]] = field(default_factory=dict, compare=False, repr=False)
    # path -> (text then, text now) of each diffed file, for colouring whole files (not per hunk)

    def file(self, path: str) -> FileChange | None:
        return next((f for f in self.files if f.path == path), None)


def _range(start: int, count: int) -> str:
    first = start + 1 if count else start
    return f"{first}" if count == 1 else f"{first},{count}"


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:32]


def _sha(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def split_lines(data: bytes) -> list[bytes]:
    """The lines of ``data``, each with its ``\\n`` (the last may have none): joined, they are ``data``."""
    return _LINES.findall(data)


def _text(line: bytes) -> str:
    return line.rstrip(b"\n").rstrip(b"\r").decode("utf-8", errors="replace")


def is_binary(data: bytes) -> bool:
    if b"\0" in data[:_BINARY_PROBE]:
        return True
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return False


def hunks_of(path: str, then: bytes, now: bytes, context: int = CONTEXT_LINES) -> tuple[Hunk, ...]:
    """The hunks turning ``then`` into ``now``, whole lines, ``context`` lines around each change."""
    a, b = split_lines(then), split_lines(now)
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    hunks = []
    for group in matcher.get_grouped_opcodes(context):
        i1, i2, j1, j2 = group[0][1], group[-1][2], group[0][3], group[-1][4]
        rows: list[DiffLine] = []
        changed = hashlib.sha256(path.encode(errors="surrogateescape") + b"\0")
        for tag, k1, k2, l1, l2 in group:
            if tag == "equal":
                for offset in range(k2 - k1):
                    _add_row(rows, " ", a[k1 + offset], k1 + offset + 1, l1 + offset + 1)
                continue
            for k in range(k1, k2):
                _add_row(rows, "-", a[k], k + 1, None)
                changed.update(b"-" + a[k] + b"\0")
            for line_index in range(l1, l2):
                _add_row(rows, "+", b[line_index], None, line_index + 1)
                changed.update(b"+" + b[line_index] + b"\0")
        hunks.append(
            Hunk(i1, tuple(a[i1:i2]), j1, tuple(b[j1:j2]), tuple(rows), "hunk:" + changed.hexdigest()[:32])
        )
    return tuple(hunks)


def _add_row(rows: list[DiffLine], kind: LineKind, line: bytes, old: int | None, new: int | None) -> None:
    rows.append(DiffLine(kind, _text(line), old, new))
    if not line.endswith(b"\n"):
        rows.append(DiffLine("\\", NO_NEWLINE, None, None))


# ---- the two sides ---------------------------------------------------------------------------------


@dataclass
class _Side:
    """One side of a file: absent, its bytes, or why its bytes are not compared."""

    exists: bool
    data: bytes | None = None
    digest: str | None = None
    note: str | None = None  # why ``data`` is None although the file exists
    restorable: bool = True  # (then) the checkpoint holds its bytes
    why_not: str = "the checkpoint does not hold this file's bytes"  # (then) why it cannot be put back


def _read_now(project: Path, relative: str) -> _Side:
    full = project / relative
    try:
        data = read_bounded(full, _DIFFED)
    except FileNotFoundError:
        return _Side(False)
    except IsADirectoryError:
        return _Side(False)
    except UnreadableFile as err:
        return _Side(True, None, _disk_digest(full), f"not compared: {err.strerror}")
    except OSError as err:
        return _Side(True, None, None, f"cannot be read: {err.strerror or err}")
    return _Side(True, data, _sha(data))


def _disk_digest(full: Path) -> str | None:
    try:
        return "sha256:" + digest_file(full, HASHED_PROJECT_FILE).sha256
    except OSError:
        return None


@dataclass
class _Budget:
    left: int


def _file_change(
    path: str, then: _Side, now: _Side, texts: dict[str, tuple[str, str]], budget: _Budget
) -> FileChange | None:
    status: FileStatus = "added" if not then.exists else "removed" if not now.exists else "modified"
    revert_note = None if then.restorable else then.why_not
    common = {
        "path": path,
        "status": status,
        "before": then.digest if then.exists else None,
        "after": now.digest if now.exists else None,
        "can_revert": then.restorable,
        "revert_note": revert_note,
    }
    note = then.note or now.note
    if note is not None:
        return FileChange(**common, note=note)  # type: ignore[arg-type]
    old, new = then.data or b"", now.data or b""
    if then.exists and now.exists and old == new:
        return None
    if is_binary(old) or is_binary(new):
        sizes = " → ".join(format_bytes(len(d)) for d, side in ((old, then), (new, now)) if side.exists)
        return FileChange(**common, note=f"binary file ({sizes}): not compared line by line")  # type: ignore[arg-type]
    if max(old.count(b"\n"), new.count(b"\n")) > MAX_DIFF_LINES:
        return FileChange(**common, note=f"over {MAX_DIFF_LINES:,} lines: not compared line by line")  # type: ignore[arg-type]
    hunks = hunks_of(path, old, new)
    added = sum(1 for h in hunks for r in h.rows if r.kind == "+")
    removed = sum(1 for h in hunks for r in h.rows if r.kind == "-")
    if budget.left >= len(old) + len(new):  # whole texts kept for colouring, up to the budget
        budget.left -= len(old) + len(new)
        texts[path] = (old.decode("utf-8"), new.decode("utf-8"))
    return FileChange(**common, hunks=hunks, added=added, removed=removed)  # type: ignore[arg-type]


# ---- computing the changes ---------------------------------------------------------------------------


def changes_since(checkpoints: SessionCheckpoints, tree: SessionTree, entry_id: str) -> ChangeSet:
    """Every file changed since ``entry_id`` (its checkpoint) up to the files on disk now.

    Raises ``NoCheckpoint`` when nothing was recorded at or before the entry."""
    base = checkpoint_for(tree, entry_id, checkpoints.records())
    return changes_from(checkpoints, entry_id, base)


def changes_from(checkpoints: SessionCheckpoints, entry_id: str, base: CheckpointRecord) -> ChangeSet:
    from piwork.core.checkpoints.git_store import GitCheckpoints

    store = checkpoints.store
    texts: dict[str, tuple[str, str]] = {}
    if isinstance(store, GitCheckpoints):
        sides = _git_sides(store, base)
    else:
        from piwork.core.checkpoints.plain_store import PlainCheckpoints

        assert isinstance(store, PlainCheckpoints)
        sides = _plain_sides(store, base)
    budget = _Budget(TEXTS_KEPT_CHARS)
    files = [
        c for path, then, now in sides if (c := _file_change(path, then, now, texts, budget)) is not None
    ]
    files.sort(key=lambda f: f.path)
    return ChangeSet(entry_id, base, tuple(files), store.uses_git, texts)


_ZERO = "0" * 40
_GITLINK = "160000"


def _git_sides(store: GitCheckpoints, base: CheckpointRecord) -> list[tuple[str, _Side, _Side]]:
    repo = store.repo
    with repo.lock:
        now_tree, skipped_now = repo.snapshot()
        base_tree = repo.tree_of(base.commit)
        raw = repo.git("diff-tree", "-r", "-z", "--no-renames", "--raw", base_tree, now_tree)
        fields = [f.decode(errors="surrogateescape") for f in raw.split(b"\0") if f]
        rows: list[tuple[str, str, str, str, str]] = []  # path, old mode, new mode, old blob, new blob
        for meta, path in zip(fields[::2], fields[1::2], strict=False):
            old_mode, new_mode, old_blob, new_blob = meta.lstrip(":").split()[:4]
            rows.append((path, old_mode, new_mode, old_blob, new_blob))
        wanted = [b for _, mode, _, b, _ in rows if b != _ZERO and mode != _GITLINK]
        sizes = _blob_sizes(store, wanted)
        blobs = _blob_bytes(store, [b for b in wanted if sizes.get(b, MAX_DIFF_BYTES + 1) <= MAX_DIFF_BYTES])
    large = set(skipped_now) | set(base.skipped)
    sides = []
    for path, old_mode, new_mode, old_blob, new_blob in rows:
        then = _Side(old_blob != _ZERO or path in base.skipped)
        if path in base.skipped:
            then.restorable, then.note = False, "over the checkpoint size limit: not kept, not compared"
        elif old_blob != _ZERO:
            then.digest = _sha(blobs[old_blob]) if old_blob in blobs else f"git:{old_blob}"
            then.data = blobs.get(old_blob)
            if then.data is None:
                then.note = f"over {format_bytes(MAX_DIFF_BYTES)}: not compared line by line"
            elif old_mode.startswith("12"):
                then.note = "a symbolic link: not compared line by line"
        now = _read_now(store.repo.project, path)
        if _GITLINK in (old_mode, new_mode):  # a repository inside the project: its own history
            then.data, now.data, then.restorable = None, None, False
            then.note = "a nested repository: not compared"
            then.why_not = "a nested repository is left to its own history"
        if path in large and now.exists and now.note is None:
            now.note = "over the checkpoint size limit: not compared"
        if now.exists and new_mode.startswith("12"):
            now.note = "a symbolic link: not compared line by line"
        if old_blob == new_blob and old_mode != new_mode:  # the same bytes: only the mode changed
            then.note = f"only its mode changed ({old_mode} → {new_mode})"
        sides.append((path, then, now))
    return sides


def _blob_sizes(store: GitCheckpoints, blobs: Sequence[str]) -> dict[str, int]:
    if not blobs:
        return {}
    out = store.repo.git("cat-file", "--batch-check", stdin="".join(b + "\n" for b in blobs).encode())
    sizes = {}
    for line in out.decode().splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[2].isdigit():
            sizes[parts[0]] = int(parts[2])
    return sizes


def _blob_bytes(store: GitCheckpoints, blobs: Sequence[str]) -> dict[str, bytes]:
    unique = list(dict.fromkeys(blobs))
    read = store.repo.blobs([blob.encode() for blob in unique])
    return {blob: data for blob, data in zip(unique, read, strict=True) if data is not None}


def _plain_sides(store: PlainCheckpoints, base: CheckpointRecord) -> list[tuple[str, _Side, _Side]]:
    state = store._state_at(store._lines(), base.commit)
    sides = []
    for path, blob in sorted(state.items()):
        if blob is None:
            then = _Side(False)
        else:
            data = (store.folder / "blobs" / blob).read_bytes()
            then = _Side(True, data, "sha256:" + blob)
            if len(data) > MAX_DIFF_BYTES:
                then.data, then.note = None, f"over {format_bytes(MAX_DIFF_BYTES)}: not compared line by line"
        now = _read_now(store.project, path)
        if not then.exists and not now.exists:
            continue
        if then.exists and now.exists and then.digest == now.digest:
            continue
        sides.append((path, then, now))
    return sides


# ---- reverting -----------------------------------------------------------------------------------------


def _check_unchanged(project: Path, change: FileChange) -> bytes | None:
    """The file's bytes now (None: absent) when they are still those ``change`` was computed from."""
    now = _read_now(project, change.path)
    digest = now.digest if now.exists else None
    if digest != change.after or (now.exists and digest is None):
        raise ChangedSinceShown(f"{change.path} changed since its changes were shown: look again first")
    return now.data


def revert_hunk(checkpoints: SessionCheckpoints, changes: ChangeSet, change: FileChange, hunk: Hunk) -> None:
    """Put back the lines of ``hunk`` as they were then, leaving the rest of the file as it is now.
    Raises ``ChangedSinceShown`` when the file is no longer as ``change`` saw it."""
    if hunk not in change.hunks:
        raise ValueError("the hunk is not one of the file's")

    def splice() -> Callable[[], None]:
        data = _check_unchanged(checkpoints.project, change)
        lines = split_lines(data or b"")
        end = hunk.new_start + len(hunk.new_lines)
        if tuple(lines[hunk.new_start : end]) != hunk.new_lines:
            raise ChangedSinceShown(f"{change.path} changed since its changes were shown: look again first")
        result = b"".join([*lines[: hunk.new_start], *hunk.old_lines, *lines[end:]])
        full = checkpoints.project / change.path
        if change.before is None and not result:
            return full.unlink  # the hunk was the whole of a new file
        return lambda: _write_keeping_mode(full, result)

    _as_restore(checkpoints, changes.base, splice)


def revert_file(checkpoints: SessionCheckpoints, changes: ChangeSet, change: FileChange) -> None:
    """Put the file back as it was at the entry (deleted if it did not exist then)."""
    from piwork.core.checkpoints.git_store import GitCheckpoints

    if not change.can_revert:
        raise PiworkError(f"{change.path} cannot be reverted: {change.revert_note}")
    store = checkpoints.store
    full = checkpoints.project / change.path

    def put_back() -> Callable[[], None]:
        _check_unchanged(checkpoints.project, change)
        return write

    def write() -> None:
        if change.before is None:
            if isinstance(store, GitCheckpoints):
                store.repo.remove_files([change.path])
            else:
                full.unlink(missing_ok=True)
        elif isinstance(store, GitCheckpoints):
            store.repo.write_files(changes.base.commit, [change.path])
        else:
            from piwork.core.checkpoints.plain_store import PlainCheckpoints

            assert isinstance(store, PlainCheckpoints)
            blob = change.before.removeprefix("sha256:")
            _write_keeping_mode(full, (store.folder / "blobs" / blob).read_bytes())

    _as_restore(checkpoints, changes.base, put_back)


def _as_restore(
    checkpoints: SessionCheckpoints, base: CheckpointRecord, prepare: Callable[[], Callable[[], None]]
) -> None:
    """Check what a revert needs (``prepare``), then make it (what ``prepare`` returns) as a restore of
    part of the files: with git, the files just before are kept (a ``restore-point``) and a ``restored``
    checkpoint follows, so the revert can be undone like a restore and the next tool call does not take
    it for a change made outside piwork."""
    from piwork.core.checkpoints.git_store import GitCheckpoints

    store = checkpoints.store
    if not isinstance(store, GitCheckpoints):
        prepare()()
        return
    now = int(time.time() * 1000)
    with store.repo.lock:
        write = prepare()
        point = store._record_locked("restore-point", None, None, None, now)
        write()
        store._record_locked(
            "restored",
            base.entry_id,
            base.tool_call_id,
            base.tool_name,
            now,
            target=base.commit,
            undo=point.commit,
        )


def _write_keeping_mode(full: Path, data: bytes) -> None:
    """Replace the file's bytes in one step (a temporary file renamed over it), keeping its mode."""
    try:
        mode: int | None = full.stat().st_mode & 0o7777
    except FileNotFoundError:
        mode = None
    full.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=full.parent, prefix=f".{full.name}.", suffix=".piwork")
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        if mode is not None:
            os.chmod(temporary, mode)
        os.replace(temporary, full)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
