"""Token counts of long texts remembered by content, in memory and across runs.

Counting with a real tokenizer costs about a microsecond per token, so the first breakdown of a long
session is bound by the tokenizer. The same texts come back all the time (a session reopened, a new
view of it, ``piwork context`` after a run), so each long text's count is kept under a digest of its
content: in memory for every counter of the same encoding, and in an append-only file per encoding
(``<agentDir>/piwork/token-counts/<encoding>.tsv``, ``digest<TAB>count`` lines, metadata only) that the
next run reads when it loads the tokenizer. Short texts are counted directly (hashing them would cost
about as much). The file is read when the tokenizer is loaded (in an executor) and written only by
:meth:`CountCache.flush`, which callers run off the GUI thread.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import threading
from pathlib import Path

from piwork.core import safe_read

MIN_CHARS = 512  # shorter texts are counted, not looked up
MAX_ENTRIES = 500_000  # a file beyond this is started over rather than read


def text_key(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


class CountCache:
    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._counts: dict[str, int] = {}
        self._pending: list[tuple[str, int]] = []
        self._lock = threading.Lock()

    def load(self) -> None:
        """Read the file (blocking); damaged lines are skipped, an oversized file is started over."""
        path = self.path
        if path is None:
            return
        try:
            lines = safe_read.read_bytes(path, safe_read.CACHE).decode("ascii", errors="replace").splitlines()
        except OSError as exc:
            if exc.errno == errno.EFBIG:  # far over the entries kept: started over too
                with contextlib.suppress(OSError):
                    os.replace(path, path.with_suffix(".old"))
            return
        if len(lines) > MAX_ENTRIES:
            with contextlib.suppress(OSError):
                os.replace(path, path.with_suffix(".old"))
            return
        for line in lines:
            key, _, value = line.partition("\t")
            if len(key) == 32 and value.isdigit():
                self._counts[key] = int(value)

    def get(self, key: str) -> int | None:
        return self._counts.get(key)

    def put(self, key: str, count: int) -> None:
        if key not in self._counts:
            self._counts[key] = count
            self._pending.append((key, count))

    def flush(self) -> int:
        """Append the counts learnt since the last flush (blocking); returns how many were written."""
        if self.path is None or not self._pending:
            return 0
        with self._lock:
            pending, self._pending = self._pending, []
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                with open(self.path, "a", encoding="ascii") as fh:
                    fh.write("".join(f"{key}\t{count}\n" for key, count in pending))
            except OSError:
                return 0  # a read-only agent folder: counts stay in memory
        return len(pending)
