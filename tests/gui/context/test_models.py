"""The Context panel's models pass Qt's model checks (qtmodeltester) with real engine values: an X-ray of
a hand-built transcript, a manifest with every status, a governor log with elided children."""

from __future__ import annotations

from pytestqt.modeltest import ModelTester

from piwork.core.context.estimate import TokenEstimator
from piwork.core.context.manifest import LAYER_STATUSES, Manifest, entry_for
from piwork.core.context.records import ElidedItem, GovernorDecision
from piwork.core.context.xray import xray
from piwork.core.llm.types import ToolSpec
from piwork.core.resources.system_prompt import PromptPart
from piwork.gui.context.governor_log_model import GovernorLogModel, export_json
from piwork.gui.context.manifest_model import ManifestModel
from piwork.gui.context.request_figures import message_part_indices
from piwork.gui.context.xray_model import JumpTarget, TargetRole, XrayModel

PROJECT_CONTEXT = (
    "\n\n# Project Context\n\nProject-specific instructions and guidelines:\n\n"
    '<project_instructions path="/repo/AGENTS.md">\nRun the tests.\n</project_instructions>\n'
)


def transcript() -> list[dict]:
    call = {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "src/app.py"}}
    return [
        {"role": "user", "content": [{"type": "text", "text": "look at app.py"}], "timestamp": 1},
        {"role": "assistant", "content": [call], "stopReason": "toolUse", "timestamp": 2},
        {
            "role": "toolResult",
            "toolCallId": "c1",
            "toolName": "read",
            "content": [{"type": "text", "text": "def main():\n    pass\n" * 200}],
            "isError": False,
            "timestamp": 3,
        },
        {"role": "bashExecution", "command": "ls", "output": "x", "excludeFromContext": True, "timestamp": 4},
        {"role": "assistant", "content": [{"type": "text", "text": "It is empty."}], "timestamp": 5},
    ]


def test_xray_model(qtmodeltester: ModelTester) -> None:
    messages = transcript()
    parts = [
        PromptPart("base", "You are a coding agent.\n" * 20),
        PromptPart("project_context", PROJECT_CONTEXT),
    ]
    tools = [ToolSpec("read", "Read a file", {"type": "object", "properties": {"path": {"type": "string"}}})]
    request = xray(parts, tools, messages, TokenEstimator())
    model = XrayModel()
    model.set_xray(request, message_part_indices(messages))
    qtmodeltester.check(model)
    shown = [model.row_at(i).part for i in range(model.rowCount())]  # type: ignore[union-attr]
    assert [p.tokens for p in shown] == sorted((p.tokens for p in shown), reverse=True)
    assert shown[0].ref == "c1"  # the read result is the largest source
    assert model.index(0, 0).data(TargetRole) == JumpTarget("message", 2, "c1")
    # message targets skip the shell command kept out of the context
    last = model.position_of(lambda r: r.part.kind == "assistant" and "empty" in r.part.label)
    assert model.index(last, 0).data(TargetRole) == JumpTarget("message", 4, None)
    file_row = model.position_of(lambda r: r.part.kind == "context_file")
    assert model.index(file_row, 0).data(TargetRole) == JumpTarget("resource", path="/repo/AGENTS.md")


def test_manifest_model(qtmodeltester: ModelTester) -> None:
    entries = [
        entry_for("contextFile", "/repo/AGENTS.md", "included", tokens=812),
        entry_for(
            "profile", "/repo/.pi/piwork-profile.json", "blocked-untrusted", reason="project not trusted"
        ),
        entry_for("index", "/repo/.pi/context-index.json", "stale", reason="37% entries changed"),
        entry_for("snapshot", "/repo/.pi/project-context.md", "over-cap", tokens=12_800),
        entry_for("memory", "/repo/.pi/memory/memory_summary.md", "omitted", reason="memory disabled"),
        entry_for("required", "/repo/docs/architecture.md", "missing"),
        entry_for("taskFile", "/repo/src/app.py", "planned", tokens=2400),
    ]
    assert {e.status for e in entries} == set(LAYER_STATUSES)
    manifest = Manifest("task-1", "2026-01-01T00:00:00Z", "o200k_base").with_entries(entries)
    model = ManifestModel()
    model.set_manifest(manifest, "/repo")
    qtmodeltester.check(model)
    rows = [model.row_at(i) for i in range(model.rowCount())]
    assert [r.layer.number for r in rows] == list(range(1, 11))  # every layer, in order
    assert model.index(0, 2).data() == "AGENTS.md" and model.index(0, 3).data() == "812"
    assert (
        model.index(1, 1).data() == "blocked-untrusted" and model.index(1, 4).data() == "project not trusted"
    )
    assert model.index(9, 1).data() == "not recorded"  # external docs: nothing for this task


def test_governor_log_model(qtmodeltester: ModelTester) -> None:
    elided = (
        ElidedItem("c1", "read", "src/app.py", 3200, "superseded"),
        ElidedItem("c2", "bash", "pytest -q", 5100, "resolved-log"),
    )
    decisions = [
        GovernorDecision(1_000, 3, "projected", "", ("toolRounds",), 60_000, 51_700, 8_300, 9_000, elided),
        GovernorDecision(2_000, 4, "fail-closed", "transcript orphan", (), 61_000, 61_000),
    ]
    model = GovernorLogModel()
    model.set_decisions(decisions[:1])
    qtmodeltester.check(model)
    model.add_decision(decisions[1])
    assert model.rowCount() == 2 and model.rowCount(model.index(0, 0)) == 2
    assert model.rowCount(model.index(1, 0)) == 0
    assert (
        model.index(0, 2).data() == "projected"
        and model.index(1, 2).data() == "fail-closed: transcript orphan"
    )
    child = model.index(1, 0, model.index(0, 0))
    assert model.elided_at(child) == elided[1]
    assert "pytest -q" in child.data() and "resolved-log" in child.data()
    assert '"decision": "fail-closed"' in export_json(model.decisions)
