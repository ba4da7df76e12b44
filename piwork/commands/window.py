"""``piwork`` with no subcommand: open the workbench window."""

from __future__ import annotations

import argparse
import gc
import os
import sys

from piwork import __version__

EXIT_NO_DISPLAY = 3

NO_DISPLAY_MESSAGE = """\
piwork: cannot open the window: {reason}.
Run piwork inside a desktop session, or use a headless command:
  piwork -p "PROMPT"         run one prompt and print the reply
  piwork inspect SESSION     describe a session file
  piwork resources           list what the model would be told
(Set QT_QPA_PLATFORM=offscreen to run the window without a screen.)"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="piwork",
        description="Open the piwork workbench window for a project folder.",
        epilog="Headless commands: piwork -p PROMPT, piwork inspect SESSION, piwork resources.",
    )
    parser.add_argument("--version", action="version", version=f"piwork {__version__}")
    parser.add_argument(
        "target",
        nargs="*",
        metavar="DIR|FILE.jsonl",
        help="a project folder to open, or a session file (its project is the folder it was run in)",
    )
    parser.add_argument(
        "--cwd", metavar="DIR", default=None, help="project folder (default: the current folder)"
    )
    parser.add_argument("--session", metavar="FILE", default=None, help="open this session file (.jsonl)")
    trust = parser.add_mutually_exclusive_group()
    trust.add_argument(
        "--approve",
        "-a",
        dest="approve",
        action="store_const",
        const=True,
        default=None,
        help="trust the project's resources for this run only (nothing is saved)",
    )
    trust.add_argument(
        "--no-approve",
        "-na",
        dest="approve",
        action="store_const",
        const=False,
        help="do not load the project's resources for this run (nothing is saved)",
    )
    parser.add_argument("--smoke-test", action="store_true", help=argparse.SUPPRESS)
    return parser


def _place_target(args: argparse.Namespace) -> str | None:
    """Fold a positional folder or session file (what a desktop entry's ``%F`` passes) into ``--cwd`` or
    ``--session``; the reason it cannot be opened, else None."""
    if not args.target:
        return None
    target = os.path.abspath(os.path.expanduser(args.target[0]))
    if len(args.target) > 1:
        print(f"piwork: opening {target}; one window opens one project (ignored: "
              f"{', '.join(args.target[1:])})", file=sys.stderr)  # fmt: skip
    if os.path.isdir(target):
        if args.cwd is not None:
            return f"{args.target[0]}: give the folder either as --cwd or as the argument, not both"
        args.cwd = target
        return None
    if os.path.isfile(target):
        if args.session is not None:
            return f"{args.target[0]}: give the session file either as --session or as the argument, not both"
        args.session = target
        if args.cwd is None:
            args.cwd = _project_of(target)
        return None
    return f"{args.target[0]}: no such folder or file"


def _project_of(session_file: str) -> str:
    """The folder a session was run in (its header's ``cwd``) when it still exists, else the file's own."""
    from pathlib import Path

    from piwork.core.session import read_header

    try:
        header = read_header(Path(session_file)) or {}
    except (OSError, ValueError):
        header = {}
    cwd = header.get("cwd")
    return cwd if isinstance(cwd, str) and os.path.isdir(cwd) else os.path.dirname(session_file)


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    problem = _place_target(args)
    if problem is not None:
        print(f"piwork: {problem}", file=sys.stderr)
        return 2
    cwd = os.path.abspath(os.path.expanduser(args.cwd or os.getcwd()))
    if not os.path.isdir(cwd):
        print(f"piwork: --cwd {args.cwd}: not a folder", file=sys.stderr)
        return 2
    session = os.path.abspath(os.path.expanduser(args.session)) if args.session else None
    if session is not None and not os.path.isfile(session):
        what = "a folder, not a session file" if os.path.isdir(session) else "no such file"
        print(f"piwork: --session {args.session}: {what}", file=sys.stderr)
        return 2

    from piwork.gui.compat import display_problem  # Qt is imported only when a window is wanted

    problem = display_problem(os.environ, sys.platform)
    if problem is not None:
        print(NO_DISPLAY_MESSAGE.format(reason=problem), file=sys.stderr)
        return EXIT_NO_DISPLAY

    # The window's modules live as long as the process: loaded without cycle collections walking them, and
    # left out of later ones (which keeps those short on the GUI thread).
    from piwork.code_cache import long_lived_imports

    with long_lived_imports():
        from piwork.gui.app import WindowOptions, run

    code = run(WindowOptions(cwd=cwd, session_file=session, approve=args.approve, smoke_test=args.smoke_test))
    # Everything is written and the window is gone; what is left is handing memory back. The collector
    # walking the whole heap on the way out took most of a second: the objects alive now are left to
    # reference counting (files are closed and flushed as before).
    gc.freeze()
    return code
