"""The governor acts before host compaction on every window, over HTTP with a provider that counts.

Each row is a 34-round reading run (each file about a twentieth of the room host compaction leaves, so
the transcript grows to ~1.7 times that room) against the loopback server, whose replies report an input
count that is the request's chars/4 size times the row's factor — or no usage at all. In every row the
governor projects, no host compaction (and so no model summary) is made, and no request the provider
counted reaches the compaction threshold. Only what no projection can shrink is summarised.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from piwork.core.agent.events import CompactionStart
from piwork.core.context.budget import effective_marks
from piwork.core.tools.registry import create_default_tools
from tests.core.agent.sessions_support import file_entries, make_session
from tests.support.loopback_server import LoopbackServer, RecordedRequest, Text, ToolCall, Turn, Usage

pytestmark = pytest.mark.anyio

ROUNDS = 34
LINE = 100  # characters per line of a read file (25 chars/4 tokens)
MAX_READ_TOKENS = 12_000  # under the read tool's 50 KiB cap


@dataclass(frozen=True)
class Row:
    window: int
    factor: float | None  # provider count as a share of the request's chars/4 size; None: no usage


ROWS = [
    Row(32_768, 1.15),
    Row(65_536, 0.90),
    Row(131_072, 1.11),
    Row(200_000, 1.15),
    Row(400_000, 1.00),
    Row(200_000, None),
    Row(32_768, None),
]


def request_size(request: RecordedRequest) -> int:
    """The request's chars/4 size: system prompt, messages and tool schemas as sent."""
    body = request.body
    text = json.dumps(body.get("system"), ensure_ascii=False) + json.dumps(
        body["messages"], ensure_ascii=False
    )
    text += json.dumps(body.get("tools"), ensure_ascii=False)
    return len(text) // 4


class CountingProvider:
    """Scripted replies that read the files one by one, then answer; each reports the row's count."""

    def __init__(self, paths: list[str], factor: float | None) -> None:
        self.paths = paths
        self.factor = factor
        self.counts: list[int] = []

    def usage(self, request: RecordedRequest, output: int) -> Usage:
        if self.factor is None:
            return Usage(input=0, output=0)
        count = round(request_size(request) * self.factor)
        self.counts.append(count + output)
        return Usage(input=count, output=output)

    def turn(self, n: int) -> Any:
        def answer(request: RecordedRequest) -> Turn:
            if n < len(self.paths):
                call = ToolCall("read", {"path": self.paths[n]}, id=f"r{n}")
                return Turn([Text(f"Reading part {n}."), call], usage=self.usage(request, 12))
            return Turn([Text("Every part read.")], usage=self.usage(request, 4))

        return answer


def write_parts(folder: Path, count: int, tokens: int) -> list[str]:
    paths = []
    for i in range(count):
        path = folder / f"part_{i:02d}.txt"
        lines = max(1, tokens * 4 // LINE)
        path.write_text("".join(f"{i:02d}:{n:05d} " + "z" * (LINE - 10) + "\n" for n in range(lines)))
        paths.append(str(path))
    return paths


@pytest.fixture
def server() -> Any:
    with LoopbackServer() as srv:
        yield srv


@pytest.mark.parametrize("row", ROWS, ids=lambda r: f"{r.window // 1000}K-{r.factor or 'no-usage'}")
async def test_the_governor_projects_and_host_compaction_never_fires(
    row: Row, server: LoopbackServer, tmp_path: Path
) -> None:
    model = server.anthropic_model(context_window=row.window)
    marks = effective_marks(model)
    threshold = marks.compaction_threshold
    read_tokens = min(MAX_READ_TOKENS, threshold // 20)
    paths = write_parts(tmp_path, ROUNDS, read_tokens)
    provider = CountingProvider(paths, row.factor)
    server.script(*(provider.turn(n) for n in range(ROUNDS + 1)))
    session, store, recorder, _ = make_session(model, tmp_path, registry=create_default_tools(["read"]))

    await session.prompt("Read every part, one at a time.")

    decisions = [e.decision for e in recorder.of("governor")]
    projections = [d for d in decisions if d.decision in ("projected", "forced")]
    assert projections, [d.decision for d in decisions]
    # no host compaction: no compaction event, no entry, no summary request
    assert not [e for e in recorder.events if isinstance(e, CompactionStart)]
    assert not [e for e in file_entries(store) if e["type"] == "compaction"]
    assert len(server.requests) == ROUNDS + 1 and server.pending == 0
    assert session.messages[-1]["content"][0]["text"] == "Every part read."
    # the transcript outgrew the room (host compaction alone would have summarised it); what the provider
    # was sent never reached it
    transcript = sum(len(json.dumps(m)) for m in session.messages) // 4
    assert transcript > threshold
    sizes = [request_size(r) for r in server.requests]
    assert max(sizes) < threshold
    if provider.counts:
        assert max(provider.counts) <= threshold
    # a projection elides the oldest reads first and stops: the newest reads reach the provider whole
    last_request = server.requests[-1].body["messages"]
    whole = [
        block
        for message in last_request
        for block in (message["content"] if isinstance(message["content"], list) else [])
        if block.get("type") == "tool_result" and "piwork elided" not in json.dumps(block)
    ]
    assert len(whole) >= 3


async def test_only_what_no_projection_can_shrink_is_summarised(
    server: LoopbackServer, tmp_path: Path
) -> None:
    model = server.anthropic_model(context_window=32_768)
    threshold = effective_marks(model).compaction_threshold
    paths = write_parts(tmp_path, 12, threshold // 20)
    provider = CountingProvider(paths, 1.0)
    server.script(*(provider.turn(n) for n in range(13)))
    session, store, recorder, _ = make_session(model, tmp_path, registry=create_default_tools(["read"]))
    await session.prompt("Read the parts.")
    assert not [e for e in recorder.events if isinstance(e, CompactionStart)]

    # a pasted text over the threshold by itself: no elision can bring the request under it
    pasted = "\n".join(f"pasted line {n:05d} " + "q" * 60 for n in range(threshold * 4 // 80 + 200))

    def big_reply(request: RecordedRequest) -> Turn:
        return Turn([Text("That is a long paste.")], usage=Usage(input=request_size(request), output=6))

    server.script(big_reply, Turn([Text("## Goal\nSummarised.")], usage=Usage(input=900, output=40)))
    await session.prompt(pasted)
    starts = [e for e in recorder.events if isinstance(e, CompactionStart)]
    assert starts[0].reason == "threshold"
    compactions = [e for e in file_entries(store) if e["type"] == "compaction"]
    assert compactions[0]["summary"].startswith("## Goal\nSummarised.")
    # the governor's own compaction at settle (the paste keeps the working set at the ceiling) is
    # deterministic: no request of its own
    assert all("usage" not in c for c in compactions[1:])
    assert len(server.requests) == 13 + 2  # the reply to the paste, then one summary request
