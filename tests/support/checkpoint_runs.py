"""A small project for checkpoint tests, replies that change it through write, edit and bash, and ways to
compare its files."""

from __future__ import annotations

import asyncio
import hashlib
import os
import subprocess
from pathlib import Path

from piwork.core.workflows.runtime import AgentRuntime, create_runtime
from tests.support.loopback_server import LoopbackServer, Text, ToolCall, Turn
from tests.support.runtime_options import runtime_options


def files_of(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` but its ``.git``, by relative path."""
    found = {}
    for folder, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in names:
            full = Path(folder) / name
            found[full.relative_to(root).as_posix()] = full.read_bytes()
    return found


def tree_hash(root: Path) -> str:
    digest = hashlib.sha256()
    for folder, dirs, names in sorted(os.walk(root)):
        dirs.sort()
        for name in sorted(names):
            full = Path(folder) / name
            digest.update(str(full.relative_to(root)).encode() + b"\0" + full.read_bytes())
    return digest.hexdigest()


def git(project: Path, *args: str) -> None:
    env = {**os.environ, "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}
    env.update(GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@t")
    subprocess.run(["git", *args], cwd=project, env=env, check=True, capture_output=True)


def make_project(tmp_path: Path, kind: str) -> Path:
    project = tmp_path / "project"
    project.mkdir()
    (project / "base.txt").write_text("alpha\nbeta\n")
    (project / "old.txt").write_text("to be removed\n")
    (project / ".gitignore").write_text("build/\n")
    (project / "build").mkdir()
    (project / "build" / "out.bin").write_bytes(b"\x00ignored")
    if kind != "plain":
        git(project, "init", "-q")
        if kind == "history":
            git(project, "add", "-A")
            git(project, "commit", "-q", "-m", "first")
    return project


def calls(tag: str) -> Turn:
    """One reply making three changes: write a new file, edit base.txt, and a command that deletes,
    creates and changes files."""
    return Turn(
        [
            ToolCall("write", {"path": f"{tag}/new.txt", "content": f"written on {tag}\n"}),
            ToolCall("edit", {"path": "base.txt", "edits": [{"oldText": "beta", "newText": f"beta {tag}"}]}),
            ToolCall(
                "bash", {"command": f"rm -f old.txt && echo {tag} > made-{tag}.txt && echo {tag} >> base.txt"}
            ),
        ]
    )


async def run_prompt(runtime: AgentRuntime, server: LoopbackServer, text: str, tag: str) -> None:
    server.script(calls(tag), Turn([Text(f"done {tag}")]))
    await runtime.session.prompt(text)


def record_checkpointed(tmp_path: Path) -> tuple[Path, Path]:
    """A saved session of one reply that writes, edits and runs a command (checkpoints under
    ``tmp_path/agent``), closed: its file and its project."""

    async def record(server: LoopbackServer) -> Path:
        runtime = await create_runtime(runtime_options(tmp_path, server))
        await run_prompt(runtime, server, "first", "a")
        assert runtime.store.path is not None
        runtime.store.close()
        return runtime.store.path

    project = make_project(tmp_path, "history")
    with LoopbackServer() as server:
        return asyncio.run(record(server)), project
