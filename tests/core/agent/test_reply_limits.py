"""A hung server ends a reply in bounded time, counted across its retries: the silence limit
(``httpIdleTimeoutMs``) and the whole-reply limit (``retry.provider.timeoutMs``) are per reply, a reply
that ran into either is not retried, the message names the limit, and a slow model that keeps sending
is never cut off by the silence limit. Real loopback server, small configured limits."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from piwork.core.agent.events import AutoRetryStart, ErrorNotice
from piwork.core.llm.reply_limits import ReplyBudget
from piwork.core.workflows.runtime import create_runtime
from tests.support.loopback_server import Failure, LoopbackServer, Text, Turn
from tests.support.runtime_options import runtime_options

pytestmark = pytest.mark.anyio

RETRIES = {"enabled": True, "maxRetries": 3, "baseDelayMs": 20}


@pytest.fixture
def server() -> Any:
    with LoopbackServer() as srv:
        yield srv


def _settings(tmp_path: Path, idle_ms: int, total_ms: int) -> None:
    agent = tmp_path / "agent"
    agent.mkdir(exist_ok=True)
    settings = {"httpIdleTimeoutMs": idle_ms, "retry": {**RETRIES, "provider": {"timeoutMs": total_ms}}}
    (agent / "settings.json").write_text(json.dumps(settings))


async def _reply(tmp_path: Path, server: LoopbackServer) -> tuple[dict[str, Any], float, list[Any]]:
    runtime = await create_runtime(runtime_options(tmp_path, server))
    events: list[Any] = []
    runtime.session.subscribe(events.append)
    started = time.monotonic()
    try:
        await runtime.session.prompt("hello")
    finally:
        runtime.store.close()
    last = runtime.session.messages[-1]
    return last, time.monotonic() - started, events


async def test_headers_then_silence_ends_at_the_silence_limit_without_retries(
    tmp_path: Path, server: LoopbackServer
) -> None:
    _settings(tmp_path, idle_ms=400, total_ms=60_000)
    server.script(Turn([Text("a b c")], failure=Failure.stall(2)), Turn([Text("never asked")]))
    reply, elapsed, events = await _reply(tmp_path, server)
    assert reply["stopReason"] == "error"
    assert "(silence limit: httpIdleTimeoutMs, 0.4 s per reply)" in reply["errorMessage"]
    assert len(server.requests) == 1 and server.pending == 1
    assert not any(isinstance(e, AutoRetryStart) for e in events)
    assert elapsed < 3


async def test_a_server_that_never_answers_is_given_up_once(tmp_path: Path, server: LoopbackServer) -> None:
    _settings(tmp_path, idle_ms=300, total_ms=60_000)
    server.script(Turn(failure=Failure.hang()), Turn([Text("never asked")]))
    reply, elapsed, _ = await _reply(tmp_path, server)
    assert "silence limit" in reply["errorMessage"] and len(server.requests) == 1
    assert elapsed < 3


async def test_silence_before_each_failure_counts_across_the_retries(
    tmp_path: Path, server: LoopbackServer
) -> None:
    # Each attempt is silent 0.35 s and then loses its connection (worth a retry): the first retry
    # may be silent only for the 0.25 s the reply has left of its 0.6 s, and is not retried again.
    _settings(tmp_path, idle_ms=600, total_ms=60_000)
    server.script(
        *[Turn([Text("a b")], failure=Failure.stall(1, 0.35)) for _ in range(3)], Turn([Text("ok")])
    )
    reply, elapsed, events = await _reply(tmp_path, server)
    assert len(server.requests) == 2
    assert [e.attempt for e in events if isinstance(e, AutoRetryStart)] == [1]
    assert "silence limit" in reply["errorMessage"]
    assert elapsed < 3


async def test_a_drip_ends_at_the_whole_reply_limit_and_is_not_retried(
    tmp_path: Path, server: LoopbackServer
) -> None:
    _settings(tmp_path, idle_ms=5_000, total_ms=700)
    server.script(Turn([Text(" ".join(f"w{i}" for i in range(2000)))], drip=0.05), Turn([Text("never")]))
    reply, elapsed, _ = await _reply(tmp_path, server)
    assert "longer than 0.7 s in all (reply time limit: retry.provider.timeoutMs" in reply["errorMessage"]
    assert reply["content"], "what arrived before the limit is kept"
    assert len(server.requests) == 1 and 0.6 < elapsed < 3


async def test_retries_share_the_whole_reply_limit(tmp_path: Path, server: LoopbackServer) -> None:
    # Dropped connections are worth retrying, but not past the reply's 1.2 s in all.
    _settings(tmp_path, idle_ms=5_000, total_ms=1_200)
    drops = [Turn([Text(" ".join("w" * 40))], drip=0.05, failure=Failure.cut(12)) for _ in range(4)]
    server.script(*drops, Turn([Text("late")]))
    reply, elapsed, events = await _reply(tmp_path, server)
    assert reply["stopReason"] == "error" and elapsed < 3
    assert len(server.requests) < 4
    said = " ".join(e.message for e in events if isinstance(e, ErrorNotice))
    text = reply["errorMessage"] + said
    assert "reply time limit" in text


async def test_a_slow_model_that_keeps_sending_is_never_cut_off(
    tmp_path: Path, server: LoopbackServer
) -> None:
    _settings(tmp_path, idle_ms=500, total_ms=60_000)
    server.script(Turn([Text(" ".join(f"t{i}" for i in range(8)))], drip=0.3))  # 2.4 s, never 0.5 s silent
    reply, elapsed, _ = await _reply(tmp_path, server)
    assert reply["stopReason"] == "stop" and elapsed > 2
    assert reply["content"][0]["text"].split() == [f"t{i}" for i in range(8)]


async def test_errors_worth_retrying_are_still_retried(tmp_path: Path, server: LoopbackServer) -> None:
    _settings(tmp_path, idle_ms=500, total_ms=60_000)
    server.script(Turn(failure=Failure.http(503, '{"error": {"message": "overloaded"}}')), Turn([Text("ok")]))
    reply, _, events = await _reply(tmp_path, server)
    assert reply["stopReason"] == "stop" and len(server.requests) == 2
    assert [e.attempt for e in events if isinstance(e, AutoRetryStart)] == [1]


def test_the_budget_arithmetic() -> None:
    now = [100.0]
    budget = ReplyBudget(clock=lambda: now[0])
    assert budget.time_left(10) == 10 and budget.silence_left(4) == 4
    now[0] += 3
    budget.spend_silence(3)
    assert budget.time_left(10) == 7 and budget.silence_left(4) == 1
    assert budget.spent(4, 10) is None and budget.spent(4, 10, delay_s=7) == "reply time limit"
    budget.spend_silence(1)
    assert budget.spent(4, 10) == "silence limit" and budget.silence_left(4) == 0.001
    assert budget.time_left(None) is None and budget.silence_left(0) is None
