"""Tree navigation with and without a branch summary, on real session files, summaries over HTTP."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from piwork.core.compaction import prompts
from piwork.core.compaction.hooks import CompactionHooks
from piwork.core.compaction.navigate import (
    NOTHING_TO_SUMMARIZE_NOTICE,
    BranchSummaryProgress,
    NavigationError,
    navigate_tree,
)
from piwork.core.compaction.settings import BranchSummarySettings
from piwork.core.compaction.summarize import SummaryFailed
from piwork.core.session.store import Session, create_session, open_session
from piwork.core.session.tree import EntryNotFound
from tests.support.loopback_server import Failure, LoopbackServer, Text, Turn, Usage

from .builders import assistant, call, result, user
from .engine_helpers import request_text, summarizer
from .pi_reference import reference_context

pytestmark = pytest.mark.anyio


def _branching_session(tmp_path: Path) -> tuple[Session, dict[str, str]]:
    """root user → assistant → (branch A: user, edit call, result, assistant) — the leaf is A's end."""
    session = create_session(str(tmp_path), tmp_path / "sessions")
    tree = session.tree
    ids = {
        "root": tree.append_message(user("Plan the parser", ts=1)),
        "answer": tree.append_message(assistant("Here is a plan", ts=2)),
        "a_user": tree.append_message(user("Try approach A", ts=3)),
        "a_call": tree.append_message(assistant("", call("edit", path="src/parser.py"), ts=4)),
        "a_result": tree.append_message(result("edited", name="edit", ts=5)),
        "a_end": tree.append_message(assistant("Approach A fails on nested input", ts=6)),
    }
    return session, ids


def _last_line(path: Path | None) -> dict[str, Any]:
    assert path is not None
    return json.loads(path.read_text(encoding="utf-8").splitlines()[-1])


async def test_summary_is_attached_at_the_target_and_matches_the_reference(
    tmp_path: Path, loopback: LoopbackServer
) -> None:
    session, ids = _branching_session(tmp_path)
    loopback.script(Turn([Text("## Goal\nApproach A")], usage=Usage(input=50, output=9)))
    progress: list[BranchSummaryProgress] = []
    outcome = await navigate_tree(
        session.tree,
        ids["answer"],
        summarize=True,
        summarizer=summarizer(loopback),
        on_progress=progress.append,
        strict_pi=False,
    )
    request = loopback.requests[0]
    assert request.body["max_tokens"] == 32000  # no cap of its own: the model's output limit
    assert request.body.get("thinking", {"type": "disabled"}) == {"type": "disabled"}  # level off
    text = request_text(request)
    assert "[User]: Try approach A" in text and "[Tool result]" not in text
    assert text.endswith(prompts.BRANCH_INSTRUCTIONS)

    entry = _last_line(session.path)
    assert outcome.summary_entry == entry and not outcome.cancelled
    assert entry["type"] == "branch_summary" and entry["parentId"] == ids["answer"]
    assert entry["fromId"] == ids["a_end"] and entry["fromHook"] is False
    assert entry["summary"] == (
        prompts.BRANCH_SUMMARY_PREAMBLE
        + "## Goal\nApproach A\n\n<modified-files>\nsrc/parser.py\n</modified-files>"
    )
    assert entry["details"] == {"readFiles": [], "modifiedFiles": ["src/parser.py"]}
    assert entry["usage"]["output"] == 9
    assert outcome.new_leaf_id == entry["id"] and outcome.old_leaf_id == ids["a_end"]
    assert [p.stage for p in progress] == ["collected", "summarizing", "written"]

    assert session.path is not None
    piwork_context = open_session(session.path, writable=False).tree.build_context().to_json()
    pi = reference_context(session.path)
    assert pi["leafId"] == entry["id"]
    assert pi["context"] == piwork_context


async def test_user_message_target_goes_to_the_editor_with_custom_focus(
    tmp_path: Path, loopback: LoopbackServer
) -> None:
    session, ids = _branching_session(tmp_path)
    loopback.script(Turn([Text("S")]), Turn([Text("T")]))
    outcome = await navigate_tree(
        session.tree,
        ids["a_user"],
        summarize=True,
        summarizer=summarizer(loopback),
        custom_instructions="why A failed",
        label="tried A",
        strict_pi=False,
    )
    # the target user message itself is not summarized, only what followed it
    text = request_text(loopback.requests[0])
    assert "Try approach A" not in text and text.endswith("\n\nAdditional focus: why A failed")
    assert outcome.editor_text == "Try approach A"
    summary_entry = outcome.summary_entry
    assert summary_entry is not None and summary_entry["parentId"] == ids["answer"]
    label = _last_line(session.path)
    assert (
        label["type"] == "label" and label["targetId"] == summary_entry["id"] and label["label"] == "tried A"
    )

    # replacing the instructions entirely; navigating to the root user message resets the leaf
    outcome = await navigate_tree(
        session.tree,
        ids["root"],
        summarize=True,
        summarizer=summarizer(loopback),
        custom_instructions="Only list the files.",
        replace_instructions=True,
        strict_pi=False,
    )
    assert request_text(loopback.requests[1]).endswith("</conversation>\n\nOnly list the files.")
    entry = _last_line(session.path)
    assert entry["type"] == "branch_summary" and entry["parentId"] is None
    assert outcome.editor_text == "Plan the parser"


async def test_without_summary_the_leaf_moves_and_a_label_goes_on_the_target(tmp_path: Path) -> None:
    session, ids = _branching_session(tmp_path)
    assert session.path is not None
    outcome = await navigate_tree(session.tree, ids["a_call"], label="before edit", strict_pi=False)
    assert outcome.summary_entry is None and outcome.editor_text is None
    label = _last_line(session.path)
    assert label["type"] == "label" and label["targetId"] == ids["a_call"]
    assert label["parentId"] == ids["a_call"]  # the leaf moved first, then the label was appended

    before = session.path.read_bytes()
    outcome = await navigate_tree(
        session.tree, ids["root"], strict_pi=False
    )  # no label: nothing written, leaf reset
    assert session.tree.leaf_id is None and session.path.read_bytes() == before
    assert (
        await navigate_tree(session.tree, ids["root"], strict_pi=False)
    ).new_leaf_id is None  # from a reset leaf

    with pytest.raises(EntryNotFound):
        await navigate_tree(session.tree, "nope", strict_pi=False)
    with pytest.raises(NavigationError):
        await navigate_tree(session.tree, ids["answer"], summarize=True, strict_pi=False)


async def test_from_a_reset_leaf_the_summary_records_root(tmp_path: Path, loopback: LoopbackServer) -> None:
    session, ids = _branching_session(tmp_path)
    session.tree.reset_leaf()
    outcome = await navigate_tree(
        session.tree, ids["answer"], summarize=True, summarizer=summarizer(loopback), strict_pi=False
    )
    assert outcome.summary_entry is None and loopback.requests == []  # nothing was abandoned
    assert session.tree.leaf_id == ids["answer"]


async def test_nothing_to_summarize_writes_no_entry(tmp_path: Path, loopback: LoopbackServer) -> None:
    session, ids = _branching_session(tmp_path)
    session.tree.branch(ids["a_call"])
    extra = session.tree.append_message(result("only a tool result", name="edit", ts=9))
    assert session.path is not None
    before = session.path.read_bytes()
    outcome = await navigate_tree(
        session.tree, ids["a_call"], summarize=True, summarizer=summarizer(loopback), strict_pi=False
    )
    assert outcome.notice == NOTHING_TO_SUMMARIZE_NOTICE and outcome.summary_entry is None
    assert loopback.requests == [] and session.path.read_bytes() == before
    assert session.tree.leaf_id == ids["a_call"] != extra

    # The reference writes its placeholder text as a summary the model then reads.
    session.tree.branch(extra)
    outcome = await navigate_tree(
        session.tree, ids["a_call"], summarize=True, summarizer=summarizer(loopback), strict_pi=True
    )
    assert (
        outcome.summary_entry is not None
        and outcome.summary_entry["summary"] == prompts.NO_CONTENT_TO_SUMMARIZE
    )


async def test_length_stopped_branch_summary_writes_nothing(tmp_path: Path, loopback: LoopbackServer) -> None:
    session, ids = _branching_session(tmp_path)
    assert session.path is not None
    before = session.path.read_bytes()
    loopback.script(Turn([Text("cut")], stop="length"))
    with pytest.raises(SummaryFailed, match=r"^Branch summarization failed: generation hit the token cap"):
        await navigate_tree(
            session.tree, ids["answer"], summarize=True, summarizer=summarizer(loopback), strict_pi=False
        )
    assert session.path.read_bytes() == before and session.tree.leaf_id == ids["a_end"]


async def test_hooks_cancel_or_supply_the_summary(tmp_path: Path, loopback: LoopbackServer) -> None:
    session, ids = _branching_session(tmp_path)
    hooks = CompactionHooks()
    events: list[Any] = []
    remove = hooks.on_before_tree(lambda event: events.append(event) or {"cancel": True})
    outcome = await navigate_tree(
        session.tree,
        ids["answer"],
        summarize=True,
        summarizer=summarizer(loopback),
        hooks=hooks,
        strict_pi=False,
    )
    assert outcome.cancelled and session.tree.leaf_id == ids["a_end"]
    prep = events[0].preparation
    assert prep.common_ancestor_id == ids["answer"] and len(prep.entries_to_summarize) == 4
    remove()

    after: list[Any] = []
    hooks.on_before_tree(
        lambda event: {"summary": {"summary": "hook summary", "details": {"x": 1}}, "label": "L"}
    )
    hooks.on_after_tree(after.append)
    outcome = await navigate_tree(
        session.tree,
        ids["answer"],
        summarize=True,
        summarizer=summarizer(loopback),
        hooks=hooks,
        strict_pi=False,
    )
    assert loopback.requests == []
    entry = outcome.summary_entry
    assert entry is not None and entry["summary"] == "hook summary" and entry["fromHook"] is True
    assert outcome.from_extension and session.tree.label(entry["id"]) == "L"
    assert after[0].summary_entry == entry


async def test_cancelling_a_running_branch_summary(tmp_path: Path, loopback: LoopbackServer) -> None:
    session, ids = _branching_session(tmp_path)
    assert session.path is not None
    before = session.path.read_bytes()
    loopback.script(Turn(failure=Failure.hang()))
    cancel = asyncio.Event()

    async def press_cancel() -> None:
        while not loopback.requests:
            await asyncio.sleep(0.01)
        cancel.set()

    presser = asyncio.create_task(press_cancel())
    outcome = await navigate_tree(
        session.tree,
        ids["answer"],
        summarize=True,
        summarizer=summarizer(loopback),
        cancel=cancel,
        settings=BranchSummarySettings(reserve_tokens=1000),
        strict_pi=False,
    )
    await presser
    assert outcome.cancelled and outcome.aborted
    assert session.path.read_bytes() == before and session.tree.leaf_id == ids["a_end"]


async def test_session_changing_during_the_summary_writes_nothing(
    tmp_path: Path, loopback: LoopbackServer
) -> None:
    session, ids = _branching_session(tmp_path)
    assert session.path is not None
    loopback.script(Turn([Text("slow " * 30)], drip=0.02))

    async def append_meanwhile() -> None:
        while not loopback.requests:
            await asyncio.sleep(0.01)
        session.tree.append_message(user("typed elsewhere", ts=50))

    writer = asyncio.create_task(append_meanwhile())
    with pytest.raises(NavigationError, match="changed while"):
        await navigate_tree(
            session.tree, ids["answer"], summarize=True, summarizer=summarizer(loopback), strict_pi=False
        )
    await writer
    assert _last_line(session.path)["type"] == "message"  # only the concurrent append landed


async def test_branch_summaries_forward_the_thinking_level(tmp_path: Path, loopback: LoopbackServer) -> None:
    from dataclasses import replace

    session, ids = _branching_session(tmp_path)
    loopback.script(Turn([Text("## Goal\nApproach A")]))
    await navigate_tree(
        session.tree,
        ids["answer"],
        summarize=True,
        summarizer=replace(summarizer(loopback), thinking_level="high"),
        strict_pi=False,
    )
    assert loopback.requests[0].body["thinking"]["type"] == "enabled"
