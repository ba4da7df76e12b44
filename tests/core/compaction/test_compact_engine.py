"""compact_session / run_compaction end to end: real session files, summaries over real HTTP."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from piwork.core.compaction import prompts
from piwork.core.compaction.compact import CompactionError, compact_session, run_compaction
from piwork.core.compaction.hooks import CompactionHooks
from piwork.core.compaction.settings import CompactionSettings
from piwork.core.compaction.summarize import SummaryFailed, SummaryRetry
from piwork.core.compaction.tokens import estimate_messages_tokens
from piwork.core.session.store import open_session
from tests.support.loopback_server import Failure, LoopbackServer, Text, ToolCall, Turn, Usage

from .engine_helpers import conversation_session, request_text, summarizer
from .pi_reference import reference_context

pytestmark = pytest.mark.anyio

KEEP_SMALL = CompactionSettings(keep_recent_tokens=600)  # exactly the last turn: a clean cut
SUMMARY = "## Goal\nShip the parser.\n\n## Next Steps\n1. Test it."


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


async def test_summary_over_http_is_appended_to_the_session_file(
    tmp_path: Path, loopback: LoopbackServer
) -> None:
    session = conversation_session(tmp_path)
    assert session.path is not None
    loopback.script(Turn([Text(SUMMARY)], usage=Usage(input=900, output=40)))

    result = await compact_session(session.tree, summarizer(loopback), KEEP_SMALL)

    request = loopback.requests[0]
    assert request.body["system"][0]["text"] == prompts.SYSTEM_PROMPT
    assert "tools" not in request.body and request.body["max_tokens"] == 32000  # the model's own limit
    text = request_text(request)
    assert text.startswith("<conversation>\n[User]: question 0 ")
    assert '[Assistant tool calls]: read(path="src/file0.py")' in text
    assert text.endswith(prompts.COMPACTION_INSTRUCTIONS) and "<previous-summary>" not in text

    entry = _lines(session.path)[-1]
    assert entry["type"] == "compaction" and entry["id"] == result.entry_id
    assert entry["summary"] == result.summary
    assert result.summary.startswith(SUMMARY)
    assert result.summary.endswith("\n</read-files>") and "src/file0.py" in result.summary
    assert entry["firstKeptEntryId"] == result.first_kept_entry_id
    assert entry["details"] == result.details and entry["details"]["modifiedFiles"] == []
    assert entry["usage"]["input"] == 900 and entry["usage"]["output"] == 40
    assert entry["fromHook"] is False
    assert entry["tokensBefore"] == result.tokens_before > result.estimated_tokens_after

    reopened = open_session(session.path, writable=False)
    context = reopened.tree.build_context()
    assert context.messages[0]["role"] == "compactionSummary"
    assert context.messages[0]["summary"] == result.summary
    assert result.estimated_tokens_after == estimate_messages_tokens(context.messages)


async def test_reference_reads_the_compacted_session_the_same_way(
    tmp_path: Path, loopback: LoopbackServer
) -> None:
    session = conversation_session(tmp_path)
    assert session.path is not None
    loopback.script(Turn([Text(SUMMARY)]))
    await compact_session(session.tree, summarizer(loopback), KEEP_SMALL)
    pi = reference_context(session.path)
    assert pi["context"] == open_session(session.path, writable=False).tree.build_context().to_json()


@pytest.mark.parametrize(
    ("turn", "message"),
    [
        (Turn([Text("cut off mid")], stop="length"), "Summarization failed: generation hit the token cap"),
        (Turn([Text("x"), ToolCall("read", {"path": "a"})]), "Summarization attempted to call a tool"),
        (
            Turn(failure=Failure.http(400, '{"type":"error","error":{"type":"invalid_request_error"}}')),
            "Summarization failed: 400",
        ),
    ],
)
async def test_unusable_summary_leaves_the_file_byte_identical(
    tmp_path: Path, loopback: LoopbackServer, turn: Turn, message: str
) -> None:
    session = conversation_session(tmp_path)
    assert session.path is not None
    before = session.path.read_bytes()
    leaf = session.tree.leaf_id
    loopback.script(turn)
    with pytest.raises(SummaryFailed) as caught:
        await compact_session(session.tree, summarizer(loopback), KEEP_SMALL)
    assert str(caught.value).startswith(message)
    assert session.path.read_bytes() == before and session.tree.leaf_id == leaf


async def test_transient_failures_are_retried_with_compaction_source(
    tmp_path: Path, loopback: LoopbackServer
) -> None:
    session = conversation_session(tmp_path)
    retries: list[SummaryRetry] = []
    loopback.script(
        Turn(
            failure=Failure.http(
                529, '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}'
            )
        ),
        Turn([Text(SUMMARY)]),
    )
    result = await compact_session(session.tree, summarizer(loopback, retries), KEEP_SMALL)
    assert result.summary.startswith(SUMMARY)
    assert [(r.source, r.attempt, r.max_attempts, r.delay_ms) for r in retries] == [("compaction", 1, 2, 10)]


async def test_update_prompt_carries_previous_summary_and_focus(
    tmp_path: Path, loopback: LoopbackServer
) -> None:
    session = conversation_session(tmp_path)
    loopback.script(Turn([Text("first checkpoint")]), Turn([Text("second checkpoint")]))
    await compact_session(session.tree, summarizer(loopback), KEEP_SMALL)
    conversation_session_tail(session)
    keep_two_turns = CompactionSettings(keep_recent_tokens=800)
    await compact_session(
        session.tree, summarizer(loopback), keep_two_turns, custom_instructions="the parser bug"
    )
    text = request_text(loopback.requests[1])
    assert "<previous-summary>\nfirst checkpoint" in text
    assert text.endswith(prompts.UPDATE_INSTRUCTIONS + "\n\nAdditional focus: the parser bug")


def conversation_session_tail(session: Any) -> None:
    from .builders import assistant, user

    for i in range(3):
        session.tree.append_message(user("more " + "m" * 800, ts=1000 + i))
        session.tree.append_message(assistant("reply " + "n" * 800, ts=1000 + i))


async def test_split_turn_sends_two_requests_and_sums_usage(tmp_path: Path, loopback: LoopbackServer) -> None:
    session = conversation_session(tmp_path, turns=2)
    from .builders import assistant

    for i in range(4):  # one long turn: many assistant messages after the last user message
        session.tree.append_message(assistant("step " + "s" * 1600, ts=500 + i))
    loopback.script(
        Turn([Text("HISTORY")], usage=Usage(input=10, output=1)),
        Turn([Text("PREFIX")], usage=Usage(input=20, output=2)),
    )
    result = await compact_session(session.tree, summarizer(loopback), KEEP_SMALL)
    assert len(loopback.requests) == 2
    assert loopback.requests[1].body["max_tokens"] == 32000  # the model's own output limit
    assert request_text(loopback.requests[1]).endswith(prompts.TURN_PREFIX_INSTRUCTIONS)
    assert result.summary.startswith("HISTORY" + prompts.SPLIT_TURN_SEPARATOR + "PREFIX")
    assert result.usage is not None and result.usage["input"] == 30 and result.usage["output"] == 3


async def test_nothing_new_before_a_split_turn_keeps_the_previous_summary(
    tmp_path: Path, loopback: LoopbackServer
) -> None:
    from .builders import Chain, assistant, user

    chain = Chain()
    chain.msg(user("u" * 400))
    chain.add("compaction", summary="EARLIER", firstKeptEntryId="e3", tokensBefore=1)
    chain.msg(user("v" * 400))
    for i in range(3):
        chain.msg(assistant("w" * 800, ts=10 + i))
    from piwork.core.compaction.compact import generate_compaction
    from piwork.core.compaction.prepare import prepare_compaction

    strict = prepare_compaction(chain.entries, KEEP_SMALL, strict_pi=True)
    assert strict is not None and strict.messages_to_summarize == [] and strict.is_split_turn
    loopback.script(Turn([Text("PREFIX")]))
    result = await generate_compaction(strict, summarizer(loopback))
    assert result.summary.startswith("EARLIER" + prompts.SPLIT_TURN_SEPARATOR + "PREFIX")
    assert len(loopback.requests) == 1  # only the turn prefix is summarized


async def test_hooks_cancel_supply_and_failing_handlers(tmp_path: Path, loopback: LoopbackServer) -> None:
    session = conversation_session(tmp_path)
    assert session.path is not None
    errors: list[str] = []
    hooks = CompactionHooks(on_error=lambda name, error: errors.append(f"{name}: {error}"))
    seen: list[Any] = []

    def broken(event: Any) -> None:
        raise RuntimeError("boom")

    async def cancel(event: Any) -> dict[str, Any]:
        seen.append(event)
        return {"cancel": True}

    hooks.on_before_compact(broken)
    remove_cancel = hooks.on_before_compact(cancel)
    before = session.path.read_bytes()
    with pytest.raises(CompactionError) as caught:
        await compact_session(session.tree, summarizer(loopback), KEEP_SMALL, hooks=hooks)
    assert caught.value.aborted and str(caught.value) == "Compaction cancelled"
    assert session.path.read_bytes() == before and loopback.requests == []
    assert errors == ["before_compact: boom"]
    assert seen[0].reason == "manual" and seen[0].preparation.first_kept_entry_id

    remove_cancel()
    after: list[Any] = []
    hooks.on_before_compact(
        lambda event: {
            "compaction": {
                "summary": "from hook",
                "firstKeptEntryId": event.preparation.first_kept_entry_id,
                "tokensBefore": 7,
                "details": {"custom": True},
            }
        }
    )
    hooks.on_after_compact(after.append)
    result = await compact_session(session.tree, summarizer(loopback), KEEP_SMALL, hooks=hooks)
    entry = json.loads(session.path.read_text().splitlines()[-1])
    assert loopback.requests == []
    assert (
        entry["summary"] == "from hook" and entry["fromHook"] is True and entry["details"] == {"custom": True}
    )
    assert result.from_hook and after[0].compaction_entry["id"] == result.entry_id and after[0].from_extension


async def test_run_compaction_outcomes(tmp_path: Path, loopback: LoopbackServer) -> None:
    session = conversation_session(tmp_path)
    failures: list[Any] = []
    hooks = CompactionHooks()
    hooks.on_compact_failed(failures.append)
    started: list[str] = []
    loopback.script(Turn([Text(SUMMARY)]))
    done = await run_compaction(
        session.tree,
        summarizer(loopback),
        KEEP_SMALL,
        reason="threshold",
        hooks=hooks,
        on_start=lambda: started.append("threshold"),
    )
    assert done.succeeded and done.result is not None and started == ["threshold"]

    # Nothing left to compact: automatic runs do not even start; a manual one reports why.
    idle = await run_compaction(
        session.tree,
        summarizer(loopback),
        KEEP_SMALL,
        reason="threshold",
        on_start=lambda: started.append("again"),
    )
    assert not idle.started and started == ["threshold"]
    manual = await run_compaction(
        session.tree, summarizer(loopback), KEEP_SMALL, reason="manual", hooks=hooks
    )
    assert manual.error_message == "Compaction failed: Already compacted"
    assert failures[0].error_message == manual.error_message and not failures[0].aborted


async def test_cancel_event_stops_a_hanging_request_and_writes_nothing(
    tmp_path: Path, loopback: LoopbackServer
) -> None:
    session = conversation_session(tmp_path)
    assert session.path is not None
    before = session.path.read_bytes()
    loopback.script(Turn(failure=Failure.hang()))
    cancel = asyncio.Event()

    async def press_cancel() -> None:
        while not loopback.requests:
            await asyncio.sleep(0.01)
        cancel.set()

    presser = asyncio.create_task(press_cancel())
    outcome = await run_compaction(
        session.tree, summarizer(loopback), KEEP_SMALL, reason="overflow", will_retry=True, cancel=cancel
    )
    await presser
    assert outcome.started and outcome.aborted and outcome.error_message is None and outcome.result is None
    assert session.path.read_bytes() == before


async def test_moving_the_leaf_during_the_summary_writes_nothing(
    tmp_path: Path, loopback: LoopbackServer
) -> None:
    session = conversation_session(tmp_path)
    assert session.path is not None
    loopback.script(Turn([Text("slow summary " * 20)], drip=0.02))
    first_entry = session.tree.path()[0].id

    async def navigate_meanwhile() -> None:
        while not loopback.requests:
            await asyncio.sleep(0.01)
        session.tree.branch(first_entry)

    mover = asyncio.create_task(navigate_meanwhile())
    before = session.path.read_bytes()
    with pytest.raises(CompactionError, match="moved to another point"):
        await compact_session(session.tree, summarizer(loopback), KEEP_SMALL)
    await mover
    assert session.path.read_bytes() == before
