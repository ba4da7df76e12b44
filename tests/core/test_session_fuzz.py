"""Fuzzed sessions: a few hundred seeded mutants of a real session file go through ``piwork inspect``,
the engine's open path as the window takes it (the file opened for writing, its stats, context and
conversation rows; every fifth through the whole runtime), and ``-p`` against the loopback server (in
this process, and a few as real subprocesses). Nothing may end in
a traceback or hang, opening and inspecting never write, a prompt only appends, and an original kept
aside stays byte-identical. The window itself opening mutants is in tests/gui/test_session_fuzz_window.py.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from piwork.commands import headless
from piwork.commands import inspect as inspect_command
from piwork.core.agent.stats import StatsTracker, context_usage
from piwork.core.errors import PiworkError
from piwork.core.llm.catalog import BUILTIN_MODELS
from piwork.core.llm.models import model_from_json
from piwork.core.session import open_session
from piwork.core.session.format import serialize
from piwork.core.workflows.runtime import create_runtime
from piwork.gui.chat.conversation import prepare_conversation
from tests.support.loopback_server import LoopbackServer, Text, Turn
from tests.support.rich_session import rich_entries
from tests.support.runtime_options import runtime_options
from tests.support.session_mutants import mutants

SEED = 20261201
COUNT = 300
RUNTIME_EVERY = 5  # every fifth mutant is opened through the whole runtime, as the window opens it
PROMPTED = 20  # mutants also run through ``-p`` in this process
SUBPROCESSES = 2
HANG_S = 20.0
MODEL = model_from_json(BUILTIN_MODELS[0])


def _real_session(cwd: Path) -> bytes:
    header = {"type": "session", "version": 3, "id": "0193e5b2-7c1d-7a4e-9f00-1234567890ab",
              "timestamp": "2024-12-03T14:00:00.000Z", "cwd": str(cwd)}  # fmt: skip
    state = [
        {"type": "model_change", "id": "m0", "parentId": None, "timestamp": "2024-12-03T14:00:00.500Z",
         "provider": "anthropic", "modelId": "claude-sonnet-4-5"},
        {"type": "thinking_level_change", "id": "t0", "parentId": "m0",
         "timestamp": "2024-12-03T14:00:00.600Z", "thinkingLevel": "off"},
    ]  # fmt: skip
    entries = rich_entries()
    entries[0] = {**entries[0], "parentId": "t0"}
    return "".join(serialize(value) for value in [header, *state, *entries]).encode()


def _files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


def _migrated_or_same(folder: Path, name: str, original: bytes) -> bool:
    """The file is as it was, or it was migrated (an old header version) with the original kept beside."""
    after = (folder / name).read_bytes()
    backups = [p.read_bytes() for p in folder.glob(f"{name}.bak-v*")]
    return after == original or original in backups


@pytest.fixture
def server() -> Any:
    with LoopbackServer() as srv:
        yield srv


def test_mutants_pass_inspect_and_the_open_path_without_writing(
    tmp_path: Path, server: LoopbackServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    original = _real_session(project)
    aside = tmp_path / "original.jsonl"
    aside.write_bytes(original)
    folder = tmp_path / "sessions"
    folder.mkdir()
    problems: list[str] = []
    for number, data in enumerate(mutants(original, SEED, COUNT)):
        path = folder / f"m{number}.jsonl"
        path.write_bytes(data)
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            code = inspect_command.main([str(path)])
        if code not in (0, 1) or "Traceback" in out.getvalue():
            problems.append(f"inspect {number}: exit {code}")
        if _files(folder) != {path.name: data}:
            problems.append(f"inspect {number}: wrote {sorted(_files(folder))}")
        problems += _open_for_writing(path, data, number)
        if number % RUNTIME_EVERY == 0:
            problems += _open_like_the_window(tmp_path, server, path, data, number)
        for extra in folder.iterdir():
            extra.unlink()
    assert not problems, problems[:10]
    assert aside.read_bytes() == original


def _open_for_writing(path: Path, data: bytes, number: int) -> list[str]:
    """What opening a session reads: the index, every entry for the stats, the leaf's context and the
    bodies behind the context meter, and the chat's rows."""
    try:
        with open_session(path) as session:
            tree = session.tree
            StatsTracker(tree).current()
            context = tree.build_context()
            branch = [tree.body(r) for r in tree.path()]
            context_usage(MODEL, context.messages, branch)
            prepare_conversation(context.messages)
    except PiworkError:
        pass
    except Exception as err:  # the failure under test
        return [f"open {number}: {type(err).__name__}: {err}"]
    if not _migrated_or_same(path.parent, path.name, data):
        return [f"open {number}: the file changed on opening"]
    return []


def _open_like_the_window(
    tmp_path: Path, server: LoopbackServer, path: Path, data: bytes, number: int
) -> list[str]:
    async def open_it() -> None:
        runtime = await create_runtime(runtime_options(tmp_path, server, session_file=str(path)))
        try:
            session = runtime.session
            session.session_stats()
            session.context_usage()
            prepare_conversation(session.messages)
        finally:
            runtime.store.close()

    try:
        asyncio.run(asyncio.wait_for(open_it(), HANG_S))
    except PiworkError:
        pass  # not a session piwork can open: said so, nothing written
    except TimeoutError:
        return [f"open {number}: hung"]
    except Exception as err:  # the failure under test: any other exception is a crash
        return [f"open {number}: {type(err).__name__}: {err}"]
    if not _migrated_or_same(path.parent, path.name, data):
        return [f"open {number}: the file changed on opening"]
    return []


def test_mutants_through_a_prompt_only_append(
    tmp_path: Path, server: LoopbackServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    agent = tmp_path / "agent"
    agent.mkdir()
    (agent / "settings.json").write_text('{"retry": {"enabled": false}}')
    for key in [k for k in os.environ if k.endswith("_API_KEY")]:
        monkeypatch.delenv(key)
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(agent))
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.null.Keyring")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-fuzz-test-key-0000")
    monkeypatch.chdir(project)
    original = _real_session(project)
    folder = tmp_path / "sessions"
    folder.mkdir()
    args = ["--model", f"anthropic/{server.model}", "--base-url", server.url]
    problems: list[str] = []
    chosen = list(mutants(original, SEED, COUNT))[:: COUNT // PROMPTED][:PROMPTED]
    for number, data in enumerate(chosen):
        path = folder / f"p{number}.jsonl"
        path.write_bytes(data)
        server.script(Turn([Text("fine")]))
        out, err = io.StringIO(), io.StringIO()
        code = headless.main(["-p", "go on", "--session", str(path), *args], io.StringIO(""), out, err)
        if "Traceback" in err.getvalue() or code not in (0, 1):
            problems.append(f"-p {number}: exit {code}: {err.getvalue()[-300:]}")
        elif code == 0 and out.getvalue() != "fine\n":
            problems.append(f"-p {number}: printed {out.getvalue()!r}")
        after = path.read_bytes()
        backups = [p.read_bytes() for p in folder.glob(f"{path.name}.bak-v*")]
        if not after.startswith(data.rstrip(b"\n")) and data not in backups:
            problems.append(f"-p {number}: rewrote the file")
        for extra in folder.iterdir():
            extra.unlink()
    assert not problems, problems[:10]

    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    for number, data in enumerate(chosen[:SUBPROCESSES]):
        path = folder / f"s{number}.jsonl"
        path.write_bytes(data)
        server.script(Turn([Text("fine")]))
        done = subprocess.run(
            [sys.executable, "-m", "piwork", "-p", "go on", "--session", str(path), *args],
            capture_output=True, text=True, timeout=60, env=env, cwd=project, check=False,
        )  # fmt: skip
        assert "Traceback" not in done.stderr and done.returncode in (0, 1), done.stderr
        assert path.read_bytes().startswith(data.rstrip(b"\n")) or any(
            p.read_bytes() == data for p in folder.glob(f"{path.name}.bak-v*")
        )
    shutil.rmtree(folder)
