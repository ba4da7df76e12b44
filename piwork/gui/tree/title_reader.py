"""Row titles of the tree views without reading the session file while painting.

A large session's light index holds no preview for most message entries: the text is in the body,
read back from the file by offset. Painting a row must not wait for that read, so a view asks
:func:`ready_title` for what it can show now (the title, or a neutral placeholder) and the
:class:`TitleReader` reads the missing previews of the rows asked for in a worker thread, then
reports their record numbers (`ready`) so the model repaints just those rows.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal

from piwork.core.errors import PiworkError
from piwork.gui.background import BackgroundTasks
from piwork.gui.tree.display_tree import entry_title

if TYPE_CHECKING:
    from piwork.core.session import EntryRecord, SessionTree

PENDING_TITLE = "(reading…)"  # a row whose text is still being read in a worker thread
BATCH = 200  # previews read per worker call (a page of rows is ~40)


def in_memory(tree: SessionTree, record: EntryRecord) -> bool:
    """Whether the record's details can be had without reading the session file."""
    return record.has_details or record.body is not None or tree.body_loader is None


def read_previews(tree: SessionTree, records: list[EntryRecord]) -> None:
    """Read the details of ``records`` whose preview is not in memory (a worker thread's call)."""
    for record in records:
        try:
            tree.details(record)
        except (OSError, PiworkError, ValueError):
            record.cached_preview = ""  # an unreadable line shows its kind alone


def loop_running() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


class TitleReader(QObject):
    """Fills the previews of rows asked for, in a worker thread; `ready` lists their record numbers."""

    ready = Signal(list)

    def __init__(self, tree: SessionTree, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._tree = tree
        self._wanted: dict[int, EntryRecord] = {}
        self._reading = False
        self._tasks = BackgroundTasks()

    def title(
        self, record: EntryRecord, compose: Callable[[EntryRecord, SessionTree], str] = entry_title
    ) -> str:
        """The row's title now, or a placeholder while its preview is read."""
        if in_memory(self._tree, record) or not loop_running():
            return compose(record, self._tree)  # without an event loop (a script driving Qt): read now
        self.want(record)
        return PENDING_TITLE

    def want(self, record: EntryRecord) -> None:
        """Read this record's preview in a worker thread (with the others asked for meanwhile)."""
        self._wanted[record.seq] = record
        if not self._reading:
            self._reading = True
            self._tasks.spawn(self._read())

    def _take(self) -> list[EntryRecord]:
        seqs = sorted(self._wanted)[:BATCH]
        return [self._wanted.pop(seq) for seq in seqs]

    async def _read(self) -> None:
        try:
            while self._wanted:
                batch = self._take()
                await asyncio.to_thread(read_previews, self._tree, batch)
                self.ready.emit([record.seq for record in batch])
        finally:
            self._reading = False

    def shutdown(self) -> None:
        self._tasks.cancel_all()
        self._wanted.clear()
        self._reading = False
