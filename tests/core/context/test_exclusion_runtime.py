"""Excluding for this task in a real runtime over the loopback provider: the next request leaves the part
out (a marker in its place), the session file gains only the state entry, a reopened session keeps it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import keyring.backends.null
import pytest

from piwork.core.context.contract import TaskContract
from piwork.core.context.exclusions import EXCLUSIONS_CUSTOM_TYPE
from piwork.core.llm.credentials import CredentialStore
from piwork.core.workflows.commands import exclusion_command
from piwork.core.workflows.runtime import RuntimeOptions, create_runtime
from piwork.core.workflows.tasks import begin_task
from piwork.core.workflows.view import view_from_session
from tests.support.loopback_server import LoopbackServer, RecordedRequest, Text, Turn

pytestmark = pytest.mark.anyio

SNAPSHOT = "# Snapshot\nThe app starts in src/main.py.\n"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def server() -> Any:
    with LoopbackServer() as srv:
        yield srv


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / ".pi").mkdir(parents=True)
    (tmp_path / "home").mkdir()
    (root / "AGENTS.md").write_text("Answer in one line.\n")
    (root / ".pi" / "project-context.md").write_text(SNAPSHOT)
    (root / ".pi" / "piwork-profile.json").write_text(json.dumps({"version": 1, "verify": ["echo ok"]}))
    return root


def _options(tmp_path: Path, server: LoopbackServer, session_file: str | None = None) -> RuntimeOptions:
    env = {"HOME": str(tmp_path / "home"), "ANTHROPIC_API_KEY": "sk-test"}
    return RuntimeOptions(
        cwd=str(tmp_path / "project"),
        agent_dir=tmp_path / "agent",
        model=f"anthropic/{server.model}",
        base_url=server.url,
        env=env,
        credentials=CredentialStore(backend=keyring.backends.null.Keyring(), env=env),
        trust_override=True,
        session_file=session_file,
    )


def _bundle(request: RecordedRequest) -> str:
    first = request.body["messages"][0]["content"]
    return str(first[0]["text"] if isinstance(first, list) else first)


def _system(request: RecordedRequest) -> str:
    system = request.body["system"]
    return "".join(b["text"] for b in system) if isinstance(system, list) else str(system)


async def test_the_next_request_leaves_the_excluded_parts_out_and_the_file_only_gains_state(
    server: LoopbackServer, tmp_path: Path, project: Path
) -> None:
    runtime = await create_runtime(_options(tmp_path, server))
    session = runtime.session
    contract = TaskContract.from_json(
        {"title": "Start", "goal": "find the entry point", "mode": "read-only", "phase": "scout"}
    )
    begin_task(session, runtime.resources, contract)
    server.script(Turn([Text("src/main.py")]))
    await session.prompt("where does it start?")
    first = server.requests[0]
    assert "The app starts in src/main.py." in _bundle(first)
    assert "Answer in one line." in _system(first)

    path = runtime.store.path
    assert path is not None
    lines_before = path.read_text().splitlines()
    view = view_from_session(session, runtime.resources)
    report, change = exclusion_command(view, "exclude", ["snapshot", "AGENTS.md"])
    assert report["ok"] and change is not None and change.touches_system_prompt
    lines_after = path.read_text().splitlines()
    assert lines_after[: len(lines_before)] == lines_before and len(lines_after) == len(lines_before) + 1
    added = json.loads(lines_after[-1])
    assert added["type"] == "custom" and added["customType"] == EXCLUSIONS_CUSTOM_TYPE
    assert [p["kind"] for p in added["data"]["parts"]] == ["contextFile", "snapshot"]

    server.script(Turn([Text("still src/main.py")]))
    await session.prompt("and the tests?")
    second = server.requests[1]
    part = f'<context_layer kind="snapshot" path=".pi/project-context.md">\n{SNAPSHOT}\n</context_layer>'
    marker = (
        '<context_layer kind="snapshot" path=".pi/project-context.md" excluded="true">\n'
        f"[piwork: the user excluded the project snapshot from this task's context (2 lines, "
        f"{len(SNAPSHOT)}B left out). The file itself is unchanged: read it if the task needs it. The user "
        "can bring it back with /context include .pi/project-context.md]\n</context_layer>"
    )
    assert part in _bundle(first)
    assert _bundle(second) == _bundle(first).replace(part, marker)  # nothing else in the bundle changed
    system = _system(second)
    assert "Answer in one line." not in system
    assert "the user excluded this context file from this task's context (1 line, 20B left out)" in system
    assert _system(first).replace("Answer in one line.\n", "") == system.replace(
        "[piwork: the user excluded this context file from this task's context (1 line, 20B left out). "
        "The file itself is unchanged: read it if the task needs it. The user can bring it back with "
        "/context include AGENTS.md]",
        "",
    )
    # the rest of the request is the same conversation: the first exchange, then the new prompt
    messages = second.body["messages"]
    assert messages[1]["content"][0]["text"] == "where does it start?" and messages[2]["role"] == "assistant"
    assert messages[3]["content"][0]["text"] == "and the tests?" and len(messages) == 4

    # the file keeps everything: the bundle entry is the line it was, the prompts and replies follow
    final = path.read_text().splitlines()
    assert final[: len(lines_after)] == lines_after
    assert [json.loads(line)["type"] for line in final[len(lines_after) :]] == ["message", "message"]
    bundle_line = next(line for line in final if '"piwork.contextBundle"' in line)
    assert "The app starts in src/main.py." in bundle_line
    runtime.store.close()

    # reopened, the task still leaves them out; including the snapshot again brings it back next request
    reopened = await create_runtime(_options(tmp_path, server, str(path)))
    server.script(Turn([Text("ok")]), Turn([Text("ok again")]))
    await reopened.session.prompt("one more")
    third = server.requests[2]
    assert "The app starts in src/main.py." not in _bundle(third) and "Answer in one line." not in _system(
        third
    )
    report, _ = exclusion_command(
        view_from_session(reopened.session, reopened.resources), "include", ["snapshot"]
    )
    assert report["ok"]
    await reopened.session.prompt("last")
    fourth = server.requests[3]
    assert _bundle(fourth) == _bundle(first)
    assert "Answer in one line." not in _system(fourth)  # still excluded
    reopened.store.close()
