"""What the window's file restores ask of the checkpoints, as plain calls for a worker thread.

Every function here runs git or reads the project's files: call it through ``asyncio.to_thread``. They
turn the engine's answers into what the window shows: a :class:`Look` (the plan of a restore, or why
there is none) and short texts naming the files.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from piwork.core.errors import PiworkError

if TYPE_CHECKING:
    from piwork.core.checkpoints import RestorePlan, SessionCheckpoints
    from piwork.core.session import SessionTree

NO_CHECKPOINT = (
    "No checkpoint holds the files of this point: no tool changed files on the way to it or after it."
)
NOTHING_TO_UNDO = "No file restore of this session is left to undo."
NAMES_SHOWN = 6  # file names a notice spells out before "and N more"


@dataclass(frozen=True)
class Look:
    """What restoring to a point would do: ``plan``, or ``reason`` why nothing can be restored there."""

    plan: RestorePlan | None
    reason: str | None = None
    title: str = ""  # the entry's words, for the texts that name the point


def _failure(err: Exception) -> str:
    return f"The checkpoints could not be read: {err}"


def entry_words(tree: SessionTree, entry_id: str, limit: int = 60) -> str:
    """A one-line quote of the entry (its kind when it has no text); may read its body from the file."""
    record = tree.record(entry_id)
    if record is None:
        return entry_id
    try:
        preview = " ".join((tree.details(record).preview or "").split())
    except (OSError, PiworkError, ValueError):
        preview = ""
    if not preview:
        return record.role or record.type
    return preview if len(preview) <= limit else preview[: limit - 1] + "…"


def look_at(store: SessionCheckpoints, tree: SessionTree, entry_id: str) -> Look:
    """The plan of restoring the files to ``entry_id`` (a dry run: nothing is written)."""
    from piwork.core.checkpoints import NoCheckpoint  # in a worker, with the session open

    title = entry_words(tree, entry_id)
    try:
        return Look(store.plan_restore(tree, entry_id), title=title)
    except NoCheckpoint:
        return Look(None, NO_CHECKPOINT, title)
    except (PiworkError, OSError) as err:
        return Look(None, _failure(err), title)


def look_at_undo(store: SessionCheckpoints) -> Look:
    """The plan of undoing the session's last file restore."""
    from piwork.core.checkpoints import NothingToUndo

    try:
        return Look(store.plan_undo(), title="before the last restore")
    except NothingToUndo:
        return Look(None, NOTHING_TO_UNDO)
    except (PiworkError, OSError) as err:
        return Look(None, _failure(err))


def can_undo(store: SessionCheckpoints) -> bool:
    try:
        store.undo_target()
    except (PiworkError, OSError):
        return False
    return True


def _plural(count: int, word: str) -> str:
    return f"{count:,} {word}" + ("" if count == 1 else "s")


def counts(plan: RestorePlan) -> str:
    """``2 added, 1 modified, 1 removed`` (only the kinds there are)."""
    parts = [
        f"{len(paths):,} {word}"
        for word, paths in (("added", plan.added), ("modified", plan.modified), ("removed", plan.removed))
        if paths
    ]
    return ", ".join(parts)


def changed_count(plan: RestorePlan) -> int:
    return len(plan.added) + len(plan.modified) + len(plan.removed)


def would_change(plan: RestorePlan) -> str:
    """What the option or the question says before anything happens."""
    if plan.empty:
        return "The files are already as they were at this point: there is nothing to restore."
    return f"{_plural(changed_count(plan), 'file')} would change: {counts(plan)}."


def names(paths: Sequence[str], shown: int = NAMES_SHOWN) -> str:
    listed = ", ".join(paths[:shown])
    return listed + (f" and {len(paths) - shown:,} more" if len(paths) > shown else "")


def restored_text(plan: RestorePlan, title: str, undoing: bool = False) -> tuple[str, str]:
    """The chat notice's title and text after a restore (or its undo) put ``plan`` in place."""
    everything = sorted((*plan.added, *plan.modified, *plan.removed))
    if plan.empty:
        return ("Files already in place", "No file needed to change: they were already as asked.")
    count = _plural(len(everything), "file")
    if undoing:
        head = f"{count} back as they were before the last restore ({counts(plan)}): {names(everything)}."
        return ("File restore undone", head + " Undo File Restore again puts the restored files back.")
    head = f"{count} restored to how they were at “{title}” ({counts(plan)}): {names(everything)}."
    return ("Files restored", head + " Session → Undo File Restore brings back the files as they were.")
