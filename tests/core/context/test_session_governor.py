"""The governor inside a real AgentSession: real read tool over real files, a scripted provider."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from piwork.core.agent.events import AgentEnd, AgentSettled, CompactionEnd, CompactionStart, GovernorEvent
from piwork.core.llm.types import CostTier, Model, ModelCost
from piwork.core.session.store import open_session
from piwork.core.tools.registry import create_default_tools
from tests.core.agent.scripted import Reply, ScriptedProvider, calls, text
from tests.core.agent.sessions_support import file_entries, make_session

pytestmark = pytest.mark.anyio

MODEL = Model(
    "scripted-1", "Scripted", "anthropic-messages", "scripted", "http://127.0.0.1:9", context_window=200_000
)


def write_files(folder: Path, count: int, kb: int = 40) -> list[str]:
    names = []
    for i in range(count):
        path = folder / f"f{i}.txt"
        line = f"file {i} " + "y" * 90
        path.write_text("\n".join(f"{n:04d} {line}" for n in range(kb * 1024 // 100)) + "\n")
        names.append(str(path))
    return names


def read_rounds(paths: list[str]) -> list[Reply]:
    return [calls((f"c{i}", "read", {"path": p})) for i, p in enumerate(paths)]


def request_tool_texts(provider: ScriptedProvider, n: int) -> list[str]:
    out = []
    for message in provider.requests[n].messages:
        if message.get("role") == "toolResult":
            out.append(message["content"][0]["text"])
    return out


def priced_model(pricing_mark: int) -> Model:
    """MODEL with a 400K window and a price tier (the pricing mark) above ``pricing_mark`` input tokens."""
    return replace(MODEL, context_window=400_000, cost=ModelCost(tiers=(CostTier(pricing_mark, 1, 1, 1, 1),)))


def session_for(
    tmp_path: Path,
    provider: ScriptedProvider,
    model: Model = MODEL,
    other_settings: dict[str, Any] | None = None,
    **governor_settings: Any,
) -> Any:
    settings = dict(other_settings or {})
    if governor_settings:
        settings["piwork"] = {"contextGovernor": governor_settings}
    provider.count_requests = True  # each reply counts the request it answers, as a real provider does
    return make_session(
        model,
        tmp_path,
        settings=settings,
        stream_fn=provider.stream,
        registry=create_default_tools(["read"]),
    )


async def test_projection_shrinks_requests_but_not_the_session_file(tmp_path: Path) -> None:
    paths = write_files(tmp_path, 10)
    provider = ScriptedProvider([*read_rounds(paths), text("All read.")])
    session, store, recorder, _ = session_for(tmp_path, provider, pressureMark=50_000)
    await session.prompt("Read every file.")
    decisions = [e.decision for e in recorder.of("governor")]
    projected = [d for d in decisions if d.decision == "projected"]
    assert len(projected) >= 1
    first = projected[0]
    assert first.triggers == ("pressure",)
    assert [i.reason for i in first.elided] == ["aged"] * len(first.elided)
    assert first.savings >= first.required
    # the request after the projection carries stubs; the one before had the originals
    turn = first.turn - 1
    before, after = request_tool_texts(provider, turn - 1), request_tool_texts(provider, turn)
    assert not any(t.startswith("[piwork elided") for t in before)
    assert sum(t.startswith("[piwork elided") for t in after) == len(first.elided)
    # the session file keeps every original, and the state entry names the elided calls
    entries = file_entries(store)
    results = [
        e["message"] for e in entries if e["type"] == "message" and e["message"]["role"] == "toolResult"
    ]
    assert len(results) == 10 and not any("piwork elided" in json.dumps(r) for r in results)
    states = [e for e in entries if e["type"] == "custom" and e["customType"] == "piwork.governorState"]
    assert len(states) == 1
    elided = [i.tool_call_id for d in projected for i in d.elided]
    assert states[0]["data"] == {"version": 1, "toolCallIds": elided}
    # every provider call was an agent turn: nothing summarised, no extra model call
    assert len(provider.requests) == 11


async def test_below_threshold_is_a_no_op_without_any_model_call(tmp_path: Path) -> None:
    paths = write_files(tmp_path, 2, kb=20)
    provider = ScriptedProvider([*read_rounds(paths), text("ok")])
    session, store, recorder, _ = session_for(tmp_path, provider, pressureMark=1_000)
    await session.prompt("Read both.")
    decisions = [e.decision for e in recorder.of("governor")]
    assert {d.decision for d in decisions} == {"no-op"}
    assert len(provider.requests) == 3
    assert not any(e["type"] == "custom" for e in file_entries(store))


async def test_reopened_session_continues_with_the_same_elisions(tmp_path: Path) -> None:
    paths = write_files(tmp_path, 10)
    provider = ScriptedProvider([*read_rounds(paths), text("All read.")])
    session, store, _, _ = session_for(tmp_path, provider, pressureMark=50_000)
    await session.prompt("Read every file.")
    last_sent = request_tool_texts(provider, len(provider.requests) - 1)
    assert store.path is not None
    store.close()
    reopened = open_session(store.path)
    provider2 = ScriptedProvider([text("Still here.")])
    session2, _, recorder2, _ = make_session(
        MODEL, store=reopened, stream_fn=provider2.stream, registry=create_default_tools(["read"])
    )
    await session2.prompt("Anything else?")
    assert request_tool_texts(provider2, 0) == last_sent
    assert recorder2.of("governor") == []


async def test_context_limit_stops_compacts_at_settle_and_continues_once(tmp_path: Path) -> None:
    priced = priced_model(60_000)
    paths = write_files(tmp_path, 8)
    provider = ScriptedProvider([*read_rounds(paths[:6]), text("Done after compaction.")])
    session, store, recorder, _ = session_for(tmp_path, provider, priced)
    await session.prompt("Read the files.")
    kinds = [
        e.type if not isinstance(e, GovernorEvent) else f"governor:{e.decision.decision}"
        for e in recorder.events
        if isinstance(e, AgentEnd | AgentSettled | CompactionStart | CompactionEnd | GovernorEvent)
    ]
    assert "governor:context-limit" in kinds
    limit = kinds.index("governor:context-limit")
    assert kinds[limit + 1 : limit + 4] == ["agent_end", "compaction_start", "compaction_end"]
    assert kinds[-2:] == ["agent_end", "agent_settled"]
    start = next(e for e in recorder.events if isinstance(e, CompactionStart))
    end = next(e for e in recorder.events if isinstance(e, CompactionEnd))
    assert start.reason == "governor" and end.result is not None and "usage" not in end.result
    compactions = [e for e in file_entries(store) if e["type"] == "compaction"]
    assert len(compactions) == 1 and "usage" not in compactions[0]
    assert "## User requests\n- Read the files." in compactions[0]["summary"]
    assert "<read-files>" in compactions[0]["summary"]
    # the provider never saw the withheld request; the continuation answered
    last = session.messages[-1]
    assert last["role"] == "assistant" and last["content"][0]["text"] == "Done after compaction."


async def test_still_over_after_the_one_continuation_asks_the_user(tmp_path: Path) -> None:
    priced = priced_model(30_000)
    provider = ScriptedProvider([text("first"), text("never")])
    session, store, recorder, _ = session_for(tmp_path, provider, priced)
    await session.prompt("short question")
    await session.prompt("z" * 160_000)  # 40K tokens in one message: nothing can shrink it
    decisions = [e.decision for e in recorder.of("governor")]
    assert [d.decision for d in decisions] == ["context-limit", "context-limit", "context-limit"]
    assert decisions[-1].detail.startswith("the working set is still at the pricing mark")
    # a discussion without a contract or tool evidence: the model summarises it (one request), and the
    # withheld requests never reached the provider
    assert len(provider.requests) == 2
    assert provider.requests[1].system_prompt != provider.requests[0].system_prompt
    compactions = [e for e in file_entries(store) if e["type"] == "compaction"]
    assert len(compactions) == 1 and compactions[0]["summary"] == "never"


async def test_host_checkpoints_still_fire_and_the_governor_writes_only_after_the_run(tmp_path: Path) -> None:
    small = Model(
        "scripted-1",
        "Scripted",
        "anthropic-messages",
        "scripted",
        "http://127.0.0.1:9",
        context_window=40_000,
    )
    paths = write_files(tmp_path, 2)
    provider = ScriptedProvider(
        [
            calls(("c0", "read", {"path": paths[0]})),
            Reply(
                calls(("c1", "read", {"path": paths[1]})).blocks,
                "toolUse",
                usage={"input": 30_000, "output": 20},
            ),
            text("host summary"),  # the host's threshold compaction between the tool batch and the next reply
            text("done"),
        ]
    )
    session, store, recorder, _ = session_for(tmp_path, provider, small)
    await session.prompt("Read both.")
    order = [
        f"{e.type}:{e.reason}" if isinstance(e, CompactionStart) else e.type
        for e in recorder.events
        if isinstance(e, AgentEnd | AgentSettled | CompactionStart)
    ]
    assert order[0] == "compaction_start:threshold"  # during the run, before it ended
    assert "compaction_start:governor" not in order[: order.index("agent_end")]
    entries = file_entries(store)
    host = next(e for e in entries if e["type"] == "compaction")
    assert "host summary" in host["summary"]
    assert session.messages[-1]["content"][0]["text"] == "done"


async def test_a_new_task_contract_is_a_boundary_and_earlier_results_leave(tmp_path: Path) -> None:
    paths = write_files(tmp_path, 8)
    provider = ScriptedProvider([*read_rounds(paths), text("Read."), text("Planned.")])
    session, store, recorder, _ = session_for(tmp_path, provider)
    await session.prompt("Scout the files.")
    assert recorder.of("governor") == []
    store.tree.append_custom_entry(
        "piwork.taskContract",
        {
            "title": "t",
            "goal": "g",
            "acceptance": [],
            "verify": "pytest -q",
            "mode": "read-only",
            "phase": "plan",
        },
    )
    await session.prompt("Now plan.")
    (event,) = recorder.of("governor")
    decision = event.decision
    assert decision.triggers == ("boundary",)
    assert decision.decision == "projected"
    # the oldest first, only until the request is under the target (half of 128,531): recent reads stay
    assert [(i.tool_call_id, i.reason) for i in decision.elided] == [
        ("c0", "earlier-phase"),
        ("c1", "earlier-phase"),
    ]
    assert decision.occupancy_after < 64_265 <= decision.occupancy_after + decision.elided[-1].tokens


async def test_a_reused_verifier_pass_is_a_governor_log_row(tmp_path: Path) -> None:
    from piwork.core.context.verifier import Receipt

    provider = ScriptedProvider([])
    session, _, recorder, _ = session_for(tmp_path, provider)
    receipt = Receipt(
        "vr-1a2b", "pytest -q", str(tmp_path), "ab" * 32, 0, "2026-01-01T00:00:00Z", 900, "00", "s"
    )
    session.governance.verifier_reused(receipt)
    (event,) = recorder.of("governor")
    assert event.decision.decision == "verifier-reused"
    assert (
        event.decision.detail == "pytest -q: passed on this exact tree (receipt vr-1a2b, tree abababababab)"
    )
    assert session.governance.telemetry.governor == [event.decision]


async def test_governor_compacts_at_settle_when_the_working_set_is_at_the_ceiling(tmp_path: Path) -> None:
    paths = write_files(tmp_path, 8)
    provider = ScriptedProvider([*read_rounds(paths), text("Read them.")])
    session, store, recorder, _ = session_for(tmp_path, provider, promptCeiling=30_000)
    await session.prompt("Read all.")
    order = [
        f"{e.type}:{e.reason}" if isinstance(e, CompactionStart) else e.type
        for e in recorder.events
        if isinstance(e, AgentEnd | AgentSettled | CompactionStart)
    ]
    assert order == ["agent_end", "compaction_start:governor", "agent_settled"]
    decisions = {e.decision.decision for e in recorder.of("governor")}
    assert "forced" in decisions or "over-ceiling" in decisions
    (compaction,) = [e for e in file_entries(store) if e["type"] == "compaction"]
    assert compaction["summary"].startswith("## User requests\n- Read all.")
    assert "usage" not in compaction
    assert len(provider.requests) == 9  # no summariser request


async def test_with_compaction_switched_off_the_governor_does_not_compact_by_itself(tmp_path: Path) -> None:
    paths = write_files(tmp_path, 8)
    provider = ScriptedProvider([*read_rounds(paths), text("Read them.")])
    off = {"compaction": {"enabled": False}}
    session, store, recorder, _ = session_for(tmp_path, provider, other_settings=off, promptCeiling=30_000)
    await session.prompt("Read all.")
    assert not [e for e in recorder.events if isinstance(e, CompactionStart)]
    assert not [e for e in file_entries(store) if e["type"] == "compaction"]
    # asked for, it still compacts
    assert await session.governance.compact()
    assert [e for e in file_entries(store) if e["type"] == "compaction"]


async def test_a_withheld_request_with_compaction_switched_off_asks_the_user(tmp_path: Path) -> None:
    priced = priced_model(60_000)
    paths = write_files(tmp_path, 8)
    provider = ScriptedProvider([*read_rounds(paths[:6]), text("never")])
    session, store, recorder, _ = session_for(tmp_path, provider, priced, {"compaction": {"enabled": False}})
    await session.prompt("Read the files.")
    decisions = [e.decision for e in recorder.of("governor") if e.decision.decision == "context-limit"]
    assert len(decisions) == 2 and decisions[-1].detail.startswith(
        "the working set is still at the pricing mark"
    )
    assert not [e for e in file_entries(store) if e["type"] == "compaction"]


async def test_a_small_window_at_its_ceiling_with_nothing_to_cut_says_nothing_after_the_run(
    tmp_path: Path,
) -> None:
    small = replace(MODEL, context_window=32_000)  # ceiling 14,054, threshold 15,616
    provider = ScriptedProvider([text("read it"), text("again")])
    session, store, recorder, _ = session_for(tmp_path, provider, small)
    await session.prompt("p" * 62_600)  # 15.65K tokens: over the ceiling, one message: nothing to cut
    await session.prompt("and?")
    assert not [e for e in recorder.events if isinstance(e, CompactionStart | CompactionEnd)]
    assert not [e for e in file_entries(store) if e["type"] == "compaction"]
