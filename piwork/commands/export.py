"""``piwork export SESSION [-o FILE] [--format html|jsonl] [--leaf ID]``: save a session to share or keep.

html: one self-contained page with the whole tree (every branch can be shown), needing no network.
jsonl: the active branch (or the branch to --leaf) as a new session file with its own id.
The session file itself is only read.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from piwork.core.errors import PiworkError
from piwork.core.export import export_branch_jsonl, export_html


def default_output(session: Path, fmt: str) -> Path:
    """``name.jsonl`` → ``name.html`` (or ``name-branch.jsonl``) in the current folder."""
    stem = session.name[: -len(".jsonl")] if session.name.endswith(".jsonl") else session.name
    return Path(f"{stem}.html" if fmt == "html" else f"{stem}-branch.jsonl")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="piwork export", description="Export a session as one HTML page or its branch as a session file."
    )
    parser.add_argument("session", help="the session file (.jsonl)")
    parser.add_argument("-o", "--output", help="where to write (default: next to the current folder)")
    parser.add_argument("--format", choices=("html", "jsonl"), help="default: from -o's extension, else html")
    parser.add_argument(
        "--leaf", help="jsonl: export the branch ending at this entry instead of the active one"
    )
    return parser


def main(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    session = Path(args.session)
    fmt = args.format
    if fmt is None:
        fmt = "jsonl" if args.output and args.output.endswith(".jsonl") else "html"
    output = Path(args.output) if args.output else default_output(session, fmt)
    if args.leaf and fmt != "jsonl":
        print("piwork export: --leaf applies to --format jsonl only", file=sys.stderr)
        return 2
    try:
        if fmt == "html":
            written = export_html(session, output)
        else:
            written = export_branch_jsonl(session, output, args.leaf)
    except (PiworkError, OSError) as err:
        print(f"piwork export: {err}", file=sys.stderr)
        return 1
    print(written)
    return 0
