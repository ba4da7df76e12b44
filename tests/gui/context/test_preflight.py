"""The preflight dialog over a real run: a 32K model whose next request is past the compaction threshold
opens it by itself with the engine's verdict, figures and advice; it also opens on demand."""

from __future__ import annotations

import json

from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from piwork.core.paths import agent_dir
from piwork.gui.context.preflight_dialog import PreflightDialog
from piwork.gui.session_controller import SessionController
from tests.support import LoopbackServer, Text, ToolCall, Turn, Usage


def _dialogs() -> list[PreflightDialog]:
    return [w for w in QApplication.topLevelWidgets() if isinstance(w, PreflightDialog) and w.isVisible()]


def test_overflow_opens_the_preflight_dialog(
    qtbot: QtBot, controller: SessionController, server: LoopbackServer
) -> None:
    settings = agent_dir() / "settings.json"
    data = json.loads(settings.read_text())
    # keep the overflow: no host compaction, and no governor (it would compact at settle past the ceiling)
    quiet = {"compaction": {"enabled": False}, "piwork": {"contextGovernor": {"enabled": False}}}
    settings.write_text(json.dumps({**data, **quiet}))
    first = controller.runtime
    controller.spawn(controller.open_session(None))  # a new session reads the settings again
    qtbot.waitUntil(
        lambda: controller.runtime is not first and controller.runtime is not None, timeout=10_000
    )
    server.script(
        Turn([ToolCall("read", {"path": "big.txt"}, id="call_big")], usage=Usage(input=2_000)),
        Turn([ToolCall("read", {"path": "big.txt"}, id="call_big2")], usage=Usage(input=14_000)),
        Turn([Text("Read it twice.")], usage=Usage(input=26_000, output=3)),
    )
    controller.submit("read big.txt")
    qtbot.waitUntil(lambda: controller.chat.busy, timeout=5000)
    qtbot.waitUntil(lambda: not controller.chat.busy, timeout=15_000)
    qtbot.waitUntil(lambda: bool(_dialogs()), timeout=10_000)
    dialog = _dialogs()[0]
    assert dialog.verdict == "overflow"
    text = dialog.figures.text()
    assert "Marks: pressure 10.9k · ceiling 14.1k · compaction 15.6k" in text
    assert "compaction threshold" in text  # the engine's advice
    assert dialog.compact_button.isVisible() and not dialog.send_button.isVisible()
    dialog.close()

    # on demand, from the menu
    controller.window.action_map["context_preflight"].trigger()
    qtbot.waitUntil(lambda: bool(_dialogs()), timeout=10_000)
    again = _dialogs()[0]
    assert again.preflight["estimate"]["projected"] > 15_616
    # "Compact now" runs /context compact, as the dialog's advice says: a real compaction (its summary
    # streamed from the loopback server), reported by that command's notice
    summary = Turn([Text("## Goal\nRead big.txt.\n## Progress\nRead it twice.")])
    server.script(summary, summary)  # the history and, when the cut splits a turn, its prefix
    footer = controller.chat.footer
    again.compact_button.click()
    assert not _dialogs()
    feed = controller.context_feed
    qtbot.waitUntil(lambda: any(m.get("role") == "compactionSummary" for m in feed.messages), timeout=15_000)
    model = controller.chat.model
    qtbot.waitUntil(
        lambda: any(model.row_at(i).title == "/context compact" for i in range(model.rowCount())),
        timeout=5_000,
    )
    # after a compaction the last reply's usage counts a context that is gone: an estimate until the next
    assert not footer.reading.exact and footer.reading.source_label == "≈ cl100k_base"
    assert (footer.reading.occupancy or 0) < 26_003


def test_context_preflight_with_files_counts_them_in_the_dialog(
    qtbot: QtBot, controller: SessionController
) -> None:
    controller.chat.composer.set_text("/context preflight big.txt")
    controller.chat.composer.submit()
    qtbot.waitUntil(lambda: bool(_dialogs()), timeout=10_000)
    dialog = _dialogs()[0]
    assert dialog.preflight["estimate"]["plannedFiles"] > 5_000  # big.txt, counted with the model's tokenizer
    assert "Planned files and prompt:" in dialog.figures.text()
    dialog.close()


def test_enter_in_the_preflight_dialog_closes_it_without_acting(qtbot: QtBot) -> None:
    """The dialog may open by itself while the user types: the Enter meant for the message only closes
    it; compacting, starting afresh or sending past the pricing mark each take a deliberate click."""
    from PySide6.QtCore import Qt

    from piwork.gui.context.reading import MeterReading

    result = {"verdict": "pricing-zone", "estimate": {"projected": 280_000}, "marks": {"pricing": 272_000}}
    dialog = PreflightDialog(result, MeterReading(window=400_000), can_fresh=True)
    qtbot.addWidget(dialog)
    chosen: list[str] = []
    dialog.choice.connect(chosen.append)
    dialog.show()
    qtbot.waitExposed(dialog)
    focused = dialog.focusWidget()
    assert focused is not None and focused.text() == "Close"  # type: ignore[attr-defined]
    with qtbot.waitSignal(dialog.finished, timeout=5000):
        qtbot.keyClick(focused, Qt.Key.Key_Return)
    assert chosen == [] and dialog.result() == PreflightDialog.DialogCode.Rejected
