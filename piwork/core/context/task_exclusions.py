"""The exclusions in force on a live session's branch, kept current from the tree's own events.

A running session asks for them before every request (the bundle's projection, the system prompt's
context files), so they are read from the tree only when something that can change them happened: an
exclusion or manifest entry appended, the leaf moved, or the file reloaded.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

from piwork.core.context.exclusion_projection import RequestProjection, context_files_for_task
from piwork.core.context.exclusions import EXCLUSIONS_CUSTOM_TYPE, Exclusions, latest_exclusions
from piwork.core.context.manifest import MANIFEST_CUSTOM_TYPE
from piwork.core.messages import Message
from piwork.core.resources.context_files import ContextFile
from piwork.core.session.tree import SessionTree
from piwork.core.session.tree_types import TreeEvent

_WATCHED = frozenset({EXCLUSIONS_CUSTOM_TYPE, MANIFEST_CUSTOM_TYPE})


class TaskExclusions:
    def __init__(self, tree: SessionTree) -> None:
        self._tree = tree
        self._lock = threading.Lock()  # a task may be recorded from a worker thread
        self._current: Exclusions | None = None
        self._projection = RequestProjection()
        self._unsubscribe: Callable[[], None] | None = tree.subscribe(self._on_tree_event)

    def _on_tree_event(self, event: TreeEvent) -> None:
        if event.kind == "label":
            return
        if event.kind == "append" and event.entry_id is not None:
            record = self._tree.record(event.entry_id)
            if record is None or record.type != "custom":
                return  # a message or another entry below the leaf changes nothing
            body = self._tree.body(record)
            if not isinstance(body, dict) or body.get("customType") not in _WATCHED:
                return
        with self._lock:
            self._current = None

    def current(self) -> Exclusions:
        """The task's excluded parts on the current branch (empty when none or no task)."""
        with self._lock:
            found = self._current
        if found is None:
            found = latest_exclusions(self._tree)
            with self._lock:
                self._current = found
        return found

    def project(self, messages: list[Message]) -> list[Message]:
        """The request's messages with the excluded bundle parts replaced by markers (same list if none)."""
        return self._projection.messages(messages, self.current())

    def context_files(self, files: Sequence[ContextFile]) -> list[ContextFile]:
        return context_files_for_task(files, self.current())

    def close(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
