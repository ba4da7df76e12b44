"""The same command line, run by the reference CLI and by piwork's headless mode, sends the same requests.

Both programs talk to one loopback server that plays the same scripted turns; their request bodies are
compared field by field. Left out of the comparison, by design: the system prompt and the tool
and parameter descriptions (each tool writes its own prose; the schemas' shape is compared) and the prompt cache key
(it is the session id, random in each run). Session files are compared by the state entries each tool
writes (``model_change`` / ``thinking_level_change``), so that either tool resuming the other's file
runs with the same settings.

Skips with the reason when the reference implementation is not installed (``PI_ORACLE_DIR``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.support import Failure, LoopbackServer, Text, ToolCall, Turn, Usage
from tests.support.reference import MISSING_REASON, NODE, PI_DIST, reference_installed

pytestmark = [
    pytest.mark.oracle,
    pytest.mark.skipif(not reference_installed(PI_DIST / "bundle" / "cli.js"), reason=MISSING_REASON),
]

REPO = Path(__file__).resolve().parents[2]
PI_CLI = PI_DIST / "bundle" / "cli.js"
MODEL = "loopback-model"


@dataclass
class Run:
    bodies: list[dict[str, Any]]
    entries: list[dict[str, Any]]
    stdout: str

    def events(self, kind: str) -> list[dict[str, Any]]:
        """Events of one type from a ``--mode json`` run."""
        found = []
        for line in self.stdout.splitlines():
            event = json.loads(line) if line.startswith("{") else {}
            if event.get("type") == kind:
                found.append(event)
        return found

    def errors(self) -> list[str]:
        """The error text of each failed response kept in the session file."""
        return [
            e["message"]["errorMessage"]
            for e in self.entries
            if e["type"] == "message" and e["message"].get("errorMessage")
        ]


class Side:
    """One program (``pi`` or ``piwork``) with its own agent folder and project folder."""

    def __init__(self, name: str, root: Path, server: LoopbackServer, models: dict[str, Any]) -> None:
        self.name = name
        self.server = server
        self.agent = root / name / "agent"
        self.project = root / name / "project"
        self.agent.mkdir(parents=True)
        self.project.mkdir(parents=True)
        (self.project / "notes.txt").write_text("alpha\nbeta\n")
        (self.agent / "models.json").write_text(json.dumps(models))

    def settings(self, values: dict[str, Any]) -> None:
        (self.agent / "settings.json").write_text(json.dumps(values))

    def run(self, *args: str) -> Run:
        env = {
            **{k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")},
            "PI_CODING_AGENT_DIR": str(self.agent),
            "HOME": str(self.agent.parent),
            "ANTHROPIC_API_KEY": "parity-key",
            "PI_OFFLINE": "1",
            "PI_SKIP_VERSION_CHECK": "1",
            "PYTHONPATH": str(REPO),
        }
        if self.name == "pi":
            command = [str(NODE), str(PI_CLI), *args]
        else:
            command = [sys.executable, "-m", "piwork", *args]
        start = len(self.server.requests)
        done = subprocess.run(
            command, cwd=self.project, env=env, capture_output=True, text=True, timeout=90, check=False
        )
        assert done.returncode == 0, f"{self.name} failed: {done.stderr[-2000:]}"
        bodies = [r.body for r in self.server.requests[start:]]
        return Run(bodies, self.entries(), done.stdout)

    def entries(self) -> list[dict[str, Any]]:
        files = sorted(self.agent.rglob("*.jsonl"), key=lambda p: p.stat().st_mtime)
        files = [f for f in files if "sessions" in f.parts]
        if not files:
            return []
        return [json.loads(line) for line in files[-1].read_text().splitlines()[1:] if line.strip()]


def _comparable(body: dict[str, Any]) -> dict[str, Any]:
    """The body without the prose each tool writes for itself and the per-run cache key."""
    body = _numbered_tool_ids(json.loads(json.dumps(body)))
    body.pop("prompt_cache_key", None)
    if isinstance(body.get("system"), list):  # Anthropic: the system prompt blocks
        body["system"] = [{**b, "text": "<system prompt>"} for b in body["system"]]
    for message in body.get("messages", []):
        if message.get("role") in ("system", "developer"):
            content = message["content"]
            message["content"] = (
                "<system prompt>"
                if isinstance(content, str)
                else [{**b, "text": "<system prompt>"} for b in content]
            )
    for tool in body.get("tools", []):
        target = tool.get("function", tool)
        target["description"] = "<description>"
        for key in ("parameters", "input_schema"):
            if key in target:
                target[key] = _without_descriptions(target[key])
    return body


def _numbered_tool_ids(body: dict[str, Any]) -> dict[str, Any]:
    """Tool-call ids come from the server's request counter: number them by first appearance instead."""
    text = json.dumps(body)
    seen: dict[str, str] = {}
    for message in body.get("messages", []):
        for call in message.get("tool_calls") or []:
            seen.setdefault(call["id"], f"call-{len(seen) + 1}")
        for block in message.get("content") if isinstance(message.get("content"), list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_use":
                seen.setdefault(block["id"], f"call-{len(seen) + 1}")
    for original, number in seen.items():
        text = text.replace(json.dumps(original), json.dumps(number))
    result: dict[str, Any] = json.loads(text)
    return result


def _without_descriptions(schema: Any) -> Any:
    """A JSON schema without its ``description`` prose (the shape, types and required keys stay)."""
    if isinstance(schema, dict):
        return {k: _without_descriptions(v) for k, v in schema.items() if k != "description"}
    if isinstance(schema, list):
        return [_without_descriptions(v) for v in schema]
    return schema


def _state(entries: list[dict[str, Any]]) -> list[tuple[str, Any]]:
    wanted = {"model_change": "modelId", "thinking_level_change": "thinkingLevel"}
    return [(e["type"], e.get(wanted[e["type"]])) for e in entries if e["type"] in wanted]


def _assert_same(pi: Run, mine: Run) -> None:
    assert len(pi.bodies) == len(mine.bodies)
    for index, (theirs, ours) in enumerate(zip(pi.bodies, mine.bodies, strict=True)):
        a, b = _comparable(theirs), _comparable(ours)
        for key in sorted(set(a) | set(b)):
            assert a.get(key) == b.get(key), f"request {index}: field {key!r} differs"
    assert _state(pi.entries) == _state(mine.entries)


def _openai_models(server: LoopbackServer, reasoning: bool = True) -> dict[str, Any]:
    """A models.json provider as a user writes it for a local server: no ``compat`` at all."""
    return {
        "providers": {
            "local": {
                "baseUrl": server.openai_url,
                "api": "openai-completions",
                "apiKey": "local-key",
                "models": [
                    {"id": MODEL, "reasoning": reasoning, "contextWindow": 128000, "maxTokens": 16384},
                    {"id": "other-model", "reasoning": reasoning},
                ],
            }
        }
    }


def _anthropic_models(server: LoopbackServer) -> dict[str, Any]:
    model = {"id": MODEL, "reasoning": True, "input": ["text", "image"], "contextWindow": 200000,
             "maxTokens": 32000}  # fmt: skip
    return {"providers": {"anthropic": {"baseUrl": server.url, "models": [model]}}}


def _tool_turns() -> list[Turn]:
    return [
        Turn([Text("Reading."), ToolCall("read", {"path": "notes.txt"})], usage=Usage(input=900, output=20)),
        Turn([Text("It has two lines.")], usage=Usage(input=1000, output=10)),
    ]


def _both(tmp_path: Path, server: LoopbackServer, models: dict[str, Any]) -> tuple[Side, Side]:
    return Side("pi", tmp_path, server, models), Side("piwork", tmp_path, server, models)


@pytest.fixture
def server() -> Any:
    with LoopbackServer(MODEL) as srv:
        yield srv


@pytest.mark.parametrize("thinking", [None, "off", "medium", "high"])
def test_openai_compatible_provider_without_compat(
    server: LoopbackServer, tmp_path: Path, thinking: str | None
) -> None:
    pi, mine = _both(tmp_path, server, _openai_models(server))
    args = ["-p", "read notes.txt", "--provider", "local", "--model", MODEL]
    if thinking:
        args += ["--thinking", thinking]
    server.script(*_tool_turns())
    reference = pi.run(*args)
    server.script(*_tool_turns())
    _assert_same(reference, mine.run(*args))


@pytest.mark.parametrize("thinking", [None, "off", "medium", "high"])
def test_anthropic_messages(server: LoopbackServer, tmp_path: Path, thinking: str | None) -> None:
    pi, mine = _both(tmp_path, server, _anthropic_models(server))
    args = ["-p", "read notes.txt", "--provider", "anthropic", "--model", MODEL]
    if thinking:
        args += ["--thinking", thinking]
    server.script(*_tool_turns())
    reference = pi.run(*args)
    server.script(*_tool_turns())
    _assert_same(reference, mine.run(*args))


def test_default_thinking_level_from_settings(server: LoopbackServer, tmp_path: Path) -> None:
    pi, mine = _both(tmp_path, server, _openai_models(server))
    for side in (pi, mine):
        side.settings({"defaultThinkingLevel": "low"})
    args = ["-p", "hi", "--provider", "local", "--model", MODEL]
    server.script(Turn([Text("hello")]))
    reference = pi.run(*args)
    server.script(Turn([Text("hello")]))
    mine_run = mine.run(*args)
    _assert_same(reference, mine_run)
    assert mine_run.bodies[0]["reasoning_effort"] == "low"


@pytest.mark.parametrize(
    "resume",
    [
        ["--model", "other-model"],
        ["--thinking", "high"],
        ["--model", "other-model", "--thinking", "low"],
        [],
    ],
)
def test_resume_with_another_model_or_level(
    server: LoopbackServer, tmp_path: Path, resume: list[str]
) -> None:
    pi, mine = _both(tmp_path, server, _openai_models(server))
    first = ["-p", "hi", "--provider", "local", "--model", MODEL, "--thinking", "medium"]
    again = ["-p", "again", "--continue", "--provider", "local", *resume]
    if "--model" not in resume:
        again += ["--model", MODEL]
    runs: dict[str, Run] = {}
    for side in (pi, mine):
        server.script(Turn([Text("hello")]))
        side.run(*first)
        server.script(Turn([Text("hello again")]))
        runs[side.name] = side.run(*again)
    _assert_same(runs["pi"], runs["piwork"])


def test_usage_that_differs_from_the_estimate_clamps_output_the_same_way(
    server: LoopbackServer, tmp_path: Path
) -> None:
    """The provider reports far more input than chars/4 suggests: the next request's output cap follows it."""
    models = _openai_models(server)
    models["providers"]["local"]["models"][0].update(contextWindow=40000, maxTokens=32000)
    pi, mine = _both(tmp_path, server, models)
    args = ["-p", "read notes.txt", "--provider", "local", "--model", MODEL, "--thinking", "off"]
    turns = [
        Turn(
            [Text("Reading."), ToolCall("read", {"path": "notes.txt"})], usage=Usage(input=20000, output=30)
        ),
        Turn([Text("Done.")], usage=Usage(input=20100, output=5)),
    ]
    server.script(*turns)
    reference = pi.run(*args)
    server.script(*turns)
    mine_run = mine.run(*args)
    _assert_same(reference, mine_run)
    assert mine_run.bodies[1]["max_completion_tokens"] < mine_run.bodies[0]["max_completion_tokens"]


@pytest.mark.parametrize(
    ("api", "failures", "settings"),
    [
        ("openai", [(429, '{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}'),
                    (500, "upstream boom")], {}),
        ("openai", [(503, ""), (400, '{"error":{"message":"Overloaded, try again"}}'),
                    (502, '{"detail":"bad gateway"}')], {"retry": {"baseDelayMs": 20}}),
        ("anthropic", [(429, '{"type":"error","error":{"type":"rate_limit_error","message":"Slow down"}}'),
                       (529, "Overloaded"), (500, "")], {"retry": {"baseDelayMs": 20}}),
    ],
)  # fmt: skip
def test_http_errors_retry_waits_and_their_words(
    server: LoopbackServer,
    tmp_path: Path,
    api: str,
    failures: list[tuple[int, str]],
    settings: dict[str, Any],
) -> None:
    models = _openai_models(server) if api == "openai" else _anthropic_models(server)
    pi, mine = _both(tmp_path, server, models)
    provider = "local" if api == "openai" else "anthropic"
    args = ["-p", "hi", "--provider", provider, "--model", MODEL, "--mode", "json"]
    runs: dict[str, Run] = {}
    for side in (pi, mine):
        side.settings(settings)
        server.script(*[Turn(failure=Failure.http(status, body)) for status, body in failures])
        server.script(Turn([Text("hello")]))
        runs[side.name] = side.run(*args)
    assert runs["piwork"].errors() == runs["pi"].errors()
    wanted = ("attempt", "maxAttempts", "delayMs", "errorMessage")
    retries = {
        name: [{k: e.get(k) for k in wanted} for e in run.events("auto_retry_start")]
        for name, run in runs.items()
    }
    assert retries["piwork"] == retries["pi"] and retries["pi"]
