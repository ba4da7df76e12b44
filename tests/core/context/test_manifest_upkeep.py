"""The task's manifest is kept current at settle time: re-checked after runs that touched files, saved
only when it changed, never while the agent runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from piwork.core.agent.events import MessageEnd
from piwork.core.context.contract import TaskContract
from piwork.core.context.manifest import MANIFEST_CUSTOM_TYPE, Manifest
from piwork.core.workflows.runtime import create_runtime
from piwork.core.workflows.tasks import begin_task
from tests.support.loopback_server import LoopbackServer, Text, ToolCall, Turn
from tests.support.runtime_options import runtime_options

pytestmark = pytest.mark.anyio


def _manifests(path: Path) -> list[dict[str, Any]]:
    out = []
    for line in path.read_text().splitlines()[1:]:
        entry = json.loads(line)
        if entry.get("type") == "custom" and entry.get("customType") == MANIFEST_CUSTOM_TYPE:
            out.append(entry)
    return out


async def test_manifest_follows_runs_that_touch_files(
    server: LoopbackServer, tmp_path: Path, task_project: Path
) -> None:
    runtime = await create_runtime(runtime_options(tmp_path, server, trust_override=True))
    session = runtime.session
    contract = TaskContract.from_json(
        {"title": "Fix", "goal": "fix app", "verify": "echo ok", "mode": "source-write", "phase": "implement"}
    )
    begin_task(session, runtime.resources, contract)
    during: list[int] = []
    path = runtime.store.path
    assert path is not None

    def count_while_running(event: Any) -> None:
        if isinstance(event, MessageEnd) and path.exists():
            during.append(len(_manifests(path)))

    session.subscribe(count_while_running)

    # a run that reads a file: the manifest gains it as a layer-8 task file, once, after the run
    server.script(Turn([ToolCall("read", {"path": "src/app.py"})]), Turn([Text("It prints hello.")]))
    await session.prompt("what does app.py do?")
    saved = _manifests(path)
    assert len(saved) == 2 and set(during) == {1}  # nothing written while the agent ran
    manifest = Manifest.from_json(saved[-1]["data"])
    (task_file,) = manifest.layer_entries(8)
    assert task_file.path == str(task_project / "src" / "app.py") and task_file.reason == "read by the model"
    assert saved[-1]["data"]["taskId"] == saved[0]["data"]["taskId"]
    assert "hello" not in json.dumps(saved[-1])  # metadata only
    entries = [json.loads(line) for line in path.read_text().splitlines()[1:]]
    assert entries[-1]["type"] == "custom" and entries[-2]["message"]["role"] == "assistant"

    # plain conversation, then the same read again: nothing changes, nothing is written
    server.script(Turn([Text("Yes.")]))
    await session.prompt("sure?")
    server.script(Turn([ToolCall("read", {"path": "src/app.py"})]), Turn([Text("Still hello.")]))
    await session.prompt("read it again")
    assert len(_manifests(path)) == 2

    # the model edits the snapshot the bundle injected: it is stale in the next manifest
    server.script(
        Turn(
            [
                ToolCall(
                    "edit",
                    {"path": ".pi/project-context.md", "edits": [{"oldText": "tiny", "newText": "small"}]},
                )
            ]
        ),
        Turn([Text("Edited.")]),
    )
    await session.prompt("fix the snapshot wording")
    saved = _manifests(path)
    assert len(saved) == 3
    manifest = Manifest.from_json(saved[-1]["data"])
    (snapshot,) = manifest.layer_entries(5)
    assert snapshot.status == "stale" and "changed since the task started" in (snapshot.reason or "")
    assert {e.reason for e in manifest.layer_entries(8)} == {"read by the model", "changed by the model"}
    runtime.store.close()


async def test_no_task_no_manifest(server: LoopbackServer, tmp_path: Path, task_project: Path) -> None:
    runtime = await create_runtime(runtime_options(tmp_path, server, trust_override=True))
    server.script(Turn([ToolCall("read", {"path": "src/app.py"})]), Turn([Text("hello")]))
    await runtime.session.prompt("read app.py")
    assert runtime.store.path is not None and _manifests(runtime.store.path) == []
    runtime.store.close()
