"""Long prompts become intake files: saved under ``.pi/intake/<UTC>.md`` and referenced by path.

A prompt over 8,000 tokens is better read in slices than pasted into one turn. The file is kept out
of git by a line in the repository's ``info/exclude`` (never in the tracked ``.gitignore``).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from piwork.core import safe_read
from piwork.core.context.layers import INTAKE_DIR

INTAKE_TOKENS = 8_000
EXCLUDE_LINE = "/" + INTAKE_DIR + "/"


def may_need_intake(text: str) -> bool:
    """Whether ``text`` can be over ``INTAKE_TOKENS`` at all, without counting (cheap on any thread).

    Every token of a byte-level tokenizer is at least one UTF-8 byte, and chars/4 is a quarter of the
    UTF-16 units, so a text of at most ``INTAKE_TOKENS`` bytes is never over it."""
    return len(text) > INTAKE_TOKENS // 4 and len(text.encode("utf-8", "surrogatepass")) > INTAKE_TOKENS


def intake_tokens(text: str, count: Callable[[str], int]) -> int | None:
    """The prompt's tokens when it is over ``INTAKE_TOKENS`` (offer to save it as an intake file), else None.

    ``count`` is the session's token counter, the one preflight counts with. Blocking for a long text
    with a real tokenizer: run it off the GUI thread."""
    if not may_need_intake(text):
        return None
    tokens = count(text)
    return tokens if tokens > INTAKE_TOKENS else None


@dataclass(frozen=True)
class IntakeFile:
    path: str
    relative: str
    excluded: bool  # whether the git exclude file now lists the intake folder
    tokens: int

    @property
    def reference(self) -> str:
        """The short prompt that replaces the pasted text."""
        return (
            f"The full request is in {self.relative} (about {self.tokens:,} tokens). "
            "Read it with the read tool, in slices if needed, before starting."
        )


def _exclude_file(cwd: str) -> str | None:
    try:
        done = subprocess.run(
            ["git", "rev-parse", "--path-format=absolute", "--git-path", "info/exclude"],
            cwd=cwd,
            capture_output=True,
            text=True,
            check=False,
        )
    except OSError:
        return None
    path = done.stdout.strip()
    return path if done.returncode == 0 and path else None


def exclude_intake(cwd: str) -> bool:
    """Add the intake folder to git's ``info/exclude`` once; False outside a git work tree."""
    path = _exclude_file(cwd)
    if path is None:
        return False
    try:
        existing = safe_read.read_text(path, safe_read.IGNORE_FILE, strip_bom=False)
    except FileNotFoundError:
        existing = ""
    if EXCLUDE_LINE in existing.splitlines():
        return True
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(("" if not existing or existing.endswith("\n") else "\n") + EXCLUDE_LINE + "\n")
    return True


def save_intake(cwd: str, text: str, count: Callable[[str], int], now: datetime | None = None) -> IntakeFile:
    """Write ``text`` to a new intake file (never overwriting one) and keep it out of git."""
    stamp = (now or datetime.now(UTC)).astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")
    folder = os.path.join(os.path.abspath(cwd), INTAKE_DIR)
    os.makedirs(folder, exist_ok=True)
    name, n = f"{stamp}.md", 1
    while True:
        path = os.path.join(folder, name)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            break
        except FileExistsError:
            n += 1
            name = f"{stamp}-{n}.md"
    with os.fdopen(fd, "w", encoding="utf-8", errors="replace") as fh:
        fh.write(text)
    excluded = exclude_intake(cwd)
    relative = f"{INTAKE_DIR}/{name}"
    return IntakeFile(path, relative, excluded, count(text))
