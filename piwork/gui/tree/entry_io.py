"""The tree panel's file work, off the GUI thread: reading the selected entry for the details pane, and
writing label entries.

An entry's body is often not in memory (the tree keeps light records and reads a body back from the
session file by its offset), so the details pane reads it in a worker thread; a newer selection cancels
the read still running, and the text shown is always the last selected entry's. The read goes to a worker
as the entry is selected, not once the event loop gets to a task: the selection has just queued repaints
of the views (and while a long session opens, deliveries of its other work wait there too), so the read,
a millisecond's work, is done by the time the GUI thread can show it. A label changes the tree at once
(the views show it) while its line is written by the session file's writer lane in a worker thread: two
quick edits are written in the order they were made, and a write that fails is reported.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtWidgets import QPlainTextEdit

from piwork.core.errors import PiworkError
from piwork.gui.background import BackgroundTasks
from piwork.gui.tree.context_marks import context_edit_detail, usage_detail
from piwork.gui.tree.display_tree import entry_title
from piwork.gui.tree.entry_details import entry_detail_text

if TYPE_CHECKING:
    from piwork.core.session import Session, SessionTree

READING = "Reading the entry…"


def _detail_text(tree: SessionTree, entry_id: str) -> str:
    entry = tree.entry(entry_id)
    if isinstance(entry, dict) and entry.get("type") == "context_edit":
        target = tree.record(str(entry.get("targetId")))
        title = entry_title(target, tree) if target is not None else "not in this file"
        return entry_detail_text(entry) + "\n\n" + context_edit_detail(entry, title)
    if isinstance(entry, dict) and entry.get("type") == "usage":
        return entry_detail_text(entry) + "\n\n" + usage_detail(entry)
    return entry_detail_text(entry)


def _body_in_memory(tree: SessionTree, entry_id: str) -> bool:
    record = tree.record(entry_id)
    return record is None or record.body is not None or tree.body_loader is None


class EntryDetails:
    """Shows the selected entry's whole text in ``view``."""

    def __init__(self, view: QPlainTextEdit) -> None:
        self.view = view
        self._reading: asyncio.Future[str] | None = None
        self._placeholder = view.placeholderText()

    @property
    def reading(self) -> bool:
        return self._reading is not None and not self._reading.done()

    def show(self, tree: SessionTree | None, entry_id: object) -> None:
        if self._reading is not None:
            self._reading.cancel()  # a read already in a worker finishes there, unseen
            self._reading = None
        self.view.setPlaceholderText(self._placeholder)
        if tree is None or entry_id is None:
            self.view.clear()
            return
        key = str(entry_id)
        if _body_in_memory(tree, key):  # nothing to read: no need to wait a turn of the loop
            self.view.setPlainText(_detail_text(tree, key))
            return
        self.view.clear()
        self.view.setPlaceholderText(READING)
        self._reading = asyncio.get_event_loop().run_in_executor(None, _detail_text, tree, key)
        self._reading.add_done_callback(self._read)

    def _read(self, read: asyncio.Future[str]) -> None:
        """On the GUI thread, once the worker has read the entry (a newer selection cancelled ``read``)."""
        if read.cancelled():
            return
        try:
            text = read.result()
        except (OSError, PiworkError, ValueError) as exc:
            text = f"This entry could not be read from the session file: {exc}"
        self.view.setPlaceholderText(self._placeholder)
        self.view.setPlainText(text)

    def shutdown(self) -> None:
        if self._reading is not None:
            self._reading.cancel()


class LabelWriter:
    """Sets and clears labels; ``report`` hears a label that could not be saved."""

    def __init__(self, report: Callable[[str], None]) -> None:
        self._report = report
        self._tasks = BackgroundTasks()

    @property
    def writing(self) -> bool:
        return self._tasks.running

    def set(self, session: Session, entry_id: str, label: str | None) -> bool:
        """Label ``entry_id`` (None clears it) now, and write the label entry in a worker thread."""
        try:
            with session.writing_later():
                session.tree.set_label(entry_id, label)
        except (OSError, PiworkError) as exc:
            self._report(f"Label not saved: {exc}")
            return False
        if session.writes_pending:
            self._tasks.spawn(self._write(session))
        return True

    async def _write(self, session: Session) -> None:
        try:
            await asyncio.to_thread(session.write_pending)  # the lane writes queued labels in order
        except (OSError, PiworkError) as exc:
            self._report(f"Label not saved to the session file: {exc}")

    def shutdown(self) -> None:
        """Stop waiting for writes (a write already running finishes; closing the session writes the
        rest)."""
        self._tasks.cancel_all()
