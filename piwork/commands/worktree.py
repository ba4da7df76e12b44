"""``piwork worktree new NAME [--base REF] [--cwd DIR]`` and ``piwork worktree list [--cwd DIR]``.

``new`` makes a git worktree with the branch NAME (from REF, else the current branch) where the window's
New Session in a Worktree… puts it (``piwork.worktrees.location`` in the global settings) and prints its
folder; ``list`` prints each worktree of the repository, the main checkout first, with its branch.
"""

from __future__ import annotations

import argparse
import os
import sys

from piwork.core.fs import WorktreeError, create_worktree, list_worktrees, worktree_support
from piwork.core.paths import agent_dir
from piwork.core.settings import Settings
from piwork.core.settings_schema import WORKTREES_LOCATION


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="piwork worktree", description="Git worktrees for sessions.")
    where = argparse.ArgumentParser(add_help=False)
    where.add_argument("--cwd", default=os.getcwd(), help="a folder of the repository (default: here)")
    verbs = parser.add_subparsers(dest="verb", required=True)
    new = verbs.add_parser("new", parents=[where], help="make a worktree and branch NAME; print its folder")
    new.add_argument("name", help="the new branch (and the worktree's folder name)")
    new.add_argument("--base", default=None, help="the branch or commit it starts from (default: current)")
    verbs.add_parser("list", parents=[where], help="list the repository's worktrees and their branches")
    ns = parser.parse_args(argv)
    cwd = os.path.abspath(ns.cwd)
    support = worktree_support(cwd)
    if support.repo is None:
        print(f"piwork worktree: {support.reason}", file=sys.stderr)
        return 1
    try:
        if ns.verb == "new":
            location = Settings.for_project(cwd, str(agent_dir()), project_trusted=False).values.value(
                WORKTREES_LOCATION
            )
            info = create_worktree(cwd, ns.name, ns.base, location)
            print(info.path)
        else:
            for path, branch in list_worktrees(cwd):
                print(f"{path}\t{branch or '(detached)'}")
    except WorktreeError as err:
        print(f"piwork worktree: {err}", file=sys.stderr)
        return 1
    return 0
