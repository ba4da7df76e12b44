"""The preflight dialog's way out by /fresh task, over a real run: a task whose next request would reach
the pricing mark is withheld, the dialog opens with the pricing-zone verdict, and '/fresh task' continues
the task in a new session seeded with its contract, a manifest, the bundle and a summary of the old
branch, keeping what the task excluded. The old session file is not touched."""

from __future__ import annotations

import json
from typing import Any

from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from piwork.core.context.contract import CONTEXT_TOOLS
from piwork.core.paths import agent_dir
from piwork.gui.chat.rows import RowKind
from piwork.gui.commands import SlashCommand
from piwork.gui.context.preflight_dialog import PreflightDialog
from piwork.gui.session_controller import SessionController
from tests.support import LoopbackServer, RecordedRequest, Text, ToolCall, Turn, Usage
from tests.support.loopback_server import counting


def _dialogs() -> list[PreflightDialog]:
    return [w for w in QApplication.topLevelWidgets() if isinstance(w, PreflightDialog) and w.isVisible()]


def _notice(ctl: SessionController, title: str) -> Any:
    model = ctl.chat.model
    rows = [model.row_at(i) for i in range(model.rowCount())]
    found = [r for r in rows if r.kind in (RowKind.NOTICE, RowKind.ERROR) and r.title == title]
    return found[-1] if found else None


def _text(message: dict[str, Any]) -> str:
    content = message["content"]
    return str(content[0]["text"] if isinstance(content, list) else content)


def _priced_session(qtbot: QtBot, ctl: SessionController) -> None:
    """Reopen a new session on a model whose price steps up above 3,000 input tokens."""
    models = json.loads((agent_dir() / "models.json").read_text())
    model = models["providers"]["loopback"]["models"][0]
    tier = {"inputTokensAbove": 3_000, "input": 6, "output": 20, "cacheRead": 0.6, "cacheWrite": 7}
    model["cost"] = {"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75, "tiers": [tier]}
    (agent_dir() / "models.json").write_text(json.dumps(models))
    first = ctl.runtime
    ctl.spawn(ctl.open_session(None))
    qtbot.waitUntil(lambda: ctl.runtime is not first and ctl.runtime is not None, timeout=10_000)
    assert ctl.context_feed.marks is not None and ctl.context_feed.marks.pricing == 3_000


def test_fresh_task_from_the_preflight_dialog_continues_the_task_in_a_seeded_session(
    qtbot: QtBot, trusted_controller: SessionController, server: LoopbackServer
) -> None:
    ctl = trusted_controller
    _priced_session(qtbot, ctl)

    # no task yet: the dialog cannot offer /fresh task
    ctl.window.action_map["context_preflight"].trigger()
    qtbot.waitUntil(lambda: bool(_dialogs()), timeout=10_000)
    dialog = _dialogs()[0]
    assert (
        not dialog.fresh_button.isEnabled() and dialog.fresh_button.toolTip() == "Needs a session with a task"
    )
    dialog.close()

    panel = ctl.window.context_panel
    ctl.run_command(SlashCommand("task", "read-only summarise big.txt"))
    qtbot.waitUntil(lambda: panel.manifest_model.manifest is not None, timeout=10_000)
    old_task = panel.manifest_model.manifest.task_id  # type: ignore[union-attr]
    ctl.run_command(SlashCommand("context", "exclude snapshot"))
    qtbot.waitUntil(lambda: _notice(ctl, "/context exclude") is not None, timeout=10_000)

    # the reply counts the request it answers, as a real provider does
    server.script(counting(Turn([ToolCall("read", {"path": "big.txt"}, id="call_big")])))
    ctl.submit("summarise big.txt")
    qtbot.waitUntil(lambda: ctl.chat.busy, timeout=5_000)
    qtbot.waitUntil(lambda: not ctl.chat.busy, timeout=20_000)
    assert "context-limit" in [d.decision for d in panel.log_model.decisions]  # withheld, not sent
    assert len(server.requests) == 1
    qtbot.waitUntil(lambda: bool(_dialogs()), timeout=10_000)
    dialog = _dialogs()[-1]
    assert dialog.verdict == "pricing-zone" and dialog.fresh_button.isEnabled()

    old = ctl.runtime
    assert old is not None and old.store.path is not None
    old_path = old.store.path
    qtbot.waitUntil(lambda: old_path.exists() and not old.store.writes_pending, timeout=5_000)  # written out
    old_bytes = old_path.read_bytes()
    old_id = (old.store.tree.header or {})["id"]

    dialog.fresh_button.click()
    assert not _dialogs()
    qtbot.waitUntil(lambda: ctl.runtime is not old and ctl.runtime is not None, timeout=10_000)
    new = ctl.runtime
    assert new is not None and new.store.path is not None and new.store.path != old_path
    assert old_path.read_bytes() == old_bytes  # the old session is left as it was
    notice = _notice(ctl, "/fresh task")
    assert notice is not None and notice.kind is RowKind.NOTICE and str(old_path) in notice.text

    tree = new.store.tree
    header = tree.header or {}
    assert header.get("parentSession") == str(old_path)
    assert tree.name == "/fresh task: summarise big.txt"
    messages = new.session.messages
    assert [m.get("customType") for m in messages] == ["piwork.freshSummary", "piwork.contextBundle"]
    summary = _text(messages[0])
    assert summary.startswith(f"Handed over from session {old_id} with /fresh task.")
    assert "summarise big.txt" in summary and "big.txt" in summary.split("<read-files>")[-1]
    contracts = [e["data"] for e in tree.entries() if e.get("customType") == "piwork.taskContract"]
    assert len(contracts) == 1
    contract = contracts[0]
    assert (contract["title"], contract["goal"], contract["mode"], contract["phase"]) == (
        "summarise big.txt",
        "summarise big.txt",
        "read-only",
        "scout",
    )
    assert (contract["freshFrom"], contract["freshKind"]) == (old_id, "task")
    assert new.session.tool_names() == ["read", "grep", "find", "ls", *CONTEXT_TOOLS]  # the contract's tools

    # the manifest is the new task's, and what the task excluded stays excluded
    qtbot.waitUntil(
        lambda: (
            panel.manifest_model.manifest is not None and panel.manifest_model.manifest.task_id != old_task
        ),
        timeout=10_000,
    )
    manifest = panel.manifest_model.manifest
    assert manifest is not None and manifest.task_id == f"task-{old_id[:8]}-task"
    snapshot = next(e for e in manifest.entries if e.kind == "snapshot")
    assert (snapshot.status, snapshot.reason) == ("omitted", "excluded for this task")
    assert manifest.totals.system_prompt > 0 and manifest.totals.tools > 0

    # the first request of the new session is small enough to go out: summary, bundle, prompt
    server.script(Turn([Text("big.txt has 1500 numbered lines.")], usage=Usage(input=900, output=9)))
    ctl.submit("go on")
    qtbot.waitUntil(lambda: len(server.requests) == 2, timeout=10_000)
    qtbot.waitUntil(lambda: not ctl.chat.busy, timeout=10_000)
    request: RecordedRequest = server.requests[1]
    sent = request.body["messages"]
    assert [_text(m)[:20] for m in sent[:1]] == [summary[:20]] and len(sent) == 3
    assert '<context_layer kind="snapshot" path=".pi/project-context.md" excluded="true">' in _text(sent[1])
    assert "module 59" not in _text(sent[1]) and _text(sent[2]) == "go on"
    assert not _dialogs()
