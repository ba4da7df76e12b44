"""Loading only what the user reviewed: a trusted project's gated files must match the trust reading.

When a trust decision was made on a reading of the gated files (the trust dialog's), the load that
follows runs inside :func:`reviewed_only`. Every read of a file under a gated resource then checks the
bytes it got against that reading: a file that differs, or that was not there, is refused with
:class:`UnreviewedFile` (an ``OSError``, so each loader reports it as it reports a file it cannot
read) and noted in :attr:`ReviewGate.refused`, so the caller can ask again, showing the change.
Reads outside gated resources (context files, the user's own files) are not affected. It sits on the
ground floor because project settings are read through it too, below the resource loader.

The gate lives in a context variable: it follows the load into ``asyncio.to_thread`` workers and
never leaks into other tasks or threads.
"""

from __future__ import annotations

import contextlib
import contextvars
import errno
import hashlib
import os
from collections.abc import Iterator
from dataclasses import dataclass, field


class UnreviewedFile(OSError):
    """A gated file whose content is not what the trust decision was made on."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(errno.EPERM, reason, path)

    def __str__(self) -> str:
        return f"{self.filename}: not loaded, {self.strerror}"


@dataclass
class ReviewGate:
    """The reviewed hashes of one project's gated files (by real path), and what was refused."""

    hashes: dict[str, str]
    roots: tuple[str, ...]
    complete: bool  # False: the reading was cut at its file limit, so a file missing from it may be fine
    refused: list[str] = field(default_factory=list)

    def gated(self, real: str) -> bool:
        return any(real == root or real.startswith(root.rstrip(os.sep) + os.sep) for root in self.roots)

    def check(self, path: str | os.PathLike[str], data: bytes) -> None:
        """Raise :class:`UnreviewedFile` when ``data`` read from ``path`` is not what was reviewed."""
        real = os.path.realpath(path)
        if not self.gated(real):
            return
        reviewed = self.hashes.get(real)
        if reviewed is None and not self.complete:
            return
        if reviewed is None:
            reason = "it appeared after you decided to trust this project; piwork asks again first"
        elif reviewed != hashlib.sha256(data).hexdigest():
            reason = "it changed after you reviewed it for trust; piwork asks again first"
        else:
            return
        if real not in self.refused:
            self.refused.append(real)
        raise UnreviewedFile(os.fspath(path), reason)


_GATE: contextvars.ContextVar[ReviewGate | None] = contextvars.ContextVar("piwork_review_gate", default=None)


@contextlib.contextmanager
def reviewed_only(gate: ReviewGate | None) -> Iterator[ReviewGate | None]:
    """Check every gated read made inside against ``gate`` (None: no check)."""
    token = _GATE.set(gate)
    try:
        yield gate
    finally:
        _GATE.reset(token)


def check_reviewed(path: str | os.PathLike[str], data: bytes) -> None:
    """Called by the readers of project resources with the bytes they read."""
    gate = _GATE.get()
    if gate is not None:
        gate.check(path, data)
