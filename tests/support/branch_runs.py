"""A session with two branches recorded by real agent runs against the loopback provider.

`record_two_branches(tmp_path)` runs the real runtime (real tools in a real project folder): a first
turn, then branch A (write, read, edit and a passing command), then a move back with a branch summary
written by the model, then branch B (a failing command, another write, a read of a missing file).
It returns the session file and the ids of interest; the file is closed, ready to open.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import keyring.backends.null

from piwork.core.llm.credentials import CredentialStore
from piwork.core.workflows.runtime import RuntimeOptions, create_runtime
from tests.support.loopback_server import LoopbackServer, Text, ToolCall, Turn, Usage

SUMMARY = "## Goal\nPrint a greeting.\n\n## Progress\nhello.py written, edited and run."


@dataclass
class RecordedBranches:
    path: Path
    project: Path
    ids: dict[str, str]  # fork (last shared entry), tip_a, tip_b, summary, edit_result, failed_bash
    entries: list[dict[str, Any]]


def _options(tmp_path: Path, server: LoopbackServer, project: Path) -> RuntimeOptions:
    env = {"HOME": str(tmp_path / "home"), "ANTHROPIC_API_KEY": "sk-test"}
    return RuntimeOptions(
        cwd=str(project),
        agent_dir=tmp_path / "agent",
        model=f"loopback/{server.model}",
        env=env,
        credentials=CredentialStore(backend=keyring.backends.null.Keyring(), env=env),
    )


async def _record(tmp_path: Path, server: LoopbackServer) -> Path:
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    (tmp_path / "home").mkdir(exist_ok=True)
    (tmp_path / "agent").mkdir(exist_ok=True)
    models = {
        "providers": {
            "loopback": {
                "baseUrl": server.url,
                "api": "anthropic-messages",
                "apiKey": "sk-test",
                "models": [
                    {
                        "id": server.model,
                        "cost": {"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75},
                    }
                ],
            }
        }
    }
    (tmp_path / "agent" / "models.json").write_text(
        json.dumps(models), encoding="utf-8"
    )  # priced per million
    runtime = await create_runtime(_options(tmp_path, server, project))
    session = runtime.session
    server.script(Turn([Text("Ready. What should the script print?")], usage=Usage(input=50, output=8)))
    await session.prompt("We will write a tiny script.")
    server.script(
        Turn([ToolCall("write", {"path": "hello.py", "content": "print('hi')\n"})], usage=Usage(input=120, output=20)),
        Turn([ToolCall("read", {"path": "hello.py"})], usage=Usage(input=140, output=10)),
        Turn([ToolCall("edit", {"path": "hello.py", "edits": [{"oldText": "'hi'", "newText": "'hello'"}]})],
             usage=Usage(input=160, output=30)),
        Turn([ToolCall("bash", {"command": "python3 hello.py"})], usage=Usage(input=180, output=10)),
        Turn([Text("Done: hello.py prints hello.")], usage=Usage(input=200, output=12)),
    )  # fmt: skip
    await session.prompt("Make it print hello.")
    fork = _first_assistant(runtime.store.path)
    server.script(Turn([Text(SUMMARY)], usage=Usage(input=300, output=40)))
    await session.navigate(fork, summarize=True)
    server.script(
        Turn([ToolCall("bash", {"command": "ls missing-dir && exit 3"})], usage=Usage(input=90, output=15)),
        Turn([ToolCall("write", {"path": "notes/plan.txt", "content": "try another way\n"})],
             usage=Usage(input=110, output=15)),
        Turn([ToolCall("read", {"path": "nope.txt"})], usage=Usage(input=120, output=5)),
        Turn([Text("Plan B written to notes/plan.txt.")], usage=Usage(input=130, output=9)),
    )  # fmt: skip
    await session.prompt("Try another way instead.")
    assert runtime.store.path is not None
    runtime.store.close()
    return runtime.store.path


def _lines(path: Path | None) -> list[dict[str, Any]]:
    assert path is not None
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()[1:]]


def _first_assistant(path: Path | None) -> str:
    return next(
        e["id"] for e in _lines(path) if e["type"] == "message" and e["message"]["role"] == "assistant"
    )


def record_two_branches(tmp_path: Path) -> RecordedBranches:
    with LoopbackServer() as server:
        path = asyncio.run(_record(tmp_path, server))
    entries = _lines(path)
    ids: dict[str, str] = {"fork": _first_assistant(path)}
    summary = next(e for e in entries if e["type"] == "branch_summary")
    ids["summary"] = summary["id"]
    ids["tip_a"] = summary["fromId"]
    ids["tip_b"] = entries[-1]["id"]
    results = [e for e in entries if e["type"] == "message" and e["message"]["role"] == "toolResult"]
    ids["edit_result"] = next(e["id"] for e in results if e["message"]["toolName"] == "edit")
    ids["failed_bash"] = next(
        e["id"] for e in results if e["message"]["toolName"] == "bash" and e["message"]["isError"]
    )
    return RecordedBranches(path, tmp_path / "project", ids, entries)
