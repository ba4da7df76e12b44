"""Files Touched and the branch comparison with what the checkpoints saw, so a command's files appear.

A session's activity (``piwork.core.session.branch_activity``) knows only the files the file tools name.
The checkpoints hold, for each file-changing call, the project's files before and after it: what changed
in between was changed during that reply's tool calls. :func:`with_checkpoints` adds, for each reply on the
stretch, each such file no edit or write of the reply names, as a ``changed`` touch naming the tool that
can have changed it (bash, say: calls of one batch run side by side, so an edit or write, which changes
only its target, is never the one), and each file changed outside piwork before a call as ``outside``.
Each added touch carries the two checkpoints to diff (:func:`touch_diff`). A session without
checkpoints (one Pi made, or with checkpoints off) keeps its activity as it is.

Everything here reads the shadow repository: call it off the event loop.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence
from pathlib import Path

from piwork.core.checkpoints.api import CallCheckpoint, SessionCheckpoints
from piwork.core.errors import PiworkError
from piwork.core.session.branch_activity import BranchActivity, FileTouch
from piwork.core.session.branch_compare import BranchComparison, compare_branches, path_activity
from piwork.core.session.tree import SessionTree
from piwork.core.tools.diff import display_diff
from piwork.core.tools.registry import tool_facts

DIFF_LIMIT = 2 * 1024 * 1024  # bytes a side may have for its diff to be shown


def _targets_one_file(tool: str | None) -> bool:
    """An edit or write changes only the file its path names."""
    return tool is not None and tool_facts(tool).file_action in ("edit", "write")


def _key(relative: str, cwd: str) -> str:
    return os.path.normpath(os.path.join(cwd, relative))


def _reply_touches(entry_id: str, rows: list[CallCheckpoint], named: set[str], cwd: str) -> list[FileTouch]:
    """The touches the checkpoints add for the calls of one reply (rows oldest first)."""
    added: list[FileTouch] = []
    for row in rows:  # changed by hand before the call
        for path in row.outside:
            added.append(
                FileTouch(path, _key(path, cwd), "outside", entry_id, None, False,
                          revision=(f"{row.commit}^", row.commit))
            )  # fmt: skip
    first = rows[0].commit
    changed: dict[str, list[CallCheckpoint]] = {}
    for row in rows:
        for path in row.changed:
            if _key(path, cwd) not in named:
                changed.setdefault(path, []).append(row)
    for path, seen in changed.items():
        last = next((r.after for r in reversed(seen) if r.after), None)
        if last is None:
            continue
        tools = list(
            dict.fromkeys(r.tool_name for r in seen if r.tool_name and not _targets_one_file(r.tool_name))
        )
        added.append(
            FileTouch(path, _key(path, cwd), "changed", entry_id, None, False,
                      tool=" or ".join(tools) or None, revision=(first, last))
        )  # fmt: skip
    return added


def with_checkpoints(activity: BranchActivity, calls: Sequence[CallCheckpoint], cwd: str) -> BranchActivity:
    """``activity`` with the files its replies' calls changed as the checkpoints saw them (``calls``: a
    session's, oldest first; only those of the stretch's entries count, and only whole-project ones: a call
    the plain store kept, with no ``after``, saw nothing the file tools do not name)."""
    position = {entry: i for i, entry in enumerate(activity.entry_ids)}
    by_reply: dict[str, list[CallCheckpoint]] = {}
    for row in calls:
        if row.entry_id is not None and row.entry_id in position and row.after is not None:
            by_reply.setdefault(row.entry_id, []).append(row)
    if not by_reply:
        return activity
    touches = list(activity.touches)
    for entry_id, rows in by_reply.items():
        named = {
            t.key for t in activity.touches
            if t.call_entry_id == entry_id and t.action in ("edit", "write") and not t.failed
        }  # fmt: skip
        touches.extend(_reply_touches(entry_id, rows, named, cwd))

    rank = {"outside": 0, "changed": 2}  # before a reply's calls, its calls' own touches, after them

    def order(touch: FileTouch) -> tuple[int, int]:
        entry = touch.call_entry_id if touch.call_entry_id in position else touch.result_entry_id
        return position.get(entry or "", -1), rank.get(touch.action, 1)

    touches.sort(key=order)  # stable: the file tools' touches keep their order
    checkpointed = sum(len(rows) for rows in by_reply.values())
    return dataclasses.replace(activity, touches=touches, checkpointed_calls=checkpointed)


def _calls(checkpoints: SessionCheckpoints | None) -> list[CallCheckpoint]:
    if checkpoints is None:
        return []
    try:
        return checkpoints.calls()
    except (PiworkError, OSError):  # unreadable checkpoints: the activity the session itself tells
        return []


def _cwd(tree: SessionTree, checkpoints: SessionCheckpoints) -> str:
    cwd = tree.header.get("cwd") if isinstance(tree.header, dict) else None
    return cwd if isinstance(cwd, str) and cwd else str(checkpoints.project)


def checkpointed_path_activity(
    tree: SessionTree, entry_id: str | None, checkpoints: SessionCheckpoints | None
) -> BranchActivity:
    """``path_activity`` of the path to ``entry_id`` with the checkpoints' changes added."""
    activity = path_activity(tree, entry_id)
    calls = _calls(checkpoints)
    if not calls or checkpoints is None:
        return activity
    return with_checkpoints(activity, calls, _cwd(tree, checkpoints))


def checkpointed_comparison(
    tree: SessionTree, a_id: str, b_id: str, checkpoints: SessionCheckpoints | None
) -> BranchComparison:
    """``compare_branches`` with each side's checkpoint changes added."""
    result = compare_branches(tree, a_id, b_id)
    calls = _calls(checkpoints)
    if not calls or checkpoints is None:
        return result
    cwd = _cwd(tree, checkpoints)
    return dataclasses.replace(
        result, a=with_checkpoints(result.a, calls, cwd), b=with_checkpoints(result.b, calls, cwd)
    )


def session_checkpoints(
    tree: SessionTree, session_file: str | os.PathLike[str] | None, agent_dir: Path
) -> SessionCheckpoints | None:
    """The checkpoints of a saved session, read-only use (nothing is created); None for an unsaved one."""
    cwd = tree.header.get("cwd") if isinstance(tree.header, dict) else None
    if session_file is None or not isinstance(cwd, str) or not cwd:
        return None
    return SessionCheckpoints(cwd, session_file, agent_dir)


def touch_diff(checkpoints: SessionCheckpoints, touch: FileTouch) -> tuple[str | None, str]:
    """What a touch the checkpoints added changed, as the edit tool's numbered diff, or (None, why not)."""
    if touch.revision is None:
        return None, "Not seen by the checkpoints."
    path = touch.path
    try:
        old, new = (checkpoints.contents(rev, [path])[0] for rev in touch.revision)
    except (PiworkError, OSError) as err:
        return None, f"The checkpoints could not be read: {err}"
    if old is None and new is None:
        return None, "The checkpoints do not hold this file (ignored, or over the size limit)."
    if len(old or b"") > DIFF_LIMIT or len(new or b"") > DIFF_LIMIT:
        return None, "Too large to show."
    try:
        before, after = (b.decode("utf-8") if b is not None else "" for b in (old, new))
    except UnicodeDecodeError:
        return None, f"A binary file: {len(old or b'')} bytes before, {len(new or b'')} after."
    diff = display_diff(before, after).diff
    if not diff:
        return None, "Emptied." if old and not new else "No change in its text (its mode may have changed)."
    return diff, ""
