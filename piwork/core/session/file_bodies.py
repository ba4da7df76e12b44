"""The body loader a file-bound session tree is built with: entry bodies read back lazily from the file.

A tree keeps only a light record per entry; a body not held in memory is read back by byte offset when it
is needed, through the records' own source (the reader's) or, for entries appended since, the session
file itself. A session with no file (in memory) finds every body on its record.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from piwork.core.session.body_source import FileBodySource
from piwork.core.session.records import EntryRecord


class FileBodies:
    """Loads entry bodies of the session file at ``path`` (``None``: in memory); a ``BodyLoader``."""

    def __init__(self, path: Path | None, source: FileBodySource | None = None) -> None:
        self.path = path
        # hears each record whose line could not be read back (its body is then ``None``)
        self.on_unreadable: Callable[[EntryRecord], None] | None = None
        self._source: FileBodySource | None = None
        self.use_source(source)

    def __call__(self, record: EntryRecord) -> Any:
        if record.source is not None:
            return record.source.load(record)
        if self.path is None:
            return record.body
        if self._source is None or self._source.path != self.path:
            self.use_source(FileBodySource(self.path))
        assert self._source is not None
        return self._source.load(record)

    def check(self, records: Sequence[EntryRecord]) -> None:
        """Parse every body not held in memory once, in file windows, discarding it at once: each line
        that does not parse is reported through ``on_unreadable`` (an inspection reads the whole file)."""
        by_source: dict[int, tuple[FileBodySource, list[EntryRecord]]] = {}
        for record in records:
            if record.body is not None:
                continue
            source = record.source
            if source is None:
                if self.path is None:
                    continue
                if self._source is None or self._source.path != self.path:
                    self.use_source(FileBodySource(self.path))
                source = self._source
            if isinstance(source, FileBodySource):
                by_source.setdefault(id(source), (source, []))[1].append(record)
        for source, wanted in by_source.values():
            source.check_many(wanted)

    def use_source(self, source: FileBodySource | None) -> None:
        """Read bodies through ``source`` (the reader's, after a load or a reload) from now on."""
        if source is None:
            return
        if self._source is not None and self._source is not source:
            self._source.close()
        self._source = source
        source.on_error = self._unreadable

    def _unreadable(self, record: EntryRecord) -> None:
        if self.on_unreadable is not None:
            self.on_unreadable(record)

    def close(self) -> None:
        if self._source is not None:
            self._source.close()
