"""Session files on disk: open, create, append durably, migrate safely, lock against a second writer.

``Session`` joins a ``SessionTree`` to its JSONL file. Writes follow Pi's rules (lazy first write,
one line per entry, the file created only once a user or assistant message exists) plus piwork's own:
each entry is one ``write()`` on an ``O_APPEND`` descriptor, ``fsync`` after assistant messages,
compactions, branch summaries and on close; an advisory lock keeps a second piwork writer out;
appends made inside ``writing_later()`` only queue their bytes, and ``write_pending`` (which a worker
thread may run) writes the queue in order, so an asyncio caller awaits durability off its loop;
an append by another program is noticed (size and mtime) and reloaded before piwork appends (the
window reads it ahead, in a worker thread, as soon as the file changes: ``read_outside_change``);
a legacy file is migrated only through a backup and an atomic rename.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

from piwork.core.collector import release_kept
from piwork.core.errors import InputRejected, PiworkError
from piwork.core.fs.atomic import write_atomically
from piwork.core.ids import IdFactory, random_entry_id
from piwork.core.paths import agent_dir as default_agent_dir
from piwork.core.session.appended import KnownEnd, read_appended
from piwork.core.session.file_bodies import FileBodies
from piwork.core.session.format import (
    CURRENT_VERSION,
    MALFORMED_JSON,
    Diagnostic,
    default_session_dir,
    new_session_id,
    serialize,
    session_file_name,
)
from piwork.core.session.lock_holder import read_only_reason
from piwork.core.session.migrate import migrate_to_current, version_at_least
from piwork.core.session.other_writers import OtherWriter, lock_writer, pi_writer
from piwork.core.session.reader import FileBodySource, LoadedFile, read_session_file
from piwork.core.session.records import EntryRecord
from piwork.core.session.timestamps import iso_now
from piwork.core.session.tree import SessionTree, tree_from_values

if TYPE_CHECKING:
    import asyncio  # imported where a loop is at hand: reading a session (inspect, export) needs none

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

DURABLE_TYPES = frozenset({"compaction", "branch_summary"})
T = TypeVar("T")


class NotASessionFile(InputRejected):
    def __init__(self, path: Path) -> None:
        super().__init__(f"Session file is not a valid pi session: {path}")
        self.path = path


class UnsupportedSessionFormat(InputRejected):
    def __init__(self, path: Path) -> None:
        super().__init__(f"Session file uses a newer format piwork cannot open: {path}")
        self.path = path


class SessionFileGone(PiworkError):
    """The open session file was deleted, moved away or overwritten by another program."""


def _same_file(a: os.stat_result, b: os.stat_result) -> bool:
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


def _identity(st: os.stat_result) -> tuple[int, int, int, int]:
    """Which file, and how far it was written (a later write changes size or mtime)."""
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def _appended_to(held: list[EntryRecord], loaded: LoadedFile) -> bool:
    """Whether ``loaded`` is the file of the ``held`` records with entries appended: the same entries at
    the same places up to the last one held, as the reader indexed them (never piwork's own appends)."""
    count = len(held)
    if not count or len(loaded.records) <= count:
        return False
    first, last = loaded.records[0], loaded.records[count - 1]
    return (
        first.source is not None
        and held[0].source is not None
        and held[-1].source is not None
        and (first.id, first.offset) == (held[0].id, held[0].offset)
        and (last.id, last.offset, last.length) == (held[-1].id, held[-1].offset, held[-1].length)
    )


def _foreign(tree: SessionTree, loaded: LoadedFile, known_size: int) -> int:
    """How many entries past what piwork knew of the file (``known_size`` bytes) the tree does not hold:
    another program appended them (piwork's own appends are in the tree before they are written)."""
    return sum(1 for r in loaded.records if r.offset >= known_size and not tree.has(r.id))


class SessionReadOnly(PiworkError):
    def __init__(self, path: Path | None, reason: str | None = None) -> None:
        super().__init__(f"{reason} ({path})" if reason else f"This session is open read-only: {path}")


@dataclass
class FileChange:
    """The session file as read after another program changed it (see ``Session.read_changes``)."""

    identity: tuple[int, int, int, int]
    loaded: LoadedFile
    foreign: int  # entries in the file that the session does not hold: another writer appended them
    for_append: bool = False  # kept for a writable session's next append (the store's to close)
    appended_to: int | None = None  # ``loaded`` holds only the entries after this many (a tail read)

    def discard(self) -> None:
        """Not applied after all: let go of the file it read."""
        if self.loaded.source is not None:
            self.loaded.source.close()


def new_header(cwd: str, session_id: str | None = None, parent_session: str | None = None) -> dict[str, Any]:
    header: dict[str, Any] = {
        "type": "session",
        "version": CURRENT_VERSION,
        "id": session_id or new_session_id(),
        "timestamp": iso_now(),
        "cwd": cwd,
    }
    if parent_session is not None:
        header["parentSession"] = parent_session
    return header


PROBE_BYTES = 64 * 1024  # room a new session's first entries need (checked before the first request)


def _reserve(fd: int, size: int) -> None:
    """Allocate ``size`` bytes up front where the file system can (``ENOSPC`` now rather than mid-write)."""
    if size <= 0:
        return
    try:
        os.posix_fallocate(fd, 0, size)
    except OSError as err:
        if err.errno not in (errno.EOPNOTSUPP, errno.EINVAL, errno.ENOSYS):
            raise
    except AttributeError:  # no posix_fallocate on this system
        pass


def _backup_path(path: Path, old_version: Any) -> Path:
    # The version comes from the file (``"1/x"``, ``"../x"``, a long text): only a plain tag may name a file.
    tag = str(old_version)
    if not re.fullmatch(r"[0-9A-Za-z][0-9A-Za-z.+-]{0,15}", tag):
        tag = "unknown"
    base = path.with_name(f"{path.name}.bak-v{tag}")
    candidate = base
    counter = 1
    while candidate.exists():
        counter += 1
        candidate = base.with_name(f"{base.name}.{counter}")
    return candidate


def rewrite_atomically(path: Path, values: list[Any], backup_suffix_version: Any) -> Path:
    """Copy the original to a backup, write ``values`` to a temp file, fsync, rename over it."""
    backup = _backup_path(path, backup_suffix_version)
    with open(path, "rb") as src, open(backup, "xb") as dst:
        while chunk := src.read(1024 * 1024):
            dst.write(chunk)
        dst.flush()
        os.fsync(dst.fileno())
    write_atomically(path, "".join(serialize(v) for v in values), durable=True)
    return backup


class Session:
    """A session tree bound to its file (or to nothing, for an in-memory session)."""

    def __init__(
        self,
        tree: SessionTree,
        path: Path | None,
        cwd: str,
        session_dir: Path | None,
        *,
        bodies: FileBodies,
        flushed: bool,
        read_only: bool = False,
    ) -> None:
        if tree.body_loader is not bodies:
            raise ValueError("a session's tree must be built with the session's body loader")
        self.tree = tree
        self.path = path
        self.cwd = cwd
        self.session_dir = session_dir
        self.read_only = read_only
        self.read_only_reason: str | None = None  # why, when piwork made it read-only itself
        self.other_writer: OtherWriter | None = None  # who writes the file instead, when that is why
        self.flushed = flushed
        self.notices: list[str] = []
        self.on_notice: Callable[[str], None] | None = None
        self._append_fd: int | None = None
        self._unsynced = False  # lines written since the last fsync (close fsyncs only then)
        self.bodies = bodies
        self._unreadable_offsets: set[int] = set()
        self._expected: tuple[int, int] | None = None
        self._expected_file: tuple[int, int] | None = None  # (device, inode) of the file at ``_expected``
        # The file as another program left it, read ahead of the next append: (its identity, what it held).
        self._read_ahead: tuple[tuple[int, int, int, int], LoadedFile] | None = None
        self._needs_newline = False
        # The writer lane: file writes queued in append order, written by ``write_pending`` under
        # ``_write_lock``; ``_unwritten`` counts the queued and the one being written.
        self._pending: deque[Callable[[], None]] = deque()
        self._queue_lock = threading.Lock()
        self._write_lock = threading.Lock()
        self._unwritten = 0
        self._deferring = 0
        # set by ``write_appends_in_worker``: the loop whose default executor writes plain appends
        self._lane_loop: asyncio.AbstractEventLoop | None = None
        self._lane_tasks: set[asyncio.Future[None]] = set()
        tree.sink = self
        bodies.on_unreadable = self._unreadable

    # ------------------------------------------------------------------ state
    @property
    def header(self) -> dict[str, Any] | None:
        return self.tree.header

    @property
    def session_id(self) -> str:
        return str((self.header or {}).get("id", ""))

    @property
    def persisted(self) -> bool:
        return self.path is not None

    def use_source(self, source: FileBodySource | None) -> None:
        """Read bodies through ``source`` (the reader's), reporting unreadable lines as diagnostics."""
        self.bodies.use_source(source)

    def check_bodies(self, read: Iterable[Any] = (), read_records: Iterable[EntryRecord] = ()) -> None:
        """Parse every entry's line now (not only when it is used), so that each line that is not
        valid JSON is among the diagnostics, with its line number. ``read``: ids of entries whose
        lines were read already (a context built from them), or ``read_records``, their records (a
        streamed context's): those lines are not parsed again."""
        record_of = self.tree.record
        skip = {id(record) for entry_id in read if (record := record_of(entry_id)) is not None}
        skip.update(id(record) for record in read_records)
        records = self.tree.records
        if skip:
            records = [r for r in records if id(r) not in skip]
        self.bodies.check(records)

    def _unreadable(self, record: EntryRecord) -> None:
        if record.offset in self._unreadable_offsets:
            return
        self._unreadable_offsets.add(record.offset)
        self.tree.add_diagnostic(
            Diagnostic(MALFORMED_JSON, record.line, record.offset, "Line is not valid JSON; it is skipped")
        )

    # ------------------------------------------------------------------ locking
    def acquire_lock(self) -> bool:
        """Take the writer lock; ``False`` (and read-only) if another piwork holds it."""
        if self.path is None or self._append_fd is not None:
            return True
        try:
            # non-blocking: a FIFO put in the file's place opens at once (or fails) instead of waiting
            # for a reader; a regular file's writes are not affected
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_NONBLOCK)
        except OSError as err:
            self._go_read_only(
                f"piwork cannot write the session file {self.path}, so it is open read-only: {err.strerror}"
            )
            return False
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            self._go_read_only(f"{self.path} is not a regular file, so the session is open read-only")
            return False
        if fcntl is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                reason = read_only_reason(fd)  # while the file is open: its lock names the holder
                self.other_writer = lock_writer(fd)
                os.close(fd)
                self._go_read_only(reason)
                return False
        self._append_fd = fd
        return True

    def writer_folders(self) -> list[str]:
        """Where a Pi writing this session runs: the header's folder and piwork's."""
        header_cwd = (self.header or {}).get("cwd")
        return [self.cwd, *([header_cwd] if isinstance(header_cwd, str) and header_cwd else [])]

    def _go_read_only(self, reason: str) -> None:
        self.read_only = True
        self.read_only_reason = reason
        self._notice(reason)

    def _remember_file_state(self) -> None:
        if self.path is not None and self.path.exists():
            st = self.path.stat()
            self._expected = (st.st_size, st.st_mtime_ns)
            self._expected_file = (st.st_dev, st.st_ino)

    # ------------------------------------------------------------------ sink
    def before_append(self, tree: SessionTree) -> None:
        if self.read_only:
            raise SessionReadOnly(self.path, self.read_only_reason)
        if not self.flushed or self.path is None or self._expected is None or self.writes_pending:
            return  # with our own lines still being written, the size says nothing of other programs
        try:
            st = self.path.stat()
        except FileNotFoundError:
            self._stop_writing(f"The session file {self.path} was deleted or moved by another program")
        if self._append_fd is not None and not _same_file(os.fstat(self._append_fd), st):
            self._release_append_fd()  # replaced (an editor's save): the next line goes to the new file
        elif (st.st_size, st.st_mtime_ns) == self._expected:
            return
        loaded = self._take_read_ahead(st) or read_session_file(self.path)
        if loaded.status != "ok":  # emptied or overwritten: adding entries would not make it a session again
            self._stop_writing(
                f"The session file {self.path} was changed by another program and is no longer a session"
            )
        if _foreign(tree, loaded, self._expected[0]):  # appended by another program: still at it?
            writer = pi_writer(self.writer_folders())
            if writer is not None:
                if loaded.source is not None:  # a window following the file reads it again
                    loaded.source.close()
                self.yield_to(
                    f"{writer.who} is writing this session, so piwork stopped writing to it", writer
                )
                raise SessionReadOnly(self.path, self.read_only_reason)
        self.use_source(loaded.source)
        tree.replace_records(loaded.header, loaded.records, loaded.diagnostics)
        self._needs_newline = loaded.torn
        self._notice("The session file was changed by another program; piwork reloaded it before writing.")
        self._expected = (st.st_size, st.st_mtime_ns)
        self._expected_file = (st.st_dev, st.st_ino)

    def read_outside_change(self) -> bool:
        """Read the file now if another program changed it, and keep what it holds for the next append,
        which would otherwise read it then. Changes nothing else, so a worker thread may call it while
        the owner keeps using the session. True when something was read."""
        return not self.read_only and self.read_changes() is not None

    def read_changes(self) -> FileChange | None:
        """The file as it is now, when it changed since piwork last wrote or read it (None: unchanged,
        or still being written). Changes nothing but the read-ahead an append of a writable session
        uses, so a worker thread may call it while the owner keeps using the session: a read-only one
        shows what was read with ``follow``."""
        path, expected = self.path, self._expected
        if not self.flushed or path is None or expected is None:
            return None
        try:
            before = path.stat()
        except OSError:
            return None
        if (before.st_size, before.st_mtime_ns) == expected:
            return None
        if self.read_only and (tail := self._read_tail(path, expected[0])) is not None:
            return tail
        loaded = read_session_file(path)
        try:
            after = path.stat()
        except OSError:
            after = None
        if after is None or _identity(after) != _identity(before) or loaded.status != "ok":
            if loaded.source is not None:  # still being written (read at append), or not a session now
                loaded.source.close()
            return None
        tree = self.tree
        change = FileChange(
            _identity(after), loaded, _foreign(tree, loaded, expected[0]), for_append=not self.read_only
        )
        if change.for_append:
            previous, self._read_ahead = self._read_ahead, (change.identity, loaded)
            if previous is not None and previous[1] is not loaded and previous[1].source is not None:
                previous[1].source.close()
        return change

    def _read_tail(self, path: Path, known_size: int) -> FileChange | None:
        """Only the entries appended since piwork knew the file (see ``appended``); None: read it whole."""
        file_id, held = self._expected_file, self.tree.records
        if file_id is None:
            return None
        count = len(held)
        known = KnownEnd(file_id[0], file_id[1], known_size, held[-1].line if held else 0, count)
        tail = read_appended(path, known)
        if tail is None:
            return None
        records, st = tail
        loaded = LoadedFile(path, "ok", header=self.header, records=records, size=st.st_size)
        return FileChange(_identity(st), loaded, _foreign(self.tree, loaded, known_size), appended_to=count)

    # ------------------------------------------------------------------ another writer
    def yield_to(self, reason: str, writer: OtherWriter | None = None) -> None:
        """Another program (``writer``) writes this file: stop writing to it (the writer lock is let go
        too, so that what holds the file is seen as it is) and say why. Queued lines are not written."""
        with self._write_lock:
            self._release_append_fd()
            self.other_writer = writer
            self._go_read_only(reason)

    def explain_read_only(self, reason: str) -> None:
        """Say why the session is read-only now (its other writer stopped, say), without a new notice."""
        if self.read_only:
            self.read_only_reason = reason
            self.notices.append(reason)

    def follow(self, change: FileChange) -> bool:
        """Take in what another writer added (``change``, read by ``read_changes`` in a worker). A leaf
        that was at the end of the file moves to the file's new last entry, the other writer's leaf.
        False (and nothing changed) when the file has moved on since: its next change is read then."""
        path = self.path
        try:
            current = _identity(path.stat()) if path is not None else None
        except OSError:
            current = None
        if current != change.identity:
            if self._read_ahead is None or self._read_ahead[1] is not change.loaded:
                change.discard()
            return False
        if self._read_ahead is not None and self._read_ahead[1] is change.loaded:
            self._read_ahead = None  # now the session's own source
        tree, loaded = self.tree, change.loaded
        held = tree.records
        if change.appended_to is not None and change.appended_to != len(held):
            return False  # the tree took in entries since (a later read): nothing here is new
        at_end = not held or tree.leaf_id == held[-1].id
        self.use_source(loaded.source)
        if change.appended_to is not None:  # a tail read: the new entries alone
            leaf = tree.leaf_id
            tree.take_in(loaded.records)
            if not at_end and isinstance(leaf, str) and leaf != tree.leaf_id:
                tree.branch(leaf)
        elif _appended_to(held, loaded):  # only the new entries are indexed
            leaf = tree.leaf_id
            tree.take_in(loaded.records[len(held) :], loaded.diagnostics)
            if not at_end and isinstance(leaf, str) and leaf != tree.leaf_id:
                tree.branch(leaf)
        else:
            tree.replace_records(loaded.header, loaded.records, loaded.diagnostics)
            if at_end and loaded.records and tree.leaf_id != loaded.records[-1].id:
                tree.branch(str(loaded.records[-1].id))
        self._needs_newline = loaded.torn
        self._expected = (change.identity[2], change.identity[3])
        self._expected_file = (change.identity[0], change.identity[1])
        return True

    def take_over(self, change: FileChange | None) -> bool:
        """Write this file again once its other writer has stopped: ``change`` is the file read to its
        end (None: it did not change since it was last read). False when the file moved on meanwhile
        (read it again) or another piwork holds it now (the reason says who)."""
        if change is not None and not self.follow(change):
            return False
        if change is None:
            try:
                st = self.path.stat() if self.path is not None else None
            except OSError:
                st = None
            if st is None or (st.st_size, st.st_mtime_ns) != self._expected:
                return False
        self.read_only, self.read_only_reason, self.other_writer = False, None, None
        return self.acquire_lock()

    def _take_read_ahead(self, st: os.stat_result) -> LoadedFile | None:
        """The file read ahead by ``read_outside_change`` when it is still as it was then."""
        kept, self._read_ahead = self._read_ahead, None
        if kept is None:
            return None
        identity, loaded = kept
        if identity == _identity(st):
            return loaded
        if loaded.source is not None:
            loaded.source.close()
        return None

    def _stop_writing(self, reason: str) -> NoReturn:
        """Appending now would land in a file nobody can see: go read-only and say so."""
        self._release_append_fd()
        text = f"{reason}; piwork stopped writing to it. Fork or start a new session to go on."
        self._go_read_only(text)
        raise SessionFileGone(text)

    def _release_append_fd(self) -> None:
        if self._append_fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._append_fd)  # also releases the writer lock
            self._append_fd = None

    def after_append(self, tree: SessionTree, record: EntryRecord) -> None:
        if self.path is None:
            return
        if not tree.has_conversation:
            if self.flushed:
                line = serialize(record.body)
                self._queue(lambda: self._append_line(line, durable=False))
            return
        if not self.flushed:
            data = self._new_file_bytes()
            self.flushed = True  # the lines appended after this one follow it in the queue
            self._queue(lambda: self._write_new_file(data), first_write=True)
            return
        durable = record.type in DURABLE_TYPES or record.role == "assistant"
        line = serialize(record.body)
        self._queue(lambda: self._append_line(line, durable))

    # ------------------------------------------------------------------ the writer lane
    @contextlib.contextmanager
    def writing_later(self) -> Iterator[None]:
        """Appends made inside queue their file writes instead of writing them; ``write_pending``
        writes them (an asyncio caller: ``await asyncio.to_thread(session.write_pending)``). The tree
        changes at once, on the caller's thread; only the file waits."""
        self._deferring += 1
        try:
            yield
        finally:
            self._deferring -= 1

    @property
    def writes_pending(self) -> bool:
        """Queued lines not yet written (or being written now)."""
        with self._queue_lock:
            return self._unwritten > 0

    def write_pending(self) -> None:
        """Write every queued append, in the order the entries were appended, fsyncing those that must
        be durable; returns once they are on disk. One writer at a time, from any thread. A write that
        fails raises here; it is dropped from the queue (the entry stays in memory, as a failed direct
        append leaves it), and a failed first write of the file drops what was queued behind it, which
        the next append writes again with the whole file."""
        with self._write_lock:
            while True:
                with self._queue_lock:
                    if not self._pending:
                        return
                    write = self._pending.popleft()
                try:
                    write()
                finally:
                    with self._queue_lock:
                        self._unwritten -= 1

    def _queue(self, write: Callable[[], None], *, first_write: bool = False) -> None:
        def guarded() -> None:
            try:
                write()
            except BaseException:
                if first_write:
                    self.flushed = False
                    with self._queue_lock:
                        self._unwritten -= len(self._pending)
                        self._pending.clear()
                raise

        with self._queue_lock:
            self._pending.append(guarded)
            self._unwritten += 1
        if self._deferring:
            return
        if self._lane_loop is not None and not self._lane_loop.is_closed():
            self._lane_loop.call_soon_threadsafe(self._write_in_worker)
            return
        self.write_pending()

    def write_appends_in_worker(self, loop: asyncio.AbstractEventLoop) -> None:
        """From now on, an append made by a plain call (a model change, the session's name, the governor's
        state...) changes the tree at once and has its line written by a worker thread of ``loop``, in
        append order with every other write; a write that fails becomes a notice (``on_notice``) instead
        of an exception. ``sync``/``close`` still write everything queued before they return."""
        self._lane_loop = loop

    def _write_in_worker(self) -> None:
        loop = self._lane_loop
        if loop is None or loop.is_closed() or not self.writes_pending:
            return
        import asyncio

        task = asyncio.ensure_future(asyncio.to_thread(self.write_pending), loop=loop)
        self._lane_tasks.add(task)
        task.add_done_callback(self._lane_written)

    def _lane_written(self, task: asyncio.Future[None]) -> None:
        self._lane_tasks.discard(task)
        error = None if task.cancelled() else task.exception()
        if isinstance(error, SessionFileGone):
            return  # already said, when the file was found gone
        if isinstance(error, OSError | PiworkError):
            self._notice(f"Could not write to the session file: {error}")
        elif error is not None:
            raise error

    def _notice(self, text: str) -> None:
        self.notices.append(text)
        if self.on_notice is not None:
            self.on_notice(text)

    # ------------------------------------------------------------------ writing
    def write_new_file(self) -> None:
        """Write header and every entry at once (the lazy first write), never over an existing file.

        The space is reserved before writing; if anything fails the new file is removed again, so a
        full disk never leaves an empty or half-written session file behind.
        """
        self._write_new_file(self._new_file_bytes())

    def _new_file_bytes(self) -> bytes:
        lines = [serialize(self.tree.header)] + [serialize(self.tree.body(r)) for r in self.tree.records]
        return "".join(lines).encode("utf-8")

    def _write_new_file(self, data: bytes) -> None:
        assert self.path is not None
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        try:
            _reserve(fd, len(data))
            written = 0
            while written < len(data):
                written += os.write(fd, data[written:])
            os.fsync(fd)
        except BaseException:
            os.close(fd)
            with contextlib.suppress(OSError):
                os.unlink(self.path)
            raise
        os.close(fd)
        self.flushed = True
        self.acquire_lock()
        self._remember_file_state()

    def check_can_save(self) -> None:
        """Before the first model request of a new session: raise ``OSError`` if its file could not be
        written (no folder can be made, no permission, no space), so nothing is asked of the model
        whose answer would be lost. Nothing is left behind."""
        if self.path is None or self.flushed or self.read_only:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        probe = self.path.parent / f".{self.path.name}.{os.getpid()}.probe"
        fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            _reserve(fd, PROBE_BYTES)
            os.write(fd, b"\0" * 512)
            os.fsync(fd)
        finally:
            os.close(fd)
            with contextlib.suppress(OSError):
                os.unlink(probe)

    def _append_line(self, line: str, durable: bool) -> None:
        if self.read_only:  # yielded to another writer after this line was queued
            raise SessionReadOnly(self.path, self.read_only_reason)
        if self._append_fd is None and not self.acquire_lock():
            raise SessionReadOnly(self.path, self.read_only_reason)
        assert self._append_fd is not None
        data = line.encode("utf-8")
        if self._needs_newline:
            data = b"\n" + data
        start = os.fstat(self._append_fd).st_size
        written = 0
        try:
            while written < len(data):  # a short write is rare on local files; finish the same line
                written += os.write(self._append_fd, data[written:])
        except OSError:
            self._take_back(start, written)
            raise
        self._needs_newline = False
        if durable:
            os.fsync(self._append_fd)
        self._unsynced = not durable
        self._remember_file_state()

    def _take_back(self, start: int, written: int) -> None:
        """Cut off the part of a line that fitted before a write failed (a full disk), so the file never
        ends in half a line; only when nobody else appended after it meanwhile."""
        if written == 0 or self._append_fd is None:
            return
        with contextlib.suppress(OSError):
            if os.fstat(self._append_fd).st_size == start + written:
                os.ftruncate(self._append_fd, start)

    def repair_torn_tail(self) -> None:
        """Write the pending newline after a torn last line now (Pi does this right on open)."""
        if self._needs_newline and self.acquire_lock() and self._append_fd is not None:
            os.write(self._append_fd, b"\n")
            self._needs_newline = False
            self._unsynced = True
            self._remember_file_state()

    def sync(self) -> None:
        """Write every queued append and fsync the file: what ``close`` waits on the disk for. Blocking,
        from any thread: a worker runs it before ``close`` (see ``closed_in_worker``), so closing itself
        then has nothing left to wait for."""
        with contextlib.suppress(OSError, PiworkError):
            self.write_pending()
        with self._write_lock:
            if self._append_fd is not None and self._unsynced:
                with contextlib.suppress(OSError):
                    os.fsync(self._append_fd)
                    self._unsynced = False

    def close(self) -> None:
        self.sync()  # what was appended is written and fsynced before the file is let go
        with self._write_lock:
            if self._append_fd is not None:
                os.close(self._append_fd)
                self._append_fd = None
        self.bodies.close()
        kept, self._read_ahead = self._read_ahead, None
        if kept is not None and kept[1].source is not None:
            kept[1].source.close()
        release_kept()  # cycles among objects alive while it was open are collected again

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


async def closed_in_worker(session: Session) -> None:
    """Close ``session`` without the asyncio loop waiting on the disk: its queued lines are written and
    fsynced in a worker, then the file is let go here. The rest of closing (handing frozen objects back
    to the cycle collector) stays on the caller's thread, where collecting objects that belong to it
    (a window's) is safe."""
    import asyncio

    try:
        await asyncio.to_thread(session.sync)
    finally:  # cancelled (the window quitting mid-switch): still let the file go, nothing lost
        session.close()


async def append_written(tree: SessionTree, append: Callable[[], T]) -> T:
    """Run ``append`` (one or more appends to ``tree``) now, and return once what it appended is in the
    session file, written and fsynced in a worker thread through the file's writer lane, so the
    asyncio loop (the window's GUI thread) never waits on the disk. The tree changes at once; an error
    writing the file is raised here. A tree with no file behind it just appends."""
    sink = tree.sink
    if not isinstance(sink, Session):
        return append()
    with sink.writing_later():
        result = append()
    if sink.writes_pending:
        import asyncio

        await asyncio.to_thread(sink.write_pending)
    return result


# ---------------------------------------------------------------------- constructors
def in_memory_session(
    cwd: str | None = None, *, new_id: IdFactory = random_entry_id, session_id: str | None = None
) -> Session:
    """A session that never touches the disk (``--no-session``, tests, previews); ``session_id`` names
    it (the provider's prompt-cache key follows it)."""
    folder = os.path.abspath(cwd or os.getcwd())
    bodies = FileBodies(None)
    tree = SessionTree(new_header(folder, session_id), load_body=bodies, new_id=new_id)
    return Session(tree, None, folder, None, bodies=bodies, flushed=False)


def create_session(
    cwd: str,
    session_dir: str | os.PathLike[str] | None = None,
    *,
    agent_dir: str | os.PathLike[str] | None = None,
    parent_session: str | None = None,
    session_id: str | None = None,
    new_id: IdFactory = random_entry_id,
) -> Session:
    """A new session in ``session_dir`` (default: the per-cwd folder); written on first reply."""
    folder = os.path.abspath(cwd)
    directory = (
        Path(session_dir) if session_dir else default_session_dir(folder, agent_dir or default_agent_dir())
    )
    directory.mkdir(parents=True, exist_ok=True)
    header = new_header(folder, session_id, parent_session)
    path = directory / session_file_name(header["timestamp"], header["id"])
    bodies = FileBodies(path)
    tree = SessionTree(header, load_body=bodies, new_id=new_id)
    return Session(tree, path, folder, directory, bodies=bodies, flushed=False)


def open_session(
    path: str | os.PathLike[str],
    *,
    cwd: str | None = None,
    writable: bool = True,
    new_id: IdFactory = random_entry_id,
    repair_now: bool = False,
    keep_non_objects: bool = False,
) -> Session:
    """Open a session file as Pi's ``--session`` does, with piwork's safety rules.

    Missing file: a new session bound to that path. Empty file: a fresh header is written (when
    writable). Not a session: ``NotASessionFile``, the file untouched. A v1/v2 file is migrated; when
    writable the original is kept as ``<file>.bak-v<N>`` and replaced atomically.
    ``keep_non_objects`` keeps non-object JSON lines as entries, as the reference does.
    """
    file_path = Path(os.path.abspath(path))
    loaded = read_session_file(file_path, keep_non_objects=keep_non_objects)
    bodies = FileBodies(file_path)
    if loaded.status == "missing":
        folder = os.path.abspath(cwd or os.getcwd())
        tree = SessionTree(new_header(folder), load_body=bodies, new_id=new_id)
        return Session(
            tree, file_path, folder, file_path.parent, bodies=bodies, flushed=False, read_only=not writable
        )
    if loaded.status == "empty":
        folder = os.path.abspath(cwd or os.getcwd())
        tree = SessionTree(new_header(folder), load_body=bodies, new_id=new_id)
        session = Session(
            tree, file_path, folder, file_path.parent, bodies=bodies, flushed=True, read_only=not writable
        )
        if writable and session.acquire_lock():
            session._append_line(serialize(tree.header), durable=True)
        return session
    if loaded.status == "unsupported":
        raise UnsupportedSessionFormat(file_path)
    if loaded.status == "not_session":
        raise NotASessionFile(file_path)
    if not _is_current(loaded):
        if writable and not _nobody_else_writing(file_path):
            writable = False  # another piwork has it open: migrate in memory only, write nothing
        loaded = _migrate(loaded, writable, new_id, keep_non_objects)
    header_cwd = (loaded.header or {}).get("cwd")
    chosen_cwd = cwd
    if chosen_cwd is None and isinstance(header_cwd, str) and header_cwd:
        chosen_cwd = header_cwd
    session_cwd = os.path.abspath(chosen_cwd or os.getcwd())
    bodies.use_source(loaded.source)
    tree = SessionTree(
        loaded.header, loaded.records, load_body=bodies, new_id=new_id, diagnostics=loaded.diagnostics
    )
    session = Session(
        tree, file_path, session_cwd, file_path.parent, bodies=bodies, flushed=True, read_only=not writable
    )
    session._needs_newline = loaded.torn
    session._remember_file_state()  # what the file holds now: a later change is another writer's
    if writable:
        session.acquire_lock()
        if repair_now and not session.read_only:
            session.repair_torn_tail()
    return session


def _nobody_else_writing(path: Path) -> bool:
    """True when no other piwork holds the writer lock on ``path`` right now."""
    if fcntl is None:
        return True
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False
    finally:
        os.close(fd)  # closing releases the probe lock
    return True


def _is_current(loaded: LoadedFile) -> bool:
    return version_at_least((loaded.header or {}).get("version", 1), CURRENT_VERSION)


def _migrate(loaded: LoadedFile, writable: bool, new_id: IdFactory, keep_non_objects: bool) -> LoadedFile:
    """Migrate a legacy file: in memory for viewing, or through backup + atomic rename."""
    full = read_session_file(loaded.path, keep_bodies=True, keep_non_objects=keep_non_objects)
    values: list[Any] = [full.header] + [r.body for r in full.records]
    old_version = (full.header or {}).get("version", 1)
    migrate_to_current(values, new_id)
    if writable:
        rewrite_atomically(loaded.path, values, old_version)
        return read_session_file(loaded.path, keep_non_objects=keep_non_objects)
    tree_values = values[1:]
    migrated = tree_from_values(tree_values)
    full.header = values[0]
    full.records = migrated.records
    return full
