"""Which providers have an API key, as the window knows it: the engine's credential snapshot, filled and
refreshed off the GUI thread, with the key writes (save, remove, import) run there too.

A desktop keyring may take seconds to answer (an unlock prompt, a D-Bus timeout), so the window never asks
it from the GUI thread. Views read :attr:`KeyStatus.snapshot` or :meth:`KeyStatus.has_key` — memory only;
``None`` while the keyring has not answered yet, which the views show as "checking keys…", never as "no
key" — and draw themselves again on :attr:`KeyStatus.changed`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import shiboken6
from PySide6.QtCore import QObject, Signal

from piwork.gui.background import BackgroundTasks

if TYPE_CHECKING:
    from piwork.core.llm import CredentialStore, ImportReport, KeySnapshot

T = TypeVar("T")

CHECKING_TEXT = "Checking keys…"


class KeyStatus(QObject):
    """One per window: every view that shows key state reads it and follows ``changed``."""

    changed = Signal()  # the snapshot changed: a load finished, a key was saved, removed or set

    def __init__(
        self,
        credentials: CredentialStore,
        providers: Callable[[], Iterable[str]],
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.credentials = credentials
        self._providers = providers  # the providers to ask about (the model registry's, read when asked)
        self._tasks = BackgroundTasks()
        self._loading: asyncio.Task[Any] | None = None

    @property
    def snapshot(self) -> KeySnapshot | None:
        return self.credentials.snapshot

    @property
    def checking(self) -> bool:
        """Nothing is known yet: the first answer of the keyring is awaited."""
        return self.credentials.snapshot is None

    def has_key(self, provider: str) -> bool | None:
        """Whether ``provider`` has a key; None while the keyring has not answered about it."""
        snapshot = self.credentials.snapshot
        if snapshot is None or not snapshot.checked(provider):
            return None
        return snapshot.has_key(provider)

    @property
    def busy(self) -> bool:
        return self._tasks.running

    # ---- reading (in a worker) -----------------------------------------------------------------

    def refresh(self, fresh: bool = False) -> asyncio.Task[Any]:
        """Ask the keyring, in a worker, about every provider: afresh (``fresh``: it may have changed
        outside piwork), or only about those not asked yet. A load already running is not repeated."""
        if self._loading is not None and not self._loading.done() and not fresh:
            return self._loading
        load = self.credentials.load if fresh else self.credentials.ensure_loaded
        self._loading = self._tasks.spawn(self._in_worker(load, list(self._providers())))
        return self._loading

    async def api_key(self, provider: str) -> str | None:
        """``provider``'s key for a request the window makes itself (e.g. listing a server's models)."""
        return await asyncio.to_thread(self.credentials.api_key, provider)

    # ---- writing (in a worker) -----------------------------------------------------------------

    async def store_key(self, provider: str, key: str) -> None:
        """Save the key in the keyring; raises ``CredentialError`` (without the key) when it cannot."""
        await self._in_worker(self.credentials.store_key, provider, key)

    async def delete_key(self, provider: str) -> None:
        await self._in_worker(self.credentials.delete_key, provider)

    async def import_from_pi(self, auth_json: Path) -> ImportReport:
        return await self._in_worker(self.credentials.import_from_pi, auth_json)

    # ---- keys for this session only (memory) -----------------------------------------------------

    def set_session_key(self, provider: str, key: str) -> None:
        self.credentials.set_session_key(provider, key)
        self.changed.emit()

    def clear_session_key(self, provider: str) -> None:
        self.credentials.clear_session_key(provider)
        self.changed.emit()

    # ----------------------------------------------------------------------------------------------

    async def _in_worker(self, work: Callable[..., T], *args: Any) -> T:
        try:
            return await asyncio.to_thread(work, *args)
        finally:
            if shiboken6.isValid(self):  # the window may have closed while the keyring was answering
                self.changed.emit()

    def cancel(self) -> None:
        """Stop waiting for answers (a call already in the keyring finishes there; its result is kept)."""
        self._tasks.cancel_all()
