"""The per-case environment: a materialized file tree under a fresh canonical root."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from piwork.core.ids import SequentialIds

ROOT_MARK = "$ROOT"
FS_KEYS = ("fs", "dirs", "symlinks")


@dataclass
class CaseEnv:
    """What an op may use besides its args: paths of the case's tree and its id source."""

    root: str | None = None
    home: str | None = None
    agent_dir: str | None = None
    ids: SequentialIds = field(default_factory=SequentialIds)


def map_strings(value: Any, fn: Any) -> Any:
    """Apply ``fn`` to every string in a JSON value, object keys included."""
    if isinstance(value, str):
        return fn(value)
    if isinstance(value, list):
        return [map_strings(v, fn) for v in value]
    if isinstance(value, dict):
        return {fn(k): map_strings(v, fn) for k, v in value.items()}
    return value


def needs_tree(args: dict[str, Any]) -> bool:
    return any(key in args for key in FS_KEYS)


@contextmanager
def case_environment(args: dict[str, Any]) -> Iterator[tuple[dict[str, Any], CaseEnv]]:
    """Materialize ``args``' tree (if any) and run the op inside it: cwd = root, HOME set."""
    if not needs_tree(args):
        yield args, CaseEnv()
        return
    tmp = tempfile.mkdtemp(prefix="piwork-conf-")
    root = os.path.realpath(tmp)
    old_cwd = os.getcwd()
    old_home = os.environ.get("HOME")
    try:
        args = map_strings(args, lambda s: s.replace(ROOT_MARK, root))
        _materialize(Path(root), args)
        home = args.get("home") or os.path.join(root, "home")
        agent_dir = args.get("agentDir") or os.path.join(home, ".pi", "agent")
        os.chdir(root)
        os.environ["HOME"] = home
        yield args, CaseEnv(root=root, home=home, agent_dir=agent_dir)
    finally:
        os.chdir(old_cwd)
        if old_home is None:
            os.environ.pop("HOME", None)
        else:
            os.environ["HOME"] = old_home
        shutil.rmtree(tmp, ignore_errors=True)


def _materialize(root: Path, args: dict[str, Any]) -> None:
    for rel in args.get("dirs") or []:
        (root / rel).mkdir(parents=True, exist_ok=True)
    for rel, content in (args.get("fs") or {}).items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.is_dir():  # a case may name one path as a folder (its edge case) and a file: the folder wins
            continue
        path.write_bytes(content.encode("utf-8", "surrogatepass"))
    for rel, target in (args.get("symlinks") or {}).items():
        link = root / rel
        link.parent.mkdir(parents=True, exist_ok=True)
        os.symlink(target, link)
