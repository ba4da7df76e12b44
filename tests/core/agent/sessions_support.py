"""Builds a real AgentSession for tests: a session store (file or memory), a loopback provider, tools."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any, ClassVar

from piwork.core.agent.events import AgentEvent
from piwork.core.agent.session import AgentSession, AgentSessionOptions
from piwork.core.llm.types import Model
from piwork.core.session.store import Session, create_session, in_memory_session
from piwork.core.tools.base import Tool, ToolContext, ToolError, ToolRegistry, ToolResult


class Gate(Tool):
    """Answers ``ok:<text>``; a call whose id is in ``gates`` waits for that event first."""

    name = "gate"
    description = "Return the text after an optional wait."
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "required": ["text"],
    }
    snippet = "gate text"

    def __init__(self) -> None:
        self.gates: dict[str, asyncio.Event] = {}
        self.started: list[str] = []

    async def execute(
        self, call_id: str, args: dict[str, Any], ctx: ToolContext, on_update: Any = None
    ) -> ToolResult:
        self.started.append(args["text"])
        gate = self.gates.get(args["text"])
        if gate is not None:
            try:
                await gate.wait()
            except asyncio.CancelledError:
                raise ToolError("Operation aborted", aborted=True) from None
        return ToolResult.text(f"ok:{args['text']}")


class Recorder:
    def __init__(self) -> None:
        self.events: list[AgentEvent] = []
        self.sleeps: list[float] = []

    def __call__(self, event: AgentEvent) -> None:
        self.events.append(event)

    def of(self, kind: str) -> list[Any]:
        return [e for e in self.events if e.type == kind]

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        await asyncio.sleep(0)


def make_session(
    model: Model | None,
    tmp_path: Path | None = None,
    *,
    settings: dict[str, Any] | None = None,
    store: Session | None = None,
    **overrides: Any,
) -> tuple[AgentSession, Session, Recorder, Gate]:
    if store is None:
        store = create_session(str(tmp_path), tmp_path / "sessions") if tmp_path else in_memory_session()
    gate = Gate()
    recorder = Recorder()
    context = store.tree.build_context()
    fields: dict[str, Any] = {
        "tree": store.tree,
        "registry": ToolRegistry([gate]),
        "cwd": store.cwd,
        "model": model,
        "api_key_for": lambda _m: "test-key",
        "system_prompt_for": lambda names: "You are a test agent. Tools: " + ", ".join(names),
        "messages": list(context.messages),
        "settings": settings or {},
        "session_id": store.session_id,
        "session_file": store.path,
        "sleep": recorder.sleep,
    }
    fields.update(overrides)
    options = AgentSessionOptions(**fields)
    session = AgentSession(options)
    session.subscribe(recorder)
    return session, store, recorder, gate


def file_entries(store: Session) -> list[dict[str, Any]]:
    assert store.path is not None
    lines = store.path.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines[1:]]


def file_messages(store: Session) -> list[dict[str, Any]]:
    return [e["message"] for e in file_entries(store) if e["type"] == "message"]
