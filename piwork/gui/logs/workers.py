"""Background threads of the log viewer: line indexing and search. Both only read the file and hand
results to the GUI thread through queued signals; `stop()` cancels and waits."""

from __future__ import annotations

import threading
from array import array

from PySide6.QtCore import QObject, QThread, Signal

from piwork.gui.logs.line_index import count_block_newlines
from piwork.gui.logs.search import CompiledSearch, search_file_lines


class IndexWorker(QThread):
    """Counts newlines block by block; `batch(counts, bytes_done)` arrives every read chunk."""

    batch = Signal(object, object)
    failed = Signal(str)

    def __init__(self, path: str, first_block: int, end_block: int, size: int, parent: QObject | None = None):
        super().__init__(parent)
        self._cancel = threading.Event()
        self._args = (path, first_block, end_block, size)

    def stop(self) -> None:
        self._cancel.set()
        self.wait()

    def run(self) -> None:
        path, first, end, size = self._args
        try:
            count_block_newlines(path, first, end, size, lambda c, d: self.batch.emit(c, d), self._cancel)
        except OSError as exc:
            self.failed.emit(f"Reading {path} failed: {exc.strerror or exc}")


class SearchWorker(QThread):
    """Searches the file; `found(lines, bytes_done)` per chunk, `completed(total, capped, cancelled)` at the end."""

    found = Signal(object, object)
    completed = Signal(int, bool, bool)
    failed = Signal(str)

    def __init__(
        self,
        path: str,
        query: CompiledSearch,
        size: int,
        newlines_before: array[int] | None = None,
        parent: QObject | None = None,
    ):
        super().__init__(parent)
        self._cancel = threading.Event()
        self._args = (path, query, size, newlines_before)

    def stop(self) -> None:
        self._cancel.set()
        self.wait()

    def run(self) -> None:
        path, query, size, newlines_before = self._args
        try:
            total, capped = search_file_lines(
                path,
                query,
                size,
                lambda lines, done: self.found.emit(lines, done),
                self._cancel,
                newlines_before=newlines_before,
            )
        except OSError as exc:
            self.failed.emit(f"Searching {path} failed: {exc.strerror or exc}")
            return
        self.completed.emit(total, capped, self._cancel.is_set())
