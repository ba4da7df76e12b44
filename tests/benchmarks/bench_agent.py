"""Agent loop throughput: 20,000 streamed tokens through AgentSession into a session file.

Three figures. ``engine``: the provider's events (recorded once from the loopback server) replayed
through the loop, the session's message handling, a listener and the session file - the engine's own
cost per token, which is what the target (>= 20,000 tokens/s) is about. ``engine_json``: the same with
every event written as a JSON line, as ``piwork -p --mode json`` does. ``end_to_end``: the live path
from the loopback server (HTTP + SSE parsing included; the server runs in a thread of this process, so
this is a floor). Peak memory is the tracemalloc peak of one engine run. Prints one JSON line.
"""

from __future__ import annotations

import asyncio
import copy
import io
import json
import sys
import tempfile
import time
import tracemalloc
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # run as a script from anywhere

from piwork.core.agent.events import AgentEvent, event_to_json
from piwork.core.agent.session import AgentSession, AgentSessionOptions
from piwork.core.llm.streaming import stream
from piwork.core.llm.types import AssistantEvent, LlmContext, Model, StreamOptions
from piwork.core.session.store import create_session
from piwork.core.tools.base import ToolRegistry
from tests.support.loopback_server import LoopbackServer, Text, Turn, Usage

TOKENS = 20_000
TARGET = 20_000


def _turn() -> Turn:
    return Turn(
        [Text("", deltas=[f"w{i % 97} " for i in range(TOKENS)])], usage=Usage(input=100, output=TOKENS)
    )


async def _record(server: LoopbackServer, model: Model) -> list[AssistantEvent]:
    server.script(_turn())
    context = LlmContext("bench", [{"role": "user", "content": "go", "timestamp": 1}])
    return [event async for event in stream(model, context, StreamOptions(api_key="k"))]


def _session(model: Model, folder: Path, stream_fn: Any) -> tuple[AgentSession, Any]:
    store = create_session(str(folder), folder / "sessions")
    options = AgentSessionOptions(
        tree=store.tree,
        registry=ToolRegistry(),
        cwd=str(folder),
        model=model,
        api_key_for=lambda _m: "k",
        system_prompt_for=lambda _names: "bench",
        stream_fn=stream_fn,
    )
    return AgentSession(options), store


async def _run(model: Model, folder: Path, stream_fn: Any, json_out: bool) -> float:
    session, store = _session(model, folder, stream_fn)
    sink = io.StringIO()
    count = [0]

    def listener(event: AgentEvent) -> None:
        count[0] += 1
        if json_out:
            sink.write(json.dumps(event_to_json(event), separators=(",", ":"), default=str) + "\n")

    session.subscribe(listener)
    if hasattr(stream_fn, "prepare"):
        stream_fn.prepare()
    start = time.perf_counter()
    await session.prompt("go")
    elapsed = time.perf_counter() - start
    store.close()
    last = session.messages[-1]
    assert last["stopReason"] == "stop" and count[0] > TOKENS, (last.get("errorMessage"), count[0])
    return elapsed


def _replay(events: list[AssistantEvent]) -> Any:
    """A stream function yielding a fresh copy of the recorded events (copied before it is timed)."""
    copies: list[list[AssistantEvent]] = []

    async def replay(
        _model: Model, _context: LlmContext, _options: StreamOptions
    ) -> AsyncIterator[AssistantEvent]:
        for event in copies.pop():
            yield event

    def prepare() -> None:
        copies.append(copy.deepcopy(events))

    replay.prepare = prepare  # type: ignore[attr-defined]
    return replay


async def main() -> dict[str, Any]:
    with LoopbackServer() as server, tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        model = server.anthropic_model()
        events = await _record(server, model)
        replay = _replay(events)
        engine = min([await _run(model, folder / f"e{i}", replay, False) for i in range(3)])
        engine_json = min([await _run(model, folder / f"j{i}", replay, True) for i in range(3)])
        server.script(_turn())
        end_to_end = await _run(model, folder / "live", stream, False)
        tracemalloc.start()
        await _run(model, folder / "mem", replay, False)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    return {
        "benchmark": "agent",
        "tokens": TOKENS,
        "engine_tokens_per_s": round(TOKENS / engine),
        "engine_json_tokens_per_s": round(TOKENS / engine_json),
        "end_to_end_tokens_per_s": round(TOKENS / end_to_end),
        "peak_memory_mb": round(peak / 1e6, 1),
        "target_tokens_per_s": TARGET,
        "meets_target": TOKENS / engine >= TARGET,
    }


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main())))
