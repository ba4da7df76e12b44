"""The checkpoint step of a session's tool calls: before and after each call that can change files.

A call can change files unless its tool declares itself read-only (:class:`ToolFacts`); edit, write and
bash all can. The snapshot runs in a worker thread (``asyncio.to_thread``) so the event loop stays free;
the store is opened at the first such call, so a run that changes no file never loads git-related code.
A checkpoint that fails never stops the call: it is told once through ``notify``. A project too large for
its first snapshot (``TooManyFiles``) is told once too, and the session keeps only edit/write targets.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from piwork.core.checkpoints.api import DEFAULT_MAX_FILES, NO_GIT_NOTICE, SessionCheckpoints, TooManyFiles
from piwork.core.checkpoints.points import assistant_entry_of
from piwork.core.checkpoints.records import CheckpointKind, CheckpointRecord
from piwork.core.session.tree import SessionTree
from piwork.core.tools.base import ToolFacts


class Checkpointer:
    def __init__(
        self,
        project: str | os.PathLike[str],
        session_file: Callable[[], Path | None],
        agent_dir: Path,
        tree: SessionTree,
        facts: Callable[[str], ToolFacts],
        max_file_mb: float,
        notify: Callable[[str], None] = lambda text: None,
        use_git: bool | None = None,
        max_files: int = DEFAULT_MAX_FILES,
    ) -> None:
        self._project = project
        self._session_file = session_file
        self._agent_dir = agent_dir
        self._tree = tree
        self._facts = facts
        self._max_file_mb = max_file_mb
        self._notify = notify
        self._use_git = use_git
        self._max_files = max_files
        self._store: SessionCheckpoints | None = None
        self._told: set[str] = set()
        self._entries: dict[str, str | None] = {}  # tool call id -> assistant entry id
        self._befores: dict[str, str] = {}  # tool call id -> its ``before`` checkpoint
        self.last: CheckpointRecord | None = None  # the newest checkpoint taken here

    def changes_files(self, tool_name: str) -> bool:
        return not self._facts(tool_name).read_only

    def store(self) -> SessionCheckpoints | None:
        if self._store is None:
            session_file = self._session_file()
            if session_file is None:  # an unsaved session has nothing to key checkpoints to
                return None
            self._store = SessionCheckpoints(
                self._project,
                session_file,
                self._agent_dir,
                self._max_file_mb,
                self._use_git,
                self._max_files,
            )
            if not self._store.uses_git:
                self._tell(NO_GIT_NOTICE)
        return self._store

    async def before(self, call: dict[str, Any], args: dict[str, Any]) -> None:
        """A ``before_tool_call`` step: snapshot first, never blocks the call."""
        name, call_id = str(call.get("name", "")), str(call.get("id", ""))
        if not self.changes_files(name):
            return
        entry = self._entries[call_id] = assistant_entry_of(self._tree, call_id)
        facts = self._facts(name)
        path = args.get(facts.path_argument) if facts.changes_files and facts.path_argument else None
        await self._take("before", entry, call_id, name, path if isinstance(path, str) else None)

    async def after(self, call: dict[str, Any], args: dict[str, Any]) -> None:
        """An ``after_tool_call`` step: the files the call left (what it changed)."""
        name, call_id = str(call.get("name", "")), str(call.get("id", ""))
        if not self.changes_files(name) or call_id not in self._entries:
            return
        before = self._befores.pop(call_id, None)
        await self._take("after", self._entries.pop(call_id), call_id, name, None, before)

    async def _take(
        self,
        kind: CheckpointKind,
        entry: str | None,
        call_id: str,
        name: str,
        path: str | None,
        since: str | None = None,
    ) -> None:
        try:
            store = self.store()
            if store is None:
                return
            now = int(time.time() * 1000)
            try:
                taken = await asyncio.to_thread(
                    store.store.record, kind, entry, call_id, name, now, path, since
                )
            except TooManyFiles as err:  # the project is too large to snapshot: keep edit/write targets
                self._tell(str(err))
                store = self._store = self._plain(store)
                taken = await asyncio.to_thread(
                    store.store.record, kind, entry, call_id, name, now, path, since
                )
        except Exception as err:  # a checkpoint is a safety net: the call goes on without it
            self._tell(f"A checkpoint could not be taken: {err}")
            return
        if taken is not None:
            self.last = taken
            if kind == "before":
                self._befores[call_id] = taken.commit

    def _plain(self, store: SessionCheckpoints) -> SessionCheckpoints:
        return SessionCheckpoints(
            self._project, store.session_file, self._agent_dir, self._max_file_mb, use_git=False
        )

    def _tell(self, text: str) -> None:
        if text not in self._told:
            self._told.add(text)
            self._notify(text)
