"""Keeping the task's manifest current without being asked: re-checked when the agent settles.

After a run in which the model (or a ``!`` command) touched files, the stored manifest of the task on
the branch is re-checked against the current files (a layer file changed or gone, the index gone stale,
the files the model read or changed) and saved again as a state-only entry, metadata only. Nothing is
written while the agent runs, a manifest equal to the stored one is never written again, and a run of
plain conversation costs nothing (no file is hashed).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence

from piwork.core.context.manifest import Manifest, append_manifest, latest_manifest
from piwork.core.messages import Message
from piwork.core.session.tree import SessionTree

# messages after which files may have been read or changed
_FILE_ROLES = frozenset({"toolResult", "bashExecution"})


class ManifestUpkeep:
    def __init__(self, tree: SessionTree, cwd: str, trusted: Callable[[], bool]) -> None:
        self._tree = tree
        self._cwd = cwd
        self._trusted = trusted
        self._last_seen: Message | None = None  # the last message a settle looked at

    def _touched_files(self, messages: Sequence[Message]) -> bool:
        """Whether any message since the last settle may have read or changed files."""
        start = 0
        if self._last_seen is not None:
            for i in range(len(messages) - 1, -1, -1):
                if messages[i] is self._last_seen:
                    start = i + 1
                    break
        self._last_seen = messages[-1] if messages else None
        return any(m.get("role") in _FILE_ROLES for m in messages[start:])

    async def settle(self, messages: Sequence[Message]) -> Manifest | None:
        """Re-check and save the manifest when the run touched files; returns what was saved (or None).

        Call when the agent has settled. File hashing runs in a worker thread; the session file is
        read and written on the caller's loop."""
        if not self._touched_files(messages):
            return None
        stored = latest_manifest(self._tree)
        if stored is None:  # no task on this branch: nothing to keep current
            return None
        from piwork.core.context.manifest_refresh import refresh_manifest  # hashing and the index: tasks only

        fresh = await asyncio.to_thread(refresh_manifest, stored, self._cwd, self._trusted(), messages)
        if fresh == stored or latest_manifest(self._tree) != stored:
            return None  # nothing changed, or another command saved a manifest meanwhile
        append_manifest(self._tree, fresh)
        return fresh
