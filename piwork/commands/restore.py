"""``piwork restore SESSION --leaf ID [--dry-run] [--force]`` (or ``--undo``): put the project's files back.

The files become those of the session's checkpoint for entry ID: as they were at that point of the
conversation (see piwork.core.checkpoints.points). Files changed outside piwork since the last checkpoint
stop the restore unless ``--force``; ``--dry-run`` lists what would change; ``--undo`` brings back the
files the last restore replaced.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from piwork.commands.checkpoints import checkpoints_of, open_for
from piwork.core.checkpoints import DEFAULT_MAX_FILE_MB, RestoreBlocked, RestorePlan
from piwork.core.errors import PiworkError


def _render(plan: RestorePlan, done: bool) -> str:
    verb = ("added", "modified", "removed") if done else ("would add", "would modify", "would remove")
    lines = [
        f"{word}: {path}"
        for word, paths in zip(verb, (plan.added, plan.modified, plan.removed), strict=True)
        for path in paths
    ]
    if plan.outside:
        lines.append("changed outside piwork since the last checkpoint: " + ", ".join(plan.outside))
    if plan.empty:
        lines.append("The files are already as they were there." if done else "Nothing would change.")
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="piwork restore", description="Restore a session's project files to a point of the conversation."
    )
    parser.add_argument("session", help="path of a session .jsonl file")
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--leaf", help="entry id: the files as they were at that point of the conversation")
    which.add_argument("--undo", action="store_true", help="undo the last restore")
    parser.add_argument("--dry-run", action="store_true", help="list the files that would change")
    parser.add_argument("--force", action="store_true", help="overwrite files changed outside piwork")
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    parser.add_argument("--max-file-mb", type=float, default=DEFAULT_MAX_FILE_MB, help=argparse.SUPPRESS)
    ns = parser.parse_args(argv)
    path = Path(ns.session)
    session = open_for("restore", path)
    if session is None:
        return 1
    with session:
        if ns.leaf is not None and not session.tree.has(ns.leaf):
            print(f"piwork restore: Entry {ns.leaf} not found", file=sys.stderr)
            return 1
        store = checkpoints_of(session, path, ns.max_file_mb)
        try:
            if ns.dry_run:
                plan = store.plan_undo() if ns.undo else store.plan_restore(session.tree, ns.leaf)
            elif ns.undo:
                plan = store.undo_restore(ns.force)
            else:
                plan = store.restore(session.tree, ns.leaf, ns.force)
        except RestoreBlocked as err:
            if ns.json:
                sys.stdout.write(json.dumps({"restored": False, **err.plan.to_json()}, indent=2) + "\n")
            print(f"piwork restore: {err} (use --force to restore anyway)", file=sys.stderr)
            return 2
        except PiworkError as err:
            print(f"piwork restore: {err}", file=sys.stderr)
            return 1
    if ns.json:
        sys.stdout.write(json.dumps({"restored": not ns.dry_run, **plan.to_json()}, indent=2) + "\n")
    else:
        sys.stdout.write(_render(plan, done=not ns.dry_run))
    return 0
