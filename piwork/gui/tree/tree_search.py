"""The tree panel's search over entry texts, run in a worker thread and shared by the outline and the graph.

Searching needs each entry's preview, which the light index of a large session lacks for most messages:
reading them is file work, so `search_entries` runs through ``asyncio.to_thread`` and its result
(`SearchMatches`) is handed to both views' `Visibility`, which then decides an entry by a set lookup. A
newer search stops the one still running (``cancelled``). Labels can change at any time, so the result
is computed without them and a labelled entry is decided afresh (labels are few and in memory).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from piwork.core.session import EntryRecord, SessionTree

CHECK_EVERY = 2000  # entries searched between two looks at the cancel flag


def search_text(record: EntryRecord, label: str | None) -> str:
    parts = [str(record.type), record.role or "", record.preview or "", label or ""]
    for key in ("customType", "model", "modelId", "provider", "name"):
        value = record.meta.get(key)
        if isinstance(value, str):
            parts.append(value)
    return " ".join(parts).lower()


class SearchCancelled(Exception):
    """A newer search (or filter) replaced the one running."""


@dataclass(frozen=True)
class SearchMatches:
    """Entries among the first `upto` records whose text (labels left out) holds every word of `query`."""

    query: str
    seqs: frozenset[int]
    upto: int


def search_entries(tree: SessionTree, query: str, cancelled: threading.Event | None = None) -> SearchMatches:
    """Search every entry's text for all words of `query` (reads previews the index lacks: call it in a
    worker thread). Raises `SearchCancelled` soon after `cancelled` is set."""
    tokens = query.lower().split()
    records = list(tree.records)  # the entries there now; later ones are decided as they come
    found: set[int] = set()
    for position, record in enumerate(records):
        if cancelled is not None and position % CHECK_EVERY == 0 and cancelled.is_set():
            raise SearchCancelled
        if not isinstance(record.id, str) or record.type == "session":
            continue
        text = search_text(tree.details(record), None)
        if all(token in text for token in tokens):
            found.add(record.seq)
    return SearchMatches(query, frozenset(found), len(records))
