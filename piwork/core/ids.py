"""Entry ids: 8 hex digits of a random UUID, as Pi writes them; injectable for tests."""

from __future__ import annotations

import uuid
from collections.abc import Callable

IdFactory = Callable[[], str]


def random_entry_id() -> str:
    return uuid.uuid4().hex[:8]


class SequentialIds:
    """Deterministic ids ``<prefix>0001``, ``<prefix>0002``... (the conformance ``$ID:`` scheme)."""

    def __init__(self, prefix: str = "$ID:") -> None:
        self._prefix = prefix
        self.count = 0

    def __call__(self) -> str:
        self.count += 1
        return f"{self._prefix}{self.count:04d}"
