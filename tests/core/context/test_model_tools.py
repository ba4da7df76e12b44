"""The context tools, called by the model through the loopback server during a task: bounded answers
from piwork's own figures; not offered without a task."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from piwork.core.context.contract import CONTEXT_TOOLS
from piwork.core.workflows.model_tools import MAX_ANSWER_CHARS, bounded
from piwork.core.workflows.runtime import create_runtime
from piwork.core.workflows.tasks import begin_task, contract_from_text
from tests.support.loopback_server import LoopbackServer, Text, ToolCall, Turn, Usage
from tests.support.runtime_options import runtime_options

pytestmark = pytest.mark.anyio


def _index(root: Path) -> None:
    files = {
        "src/orders.py": "def create_order(items):\n    return items\n\nclass OrderBook:\n    pass\n",
        "src/tax.py": "def vat(total):\n    return total * 0.2\n",
    }
    cited = []
    for rel, text in files.items():
        (root / rel).write_text(text)
        digest = hashlib.sha256(text.encode()).hexdigest()
        symbols = ["create_order", "OrderBook"] if "orders" in rel else ["vat"]
        cited.append(
            {
                "path": rel,
                "sha256": digest,
                "language": "python",
                "summary": f"{rel} code",
                "symbols": symbols,
            }
        )
    index = {
        "version": 1,
        "builtAt": "2026-12-01T09:00:00Z",
        "entries": [{"id": "src", "title": "src", "summary": "the app", "files": cited}],
    }
    (root / ".pi" / "context-index.json").write_text(json.dumps(index))


def _result_texts(server: LoopbackServer, n: int) -> list[str]:
    out = []
    for message in server.requests[n].body["messages"]:
        for block in message["content"] if isinstance(message["content"], list) else []:
            if block.get("type") == "tool_result":
                content = block["content"]
                out.append(content[0]["text"] if isinstance(content, list) else content)
    return out


async def test_the_model_calls_each_context_tool_and_gets_a_bounded_answer(
    server: LoopbackServer, tmp_path: Path, task_project: Path
) -> None:
    _index(task_project)
    runtime = await create_runtime(runtime_options(tmp_path, server, trust_override=True))
    session = runtime.session
    assert not set(CONTEXT_TOOLS) & set(session.tool_names())  # no task: not offered
    begin_task(session, runtime.resources, contract_from_text("read-only find where orders are made"))
    server.script(
        Turn([ToolCall("context_budget", {}, id="t1")], usage=Usage(input=3_000, output=10)),
        Turn(
            [
                ToolCall(
                    "context_preflight",
                    {"paths": ["src/orders.py", "../outside.txt"], "plan": "look"},
                    id="t2",
                )
            ]
        ),
        Turn([ToolCall("context_index_status", {}, id="t3")]),
        Turn([ToolCall("context_index_search", {"query": "order", "limit": 5}, id="t4")]),
        Turn([Text("Orders are made in src/orders.py.")]),
    )
    await session.prompt("where are orders made?")
    assert set(CONTEXT_TOOLS) <= {t["name"] for t in server.requests[0].body["tools"]}
    answers = [json.loads(t) for t in _result_texts(server, 4)]
    assert all(len(t) <= MAX_ANSWER_CHARS for t in _result_texts(server, 4))
    budget, preflight, status, search = answers
    # the budget: the provider's count of the last request, the marks of the loopback model's 128K window
    assert session.model is not None and session.model.context_window == 128_000
    assert budget["occupancy"]["source"] == "provider" and budget["occupancy"]["tokens"] == 3_010
    assert (budget["marks"]["pressure"], budget["marks"]["ceiling"]) == (78_131, 100_454)
    assert budget["elided"] == {"results": 0, "tokens": 0}
    # the task's start is a boundary: the governor looked, and found nothing to elide
    assert [(d["decision"], d["triggers"]) for d in budget["decisions"]] == [("no-op", ["boundary"])]
    # preflight: the file inside the project measured, the one outside not
    assert preflight["verdict"] == "ok" and [f["path"] for f in preflight["files"]] == ["src/orders.py"]
    assert preflight["after"] == preflight["projected"] + preflight["planned"] and preflight["planned"] > 0
    assert status["ok"] is True and (status["entries"], status["freshEntries"]) == (1, 1)
    assert search["ok"] is True and [r["path"] for r in search["results"]] == ["src/orders.py"]
    assert search["results"][0]["symbols"][:2] == ["create_order", "OrderBook"]
    assert search["results"][0]["fresh"] is True
    # listed in the X-ray like any tool schema
    names = session.tool_names()
    ray = session.governance.xray()
    assert {p.label for p in ray.parts if p.kind == "tool_schema"} >= {f"tool: {n}" for n in CONTEXT_TOOLS}
    assert set(CONTEXT_TOOLS) <= set(names)
    runtime.store.close()


async def test_untrusted_project_search_reads_no_index(
    server: LoopbackServer, tmp_path: Path, task_project: Path
) -> None:
    _index(task_project)
    runtime = await create_runtime(runtime_options(tmp_path, server, trust_override=False))
    session = runtime.session
    begin_task(session, runtime.resources, contract_from_text("read-only look around"))
    server.script(Turn([ToolCall("context_index_search", {"query": "order"}, id="s")]), Turn([Text("ok")]))
    await session.prompt("search")
    (answer,) = [json.loads(t) for t in _result_texts(server, 1)]
    assert answer == {
        "ok": False,
        "status": "blocked-untrusted",
        "message": "The project is not trusted: its index is not read.",
    }
    runtime.store.close()


def test_answers_are_cut_to_the_bound_and_say_so() -> None:
    doc: dict[str, Any] = {"ok": True, "results": [{"path": "x" * 300} for _ in range(40)]}
    text = bounded(doc)
    assert len(text) <= MAX_ANSWER_CHARS and json.loads(text)["truncated"] is True
