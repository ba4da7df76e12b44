"""Context tests: coroutine tests run on asyncio (anyio's plugin), against a started loopback provider,
in a task-ready project when they ask for one."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.loopback_server import LoopbackServer


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def server() -> Iterator[LoopbackServer]:
    with LoopbackServer() as srv:
        yield srv


@pytest.fixture
def task_project(tmp_path: Path) -> Path:
    """``tmp_path/project``: a git repository with AGENTS.md, a project snapshot, ``src/app.py`` and a
    profile whose verify command is ``echo verified``."""
    root = tmp_path / "project"
    (root / ".pi").mkdir(parents=True)
    (root / "src").mkdir()
    (root / "AGENTS.md").write_text("Be brief.\n")
    (root / "src" / "app.py").write_text("print('hello')\n")
    (root / ".pi" / "project-context.md").write_text("# Snapshot\nA tiny app.\n")
    (root / ".pi" / "piwork-profile.json").write_text(json.dumps({"version": 1, "verify": ["echo verified"]}))
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    return root
