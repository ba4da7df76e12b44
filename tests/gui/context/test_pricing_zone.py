"""A request that would reach the pricing mark is withheld by the governor; the window opens the preflight
dialog with the pricing-zone verdict, and "Send once anyway" sends that request once (a real run against
the loopback server, with a model whose price steps up above 3,000 input tokens)."""

from __future__ import annotations

import json

from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from piwork.core.paths import agent_dir
from piwork.gui.chat.rows import RowKind
from piwork.gui.context.preflight_dialog import PreflightDialog
from piwork.gui.session_controller import SessionController
from tests.support import LoopbackServer, RecordedRequest, Text, ToolCall, Turn, Usage


def _dialogs() -> list[PreflightDialog]:
    return [w for w in QApplication.topLevelWidgets() if isinstance(w, PreflightDialog) and w.isVisible()]


def _answer(request: RecordedRequest) -> Turn:
    """Summaries for the governor's compaction; anything else is the request sent anyway."""
    if "summar" in json.dumps(request.body.get("system", "")).lower():
        return Turn([Text("## Goal\nRead big.txt.\n## Progress\nRead it.")])
    return Turn([Text("Sent anyway: big.txt lists its lines.")], usage=Usage(input=14_000, output=9))


def test_withheld_request_opens_the_dialog_and_goes_out_once(
    qtbot: QtBot, controller: SessionController, server: LoopbackServer
) -> None:
    models = json.loads((agent_dir() / "models.json").read_text())
    model = models["providers"]["loopback"]["models"][0]
    tier = {"inputTokensAbove": 3_000, "input": 6, "output": 20, "cacheRead": 0.6, "cacheWrite": 7}
    model["cost"] = {"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75, "tiers": [tier]}
    (agent_dir() / "models.json").write_text(json.dumps(models))
    first = controller.runtime
    controller.spawn(controller.open_session(None))  # a new session reads models.json again
    qtbot.waitUntil(
        lambda: controller.runtime is not first and controller.runtime is not None, timeout=10_000
    )
    assert controller.context_feed.marks is not None and controller.context_feed.marks.pricing == 3_000

    server.script(Turn([ToolCall("read", {"path": "big.txt"}, id="call_big")], usage=Usage(input=1_500)))
    server.script(*([_answer] * 6))
    controller.submit("read big.txt")
    qtbot.waitUntil(lambda: controller.chat.busy, timeout=5000)
    qtbot.waitUntil(lambda: not controller.chat.busy, timeout=20_000)
    log = controller.window.context_panel.log_model
    assert "context-limit" in [d.decision for d in log.decisions]
    qtbot.waitUntil(lambda: bool(_dialogs()), timeout=10_000)
    assert len(_dialogs()) == 1  # each new verdict replaces the open dialog
    dialog = _dialogs()[-1]
    assert dialog.verdict == "pricing-zone"
    assert dialog.send_button.isVisible()
    sent_before = len(server.requests)
    dialog.send_button.click()
    qtbot.waitUntil(lambda: len(server.requests) > sent_before, timeout=10_000)
    qtbot.waitUntil(lambda: not controller.chat.busy, timeout=20_000)
    model_rows = controller.chat.model
    texts = [
        model_rows.row_at(i).text
        for i in range(model_rows.rowCount())
        if model_rows.row_at(i).kind is RowKind.TEXT
    ]
    assert "Sent anyway: big.txt lists its lines." in texts
    for leftover in _dialogs():
        leftover.close()
