"""The Task dialog in a real window: editing the contract, changing phase (a boundary for the governor),
and running the verifier for real (a receipt each time, never a reused pass)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialogButtonBox
from pytestqt.qtbot import QtBot

from piwork.core.context.contract import latest_contract
from piwork.gui.session_controller import SessionController
from tests.support import LoopbackServer, Text, Turn


def _type(ctl: SessionController, text: str) -> None:
    ctl.chat.composer.set_text(text)
    ctl.chat.composer.submit()


def test_the_task_dialog_edits_the_contract_changes_phase_and_runs_the_verifier(
    qtbot: QtBot, trusted_controller: SessionController, server: LoopbackServer
) -> None:
    ctl = trusted_controller
    project = Path(ctl.cwd)
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    runtime = ctl.runtime
    assert runtime is not None
    tree = runtime.session.tree
    _type(ctl, "/task add VAT to totals verify: echo verified accept: totals include VAT")
    qtbot.waitUntil(lambda: latest_contract(tree) is not None, timeout=10_000)
    server.script(Turn([Text("Looking.")]), Turn([Text("Checking.")]))
    ctl.submit("start")
    qtbot.waitUntil(lambda: len(server.requests) == 1 and not ctl.chat.busy, timeout=10_000)

    _type(ctl, "/task")
    qtbot.waitUntil(lambda: getattr(ctl.context_commands, "task_dialog", None) is not None, timeout=5_000)
    dialog = ctl.context_commands.task_dialog
    assert (dialog.goal.text(), dialog.verify.text(), dialog.phase.currentText()) == (
        "add VAT to totals",
        "echo verified",
        "implement",
    )
    assert dialog.acceptance.toPlainText() == "totals include VAT"
    dialog.goal.setText("add VAT to every total")
    dialog.acceptance.setPlainText("totals include VAT\nrounding to cents")
    dialog.phase.setCurrentText("verify")
    save = dialog.findChild(QDialogButtonBox).button(QDialogButtonBox.StandardButton.Save)
    qtbot.mouseClick(save, Qt.MouseButton.LeftButton)
    contract = latest_contract(tree)
    assert contract is not None
    assert (contract.goal, contract.acceptance, contract.phase, contract.verify) == (
        "add VAT to every total",
        ("totals include VAT", "rounding to cents"),
        "verify",
        "echo verified",
    )
    assert dialog.status.text().startswith("Saved (a new phase")
    # the phase change is a boundary: the governor looks at the next request anew
    ctl.submit("check it")
    qtbot.waitUntil(lambda: len(server.requests) == 2 and not ctl.chat.busy, timeout=10_000)
    decisions = runtime.session.governance.governor.log
    assert decisions and "boundary" in decisions[-1].triggers

    # run for real, twice: each run records its own receipt (a pass on the same tree is not reused)
    for n in (1, 2):
        qtbot.mouseClick(dialog.run_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: "passed; receipt" in dialog.status.text(), timeout=20_000)
        receipts = list((Path(runtime.resources.agent_dir) / "piwork" / "verifier-receipts").glob("*.jsonl"))
        assert len(receipts) == 1 and len(receipts[0].read_text().splitlines()) == n
        if n == 1:
            dialog.show_status("")
