"""A disk that takes its time (a network home folder, a busy laptop drive) never holds up the window.

Forking and cloning read every body on the path and write and fsync a new session file; the settings and
trust dialogs read, change and replace settings.json and trust.json under their locks. Here that disk
waits at a gate until the test opens it, and records which thread waited: meanwhile the window keeps
running its event loop (a timer keeps ticking) and nothing waited on the GUI thread (the stall guard
measures CPU time, so it cannot see a thread blocked in a system call; this can).
"""

from __future__ import annotations

import json
import os

import pytest
import shiboken6
from PySide6.QtWidgets import QApplication, QDialogButtonBox, QInputDialog
from pytestqt.qtbot import QtBot

from piwork.core.paths import agent_dir
from piwork.gui.chat.rows import RowKind
from piwork.gui.session_controller import SessionController
from piwork.gui.trust_dialog import TrustDialog
from tests.gui.test_session_controller import _rows, controller, server  # noqa: F401  (fixtures)
from tests.support import LoopbackServer, Text, Turn
from tests.support.heartbeat import keeps_running
from tests.support.slow_disk import SlowFile, slow_file, slow_folder


def _answer(qtbot: QtBot, ctl: SessionController, server: LoopbackServer, prompt: str, reply: str) -> None:  # noqa: F811
    server.script(Turn([Text(reply)]))
    count = len(_rows(ctl))
    ctl.submit(prompt)
    qtbot.waitUntil(lambda: not ctl.chat.busy and len(_rows(ctl)) == count + 2, timeout=10_000)


def _waits_off_the_gui_thread(qtbot: QtBot, gate: SlowFile) -> None:
    """The disk is being waited on, the window keeps running meanwhile, and not from its GUI thread."""
    qtbot.waitUntil(gate.asked.is_set, timeout=10_000)
    keeps_running(qtbot)
    assert not gate.read_on_gui_thread()


def _opened_trust(qtbot: QtBot, ctl: SessionController) -> TrustDialog:
    opening = ctl.trust.show()
    qtbot.waitUntil(opening.done, timeout=10_000)
    return opening.result()


def _notices(ctl: SessionController) -> list[str]:
    return [r.title for r in _rows(ctl) if r.kind is RowKind.NOTICE]


def test_fork_and_clone_wait_on_the_disk_in_workers(
    qtbot: QtBot,
    monkeypatch: pytest.MonkeyPatch,
    controller: SessionController,  # noqa: F811
    server: LoopbackServer,  # noqa: F811
) -> None:
    ctl = controller
    _answer(qtbot, ctl, server, "plan the parser", "a plan")
    _answer(qtbot, ctl, server, "now write it in Rust", "written")
    first = ctl.runtime
    assert first is not None and first.store.session_dir is not None
    gate = slow_folder(monkeypatch, first.store.session_dir)  # from now on the sessions' disk waits

    tree = ctl.window.tree_panel  # Fork from here, in the tree
    user_ids = [r.id for r in first.store.tree.path() if r.role == "user"]
    assert tree.select_entry(str(user_ids[1]))
    tree.fork_current()
    _waits_off_the_gui_thread(qtbot, gate)
    assert ctl.runtime is first and not ctl.chat.composer.toPlainText()  # not switched before it is made
    gate.open()
    qtbot.waitUntil(lambda: ctl.runtime not in (None, first), timeout=10_000)
    qtbot.waitUntil(lambda: "Forked" in _notices(ctl))
    assert ctl.chat.composer.toPlainText() == "now write it in Rust"
    forked = ctl.runtime
    assert forked is not None and forked.store.path is not None and forked.store.path.is_file()

    gate.close()  # /clone, from the composer
    ctl.chat.composer.set_text("/clone")
    ctl.chat.composer.submit()
    _waits_off_the_gui_thread(qtbot, gate)
    assert ctl.runtime is forked
    gate.open()
    qtbot.waitUntil(lambda: ctl.runtime not in (None, forked), timeout=10_000)
    cloned = ctl.runtime
    assert cloned is not None and cloned.store.path not in (None, forked.store.path)
    assert [m["role"] for m in cloned.session.messages] == ["user", "assistant"]

    ctl.chat.composer.set_text("/fork")  # /fork: the choice of message, then the fork itself
    ctl.chat.composer.submit()
    qtbot.waitUntil(
        lambda: any(isinstance(w, QInputDialog) and w.isVisible() for w in QApplication.topLevelWidgets())
    )
    [picker] = [w for w in QApplication.topLevelWidgets() if isinstance(w, QInputDialog) and w.isVisible()]
    assert picker.comboBoxItems() == ["1. plan the parser"]
    gate.close()
    picker.accept()
    _waits_off_the_gui_thread(qtbot, gate)
    assert ctl.runtime is cloned
    gate.open()
    qtbot.waitUntil(lambda: ctl.runtime not in (None, cloned), timeout=10_000)
    assert ctl.chat.composer.toPlainText() == "plan the parser"
    assert not gate.read_on_gui_thread()


def test_saving_settings_waits_on_the_disk_in_a_worker(
    qtbot: QtBot,
    monkeypatch: pytest.MonkeyPatch,
    controller: SessionController,  # noqa: F811
) -> None:
    settings_file = agent_dir() / "settings.json"
    dialog = controller.dialogs.show_settings()
    dialog.compaction_enabled.setChecked(not dialog.compaction_enabled.isChecked())
    wanted = dialog.compaction_enabled.isChecked()
    gate = slow_file(monkeypatch, settings_file)  # the locked read-modify-write reads it first
    dialog.buttons.button(QDialogButtonBox.StandardButton.Save).click()
    _waits_off_the_gui_thread(qtbot, gate)
    assert dialog.isVisible() and dialog.error.text() == "Saving settings.json…"
    assert not dialog.buttons.isEnabled()  # no second save meanwhile
    gate.open()
    qtbot.waitUntil(lambda: not shiboken6.isValid(dialog) or not dialog.isVisible())  # closed
    assert json.loads(settings_file.read_text())["compaction"]["enabled"] is wanted
    assert not gate.read_on_gui_thread()


def test_saving_or_forgetting_a_trust_decision_waits_on_the_disk_in_a_worker(
    qtbot: QtBot,
    monkeypatch: pytest.MonkeyPatch,
    controller: SessionController,  # noqa: F811
) -> None:
    ctl = controller
    trust_file = agent_dir() / "trust.json"
    project = os.path.realpath(ctl.cwd)
    dialog = _opened_trust(qtbot, ctl)
    gate = slow_file(monkeypatch, trust_file)
    dialog.option_buttons["trust"].click()  # answered once the dialog's own reading is done
    _waits_off_the_gui_thread(qtbot, gate)
    assert dialog.isVisible() and dialog.saving and not dialog.option_buttons["trust"].isEnabled()
    assert dialog.reload_note.text() == "Saving the decision in trust.json…"
    first = ctl.runtime
    gate.open()
    qtbot.waitUntil(lambda: not dialog.isVisible())
    assert json.loads(trust_file.read_text()) == {project: True}
    assert dialog.chosen is not None and dialog.chosen.kind == "trust"
    qtbot.waitUntil(lambda: ctl.runtime not in (None, first), timeout=10_000)  # reloaded with it

    gate.close()
    opening = ctl.trust.show()  # the form reads trust.json in a worker
    _waits_off_the_gui_thread(qtbot, gate)
    gate.open()
    qtbot.waitUntil(opening.done)
    again = opening.result()
    gate.close()
    assert again.forget_button is not None
    again.forget_button.click()
    _waits_off_the_gui_thread(qtbot, gate)
    assert again.isVisible() and again.saving
    gate.open()
    qtbot.waitUntil(lambda: not again.isVisible())
    assert json.loads(trust_file.read_text()) == {} and again.forgot
