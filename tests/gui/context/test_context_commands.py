"""Typed /context and /fresh in the window: the engine's answers as chat notices, /fresh opens the new session."""

from __future__ import annotations

from pytestqt.qtbot import QtBot

from piwork.core.context.contract import TaskContract
from piwork.core.context.tasks import begin_task
from piwork.gui.chat.rows import RowKind
from piwork.gui.context.preflight_dialog import PreflightDialog
from piwork.gui.session_controller import SessionController
from tests.support import LoopbackServer, Text, Turn


def _notices(ctl: SessionController) -> list:  # type: ignore[type-arg]
    model = ctl.chat.model
    rows = [model.row_at(i) for i in range(model.rowCount())]
    return [r for r in rows if r.kind in (RowKind.NOTICE, RowKind.ERROR)]


def _type(ctl: SessionController, text: str) -> None:
    ctl.chat.composer.set_text(text)
    ctl.chat.composer.submit()


def _wait_notice(qtbot: QtBot, ctl: SessionController, title: str):  # type: ignore[no-untyped-def]
    qtbot.waitUntil(lambda: any(r.title == title for r in _notices(ctl)), timeout=10_000)
    return next(r for r in reversed(_notices(ctl)) if r.title == title)


def test_context_commands_answer_in_the_chat(qtbot: QtBot, controller: SessionController) -> None:
    _type(controller, "/context budget")
    row = _wait_notice(qtbot, controller, "/context budget")
    assert row.kind == RowKind.NOTICE
    assert "pressure: 15616" in row.text and "source: estimate" in row.text  # 32K window: W - 16,384
    _type(controller, "/context manifest")
    row = _wait_notice(qtbot, controller, "/context manifest")
    assert row.text.startswith("Context manifest\n- context: AGENTS.md")
    _type(controller, "/context index-status")
    row = _wait_notice(qtbot, controller, "/context index-status")
    assert row.kind == RowKind.ERROR and "not trusted" in row.text  # the window was opened with no-approve
    _type(controller, "/context sideways")
    row = _wait_notice(qtbot, controller, "/context")
    assert row.kind == RowKind.ERROR and "preflight" in row.hint
    _type(controller, "/context preflight big.txt")
    row = _wait_notice(qtbot, controller, "/context preflight")
    assert "verdict: ok" in row.text and "plannedFiles" in row.text
    qtbot.waitUntil(lambda: bool(controller.window.findChildren(PreflightDialog)), timeout=5_000)
    for dialog in controller.window.findChildren(PreflightDialog):
        dialog.close()


def test_fresh_needs_a_task_then_opens_a_seeded_session(
    qtbot: QtBot, controller: SessionController, server: LoopbackServer
) -> None:
    _type(controller, "/fresh task")
    row = _wait_notice(qtbot, controller, "/fresh task")
    assert row.kind == RowKind.ERROR and "Task Contract" in row.text
    runtime = controller.runtime
    assert runtime is not None
    contract = TaskContract.from_json(
        {"title": "Notes", "goal": "summarise notes.txt", "mode": "read-only", "phase": "scout"}
    )
    begin_task(runtime.session, runtime.resources, contract)
    server.script(Turn([Text("notes say alpha and beta")]))
    controller.submit("summarise it")
    qtbot.waitUntil(lambda: not controller.chat.busy and runtime.store.flushed, timeout=10_000)
    old_path = runtime.store.path
    _type(controller, "/fresh be-to-fe")
    row = _wait_notice(qtbot, controller, "/fresh be-to-fe")
    assert row.kind == RowKind.NOTICE and str(old_path) in row.text
    new = controller.runtime
    assert new is not None and new.store.path != old_path
    header = new.store.tree.header or {}
    assert header.get("parentSession") == str(old_path)
    texts = [m for m in new.session.messages if m.get("role") == "custom"]
    assert [m["customType"] for m in texts] == ["piwork.freshSummary", "piwork.contextBundle"]
    assert "summarise it" in texts[0]["content"][0]["text"]
