"""The built-in compaction port: planning off the event loop, and the newest compaction's time."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from piwork.core.agent.checkpoints import CompactionRequest
from piwork.core.agent.compaction_port import TreeCompactionPort
from piwork.core.compaction.hooks import CompactFailedEvent, CompactionHooks
from piwork.core.compaction.settings import CompactionSettings
from piwork.core.compaction.summarize import Summarizer
from piwork.core.errors import PiworkError
from piwork.core.llm.streaming import complete
from piwork.core.session.store import create_session
from piwork.core.session.tree import SessionTree
from tests.core.compaction.builders import assistant, user
from tests.support.loopback_server import Failure, LoopbackServer, Text, Turn

from .sessions_support import make_session

pytestmark = pytest.mark.anyio

SETTINGS = CompactionSettings(reserve_tokens=1000, keep_recent_tokens=100)
SMALL = {"compaction": {"reserveTokens": 1000, "keepRecentTokens": 100}, "retry": {"enabled": False}}
LONG = "word " * 80


def fill(tree: SessionTree, turns: int, first: int = 0) -> None:
    for i in range(first, first + turns):
        tree.append_message(user(f"question {i} {LONG}", ts=2 * i))
        tree.append_message(assistant(f"answer {i} {LONG}", ts=2 * i + 1, usage=100))


async def test_planning_leaves_the_event_loop_free(tmp_path: Path) -> None:
    store = create_session(str(tmp_path), tmp_path / "sessions")
    fill(store.tree, 200)
    port = TreeCompactionPort(store.tree, lambda: None, lambda: SETTINGS)
    ran_meanwhile: list[bool] = []

    async def other_work() -> None:
        ran_meanwhile.append(True)

    task = asyncio.ensure_future(other_work())
    assert await port.can_compact()
    assert ran_meanwhile  # the plan was made in a worker thread while the loop ran other tasks
    await task
    store.close()


async def test_nothing_to_compact_on_a_tiny_session(tmp_path: Path) -> None:
    store = create_session(str(tmp_path), tmp_path / "sessions")
    store.tree.append_message(user("hi"))
    port = TreeCompactionPort(store.tree, lambda: None, lambda: SETTINGS)
    assert not await port.can_compact()
    assert port.latest_compaction_ms() is None
    store.close()


async def test_compaction_after_planning_covers_entries_appended_since(tmp_path: Path) -> None:
    store = create_session(str(tmp_path), tmp_path / "sessions")
    tree = store.tree
    fill(tree, 6)
    with LoopbackServer() as server:
        summarizer = Summarizer(model=server.anthropic_model(), complete=complete, api_key="k")
        port = TreeCompactionPort(tree, lambda: summarizer, lambda: SETTINGS)
        assert await port.can_compact()
        fill(tree, 4, first=6)  # the plan made above is stale now
        server.script(Turn([Text("## Goal\nSummary.")]), Turn([Text("Turn prefix.")]))
        outcome = await port.compact(CompactionRequest("threshold", False, None))
        prompt = str(server.requests[0].body["messages"])
    assert "question 8" in prompt  # planned again: later turns are summarized too
    assert outcome.result["summary"].startswith("## Goal")
    compaction = tree.body(tree.path()[-1])
    assert port.latest_compaction_ms() is not None and compaction["type"] == "compaction"
    store.close()


async def test_compact_failed_hooks_hear_every_failure_and_cancellation(tmp_path: Path) -> None:
    hooks = CompactionHooks()
    failed: list[CompactFailedEvent] = []
    hooks.on_compact_failed(failed.append)
    with LoopbackServer() as server:
        session, _, _, _ = make_session(server.anthropic_model(), tmp_path, settings=SMALL, hooks=hooks)
        with pytest.raises(PiworkError, match="Nothing to compact"):
            await session.compact()
        for i in range(3):
            server.script(Turn([Text(f"answer {i} {LONG}")]))
            await session.prompt(f"question {i} {LONG}")
        server.script(
            Turn(failure=Failure.http(401, '{"type":"error","error":{"type":"authentication_error"}}'))
        )
        with pytest.raises(PiworkError, match="Compaction failed: Summarization failed: 401"):
            await session.compact()
        unregister = hooks.on_before_compact(lambda event: {"cancel": True})
        assert await session.compact() is None
        unregister()
    assert [(e.reason, e.aborted) for e in failed] == [("manual", False)] * 2 + [("manual", True)]
    assert failed[0].error_message == "Compaction failed: Nothing to compact (session too small)"
    assert failed[1].error_message is not None and "401" in failed[1].error_message
    assert failed[2].error_message is None
