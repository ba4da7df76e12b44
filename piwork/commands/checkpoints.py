"""``piwork checkpoints SESSION [--json]``: the checkpoints piwork took of the project's files in a session.

One row per file-changing tool call, oldest first: the entry holding the call, its time, the tool, the
files it changed, and the files changed outside piwork before it. The project is the session's working
folder (its header's ``cwd``); checkpoints live in the agent folder (see docs/architecture.md).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from piwork.core.checkpoints import DEFAULT_MAX_FILE_MB, CallCheckpoint, SessionCheckpoints
from piwork.core.errors import PiworkError
from piwork.core.paths import agent_dir
from piwork.core.session import Session, open_session


def open_for(command: str, path: Path) -> Session | None:
    """The session file opened read-only, or None after saying why on stderr."""
    if not path.is_file():
        print(f"piwork {command}: no such session file: {path}", file=sys.stderr)
        return None
    try:
        return open_session(path, writable=False)
    except PiworkError as err:
        print(f"piwork {command}: {err}", file=sys.stderr)
    except OSError as err:
        print(f"piwork {command}: cannot read {path}: {err.strerror or err}", file=sys.stderr)
    return None


def checkpoints_of(
    session: Session, path: Path, max_file_mb: float = DEFAULT_MAX_FILE_MB
) -> SessionCheckpoints:
    return SessionCheckpoints(session.cwd, path, agent_dir(), max_file_mb)


def _line(row: CallCheckpoint) -> str:
    when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(row.time_ms / 1000))
    changed = ", ".join(row.changed) if row.changed else "no file changed"
    text = f"{row.entry_id or '-'}  {when}  {row.tool_name or '?'}: {changed}"
    if row.outside:
        text += f"\n    changed outside piwork before it: {', '.join(row.outside)}"
    if row.skipped:
        text += f"\n    left out (over the size limit): {', '.join(row.skipped)}"
    return text


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="piwork checkpoints", description="List the checkpoints of a session's project files."
    )
    parser.add_argument("session", help="path of a session .jsonl file")
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    ns = parser.parse_args(argv)
    path = Path(ns.session)
    session = open_for("checkpoints", path)
    if session is None:
        return 1
    with session:
        try:
            store = checkpoints_of(session, path)
            rows = store.calls()
        except PiworkError as err:
            print(f"piwork checkpoints: {err}", file=sys.stderr)
            return 1
    if ns.json:
        report = {"project": str(store.project), "git": store.uses_git, "calls": [r.to_json() for r in rows]}
        sys.stdout.write(json.dumps(report, indent=2) + "\n")
        return 0
    if not rows:
        sys.stdout.write("No checkpoints for this session.\n")
    for row in rows:
        sys.stdout.write(_line(row) + "\n")
    return 0
