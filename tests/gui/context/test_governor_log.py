"""The governor log tab lists decisions made by the real governor on hand-built transcripts: a projection
(with each elided read under it, and "show original") and a fail-closed decision on an orphan; the JSON
export carries metadata only; the meter's ghost shows what the projection kept out."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from PySide6.QtWidgets import QMessageBox
from pytestqt.qtbot import QtBot

from piwork.core.context.governor import Governor, RequestShape
from piwork.core.llm.tokens import Tokenizers
from piwork.core.llm.types import Model
from piwork.gui.context.context_panel import ContextPanel
from piwork.gui.context.feed import ContextFeed

SECRET_LINE = "UNIQUE-FILE-CONTENT-7f3a"
MODEL = Model(id="m", name="m", api="anthropic-messages", provider="p", base_url="", context_window=200_000)


def _read_round(i: int) -> list[dict]:
    call_id = f"call_{i}"
    text = f"{SECRET_LINE} revision {i}\n" + ("x = compute(value)  # a line of the file\n" * 150)
    return [
        {
            "role": "assistant",
            "content": [
                {"type": "toolCall", "id": call_id, "name": "read", "arguments": {"path": "src/app.py"}}
            ],
            "stopReason": "toolUse",
            "timestamp": 1000 + 10 * i,
        },
        {
            "role": "toolResult",
            "toolCallId": call_id,
            "toolName": "read",
            "content": [{"type": "text", "text": text}],
            "isError": False,
            "timestamp": 1001 + 10 * i,
        },
    ]


def tool_heavy_transcript(rounds: int = 14) -> list[dict]:
    messages: list[dict] = [
        {"role": "user", "content": [{"type": "text", "text": "fix app.py"}], "timestamp": 999}
    ]
    for i in range(rounds):
        messages += _read_round(i)
    return messages


def test_log_lists_a_projection_and_a_fail_closed_decision(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, tmp_path: Path
) -> None:
    governor = Governor()
    shape = RequestShape(MODEL, "You are a coding agent.")
    projected = governor.decide(tool_heavy_transcript(), shape)
    assert projected.decision is not None and projected.decision.decision == "projected"
    assert "toolRounds" in projected.decision.triggers
    orphan = tool_heavy_transcript(3)
    del orphan[1]  # the first call's assistant message: its result is left an orphan
    failed = Governor().decide(orphan, shape)
    assert failed.decision is not None and failed.decision.decision == "fail-closed"

    panel = ContextPanel()
    qtbot.addWidget(panel)
    panel.show()
    for outcome in (projected, failed):
        assert outcome.decision is not None
        panel.add_decision(outcome.decision)
    model = panel.log_model
    assert model.rowCount() == 2
    first = model.index(0, 0)
    decision = projected.decision
    assert model.index(0, 2).data() == "projected"
    assert model.index(0, 3).data() == ", ".join(decision.triggers)
    assert model.index(0, 4).data() == f"{decision.occupancy_before:,}"
    assert model.index(0, 5).data() == f"{decision.occupancy_after:,}"
    assert model.index(0, 6).data() == f"{decision.savings:,}" and decision.savings >= decision.required
    assert model.index(0, 8).data() == str(len(decision.elided)) and len(decision.elided) >= 2
    assert model.rowCount(first) == len(decision.elided)
    assert model.index(1, 2).data().startswith("fail-closed: transcript orphan")
    assert model.rowCount(model.index(1, 0)) == 0
    assert "2 decisions, 1 projected" in panel.log_summary.text()

    # expanding the projection lists each elided read; "show original" asks for that tool result
    panel.log_view.expand(first)
    child = model.index(0, 0, first)
    assert child.data().startswith("read src/app.py") and "superseded" in child.data()
    panel.log_view.setCurrentIndex(child)
    assert panel.show_original_button.isEnabled()
    with qtbot.waitSignal(panel.showOriginalRequested) as shown:
        panel.show_original_button.click()
    assert shown.args == [decision.elided[0].tool_call_id]

    export = panel.export_log(str(tmp_path / "log.json"))  # written in a worker thread
    assert export is not None
    qtbot.waitUntil(export.done)
    exported = export.result()
    assert exported is not None
    text = exported.read_text()
    data = json.loads(text)
    assert [d["decision"] for d in data["decisions"]] == ["projected", "fail-closed"]
    assert SECRET_LINE not in text  # metadata only: no tool output


def test_the_meter_ghost_is_what_the_projection_kept_out(qtbot: QtBot) -> None:
    outcome = Governor().decide(tool_heavy_transcript(), RequestShape(MODEL, "You are a coding agent."))
    assert outcome.decision is not None
    feed = ContextFeed(Tokenizers(None))
    added: list[object] = []
    feed.decisionAdded.connect(added.append)
    feed.add_decision(outcome.decision)
    assert added == [outcome.decision]
    assert feed.elided_tokens == outcome.elided_tokens > 0


def test_today_counts_each_call_once(tmp_path: Path) -> None:
    """Billed today sums telemetry files of every session, a session's call counted once even when both
    its per-call record and its billed series row exist; older days are left out."""
    import time

    from piwork.gui.context.billed_today import TodayBilled

    now_ms = int(time.time() * 1000)
    usage = {"input": 1000, "output": 50, "cacheRead": 0, "cacheWrite": 0, "cost": {"total": 0.01}}
    (tmp_path / "s1.jsonl").write_text(json.dumps({"timestamp_ms": now_ms, "usage": usage}) + "\n")
    (tmp_path / "proj").mkdir()
    billed = {"series": "billedTraffic", "timeMs": now_ms, "input": 1000, "output": 50, "cost": 0.01}
    occupancy = {"series": "contextOccupancy", "timeMs": now_ms, "tokens": 999_999}
    (tmp_path / "proj" / "s1.jsonl").write_text(json.dumps(billed) + "\n" + json.dumps(occupancy) + "\n")
    old = {"timestamp_ms": now_ms - 3 * 86_400_000, "usage": usage}
    (tmp_path / "s2.jsonl").write_text(
        json.dumps(old) + "\n" + json.dumps({"timestamp_ms": now_ms, "usage": usage}) + "\nnot json\n"
    )
    tokens, cost = TodayBilled().read(tmp_path)
    assert tokens == 2 * 1050  # s1 once (its series row), s2's call of today; occupancy never counted
    assert cost == 0.02


def test_xray_shows_the_working_set_with_the_elided_stubs(qtbot: QtBot) -> None:
    from piwork.core.context.estimate import TokenEstimator
    from piwork.core.context.xray import xray
    from piwork.gui.context.request_figures import message_part_indices, working_set

    transcript = tool_heavy_transcript()
    outcome = Governor().decide(transcript, RequestShape(MODEL, "You are a coding agent."))
    assert outcome.decision is not None and outcome.decision.decision == "projected"
    later = {"role": "user", "content": [{"type": "text", "text": "and now?"}], "timestamp": 5000}
    messages = [*transcript, later]  # the next request: the last call's working set, then what came since
    working, elided = working_set(messages, outcome.messages)
    ids = {item.tool_call_id for item in outcome.decision.elided}
    assert {messages[i]["toolCallId"] for i in elided} == ids
    assert working[-1] is later and all(
        working[i] is messages[i] for i in range(len(messages)) if i not in elided
    )
    request = xray("You are a coding agent.", [], working, TokenEstimator())
    assert request.total == outcome.sent_tokens + TokenEstimator().message(later)
    panel = ContextPanel()
    qtbot.addWidget(panel)
    panel.set_xray(request, message_part_indices(messages), elided)
    model = panel.xray_model
    stubs = [model.row_at(i) for i in range(model.rowCount()) if model.row_at(i).elided]  # type: ignore[union-attr]
    assert {row.part.ref for row in stubs} == ids
    position = model.position_of(lambda row: row.elided)
    assert model.index(position, 1).data() == "tool result (elided)"
    assert f"{len(ids)} elided by the governor" in panel.xray_summary.text()
    # a transcript that no longer lines up with the last call (here: another branch) is taken as it is
    assert working_set(messages[:3] + messages[5:], outcome.messages)[1] == frozenset()


def test_a_reopened_session_shows_its_earlier_log_and_series(tmp_path: Path) -> None:
    """The telemetry file keeps an elided result's argument only as a hash; reading the log back takes the
    argument from the session's own tool call, and damaged lines are skipped."""
    from piwork.core.context.records import BilledSample, OccupancySample
    from piwork.core.context.telemetry import governor_record
    from piwork.gui.context.history import read_history

    transcript = tool_heavy_transcript()
    outcome = Governor().decide(transcript, RequestShape(MODEL, "You are a coding agent."))
    assert outcome.decision is not None
    record = governor_record(outcome.decision)
    assert "src/app.py" not in json.dumps(record)  # metadata only on disk
    occupancy = OccupancySample(
        5, outcome.sent_tokens, "estimate", "chars/4", 200_000, outcome.transcript_tokens
    )
    provider = OccupancySample(6, 12_345, "provider", "provider", 200_000)
    billed = BilledSample(7, "p", "m", 1000, 20, 300, 0, 0.004)
    lines = [record, occupancy.to_json(), provider.to_json(), billed.to_json()]
    path = tmp_path / "session.jsonl"
    path.write_text(
        "\n".join(json.dumps(line) for line in lines)
        + '\n{"series": "governor", "decision": "??"}\nnot json\n'
    )
    history = read_history(path, transcript)
    assert history.decisions == [outcome.decision]  # the arguments are back, from the transcript
    assert history.occupancy == [occupancy]  # the estimate per call (the working set sent)
    assert history.billed == [BilledSample(7, "p", "m", 1000, 20, 300, 0, 0.004)]
    assert read_history(tmp_path / "missing.jsonl", transcript).decisions == []


def test_a_log_export_the_disk_refuses_is_reported(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, tmp_path: Path
) -> None:
    panel = ContextPanel()
    qtbot.addWidget(panel)
    export = panel.export_log(str(tmp_path / "no-such-folder" / "log.json"))
    assert export is not None
    qtbot.waitUntil(export.done)
    assert export.result() is None
    box = panel.findChild(QMessageBox)
    assert box is not None and "could not be written" in box.text()
    box.close()


def test_a_branchs_usage_entries_join_the_billed_series_in_time_order(tmp_path: Path) -> None:
    """Pi 1.6's ``usage`` entries (billed calls outside a reply) are points of the billed series, even for a
    session piwork never ran (no telemetry file)."""
    from piwork.core.context.records import BilledSample
    from piwork.gui.context.history import read_history

    warm = {"type": "usage", "id": "u1", "parentId": "a1", "timestamp": "1970-01-01T00:00:00.008Z",
            "kind": "cacheWarming", "provider": "anthropic", "model": "claude-sonnet-4-5",
            "usage": {"input": 10, "output": 1, "cacheRead": 4000, "cacheWrite": 0, "cost": {"total": 0.01}}}  # fmt: skip
    path = tmp_path / "session.jsonl"
    path.write_text(json.dumps(BilledSample(9, "p", "m", 1000, 20, 300, 0, 0.004).to_json()) + "\n")
    history = read_history(path, [], [warm])
    assert history.billed == [
        BilledSample(8, "anthropic", "claude-sonnet-4-5", 10, 1, 4000, 0, 0.01),
        BilledSample(9, "p", "m", 1000, 20, 300, 0, 0.004),
    ]
    alone = read_history(None, [], [warm])
    assert alone.billed == [BilledSample(8, "anthropic", "claude-sonnet-4-5", 10, 1, 4000, 0, 0.01)]
