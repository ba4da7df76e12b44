"""The branch dialog in the real window: "don't ask again" is saved to the settings and can be turned back off in
Settings, and what it counts is what would really be summarised, also after the session was reopened."""

from __future__ import annotations

import json

from pytestqt.qtbot import QtBot

from piwork.core.paths import agent_dir
from piwork.core.settings_schema import BRANCH_SUMMARY_SKIP_PROMPT
from piwork.gui.session_controller import SessionController
from tests.gui.test_session_controller import _rows, controller, server  # noqa: F401  (fixtures)
from tests.support import LoopbackServer, Text, Turn


def _answer(qtbot: QtBot, ctl: SessionController, server: LoopbackServer, text: str, reply: str) -> None:  # noqa: F811
    server.script(Turn([Text(reply)]))
    before = len(_rows(ctl))
    ctl.submit(text)
    qtbot.waitUntil(lambda: not ctl.chat.busy and len(_rows(ctl)) >= before + 2, timeout=10_000)


def _path_ids(ctl: SessionController) -> list[str]:
    assert ctl.runtime is not None
    return [str(r.id) for r in ctl.runtime.store.tree.path() if r.role in ("user", "assistant")]


def test_dont_ask_again_is_saved_shown_in_settings_and_can_be_undone(
    qtbot: QtBot,
    controller: SessionController,  # noqa: F811
    server: LoopbackServer,  # noqa: F811
) -> None:
    _answer(qtbot, controller, server, "plan the parser", "a plan")
    _answer(qtbot, controller, server, "write it in Rust", "written")
    tree = controller.window.tree_panel
    first_reply, last_reply = _path_ids(controller)[1], _path_ids(controller)[-1]
    assert tree.select_entry(first_reply)
    with qtbot.waitSignal(tree.navigated, timeout=10_000):
        tree.activate_current()
        qtbot.waitUntil(lambda: tree.branch_dialog is not None and tree.branch_dialog.isVisible())
        dialog = tree.branch_dialog
        assert dialog is not None and "Settings" in dialog.dont_ask.toolTip()
        dialog.no_summary.setChecked(True)
        dialog.dont_ask.setChecked(True)
        dialog.ok_button.click()
    settings_file = agent_dir() / "settings.json"  # written in a worker
    in_memory = controller.runtime.resources.settings  # type: ignore[union-attr]
    qtbot.waitUntil(lambda: in_memory.values.value(BRANCH_SUMMARY_SKIP_PROMPT))
    saved = json.loads(settings_file.read_text())
    assert saved["branchSummary"]["skipPrompt"] is True

    settings = controller.dialogs.show_settings()
    qtbot.addWidget(settings)
    assert settings.skip_branch_prompt.isChecked()
    assert settings.skip_branch_prompt.text().startswith("Don't ask when moving in the tree")
    settings.skip_branch_prompt.setChecked(False)
    saving = settings.save()
    qtbot.waitUntil(saving.done)
    assert json.loads((agent_dir() / "settings.json").read_text())["branchSummary"]["skipPrompt"] is False

    assert tree.select_entry(last_reply)
    task = tree.navigate_to(last_reply)
    qtbot.waitUntil(lambda: tree.branch_dialog is not None and tree.branch_dialog.isVisible())  # asks again
    tree.branch_dialog.reject()  # type: ignore[union-attr]
    qtbot.waitUntil(lambda: task is not None and task.done(), timeout=5000)


def test_branch_counts_are_the_same_after_reopening_the_session(
    qtbot: QtBot,
    controller: SessionController,  # noqa: F811
    server: LoopbackServer,  # noqa: F811
) -> None:
    _answer(qtbot, controller, server, "plan the parser", "a plan")
    _answer(qtbot, controller, server, "write it in Rust", "written")
    _answer(qtbot, controller, server, "add tests", "tests added")
    tree = controller.window.tree_panel

    def intro_for(target: str) -> str:
        assert tree.select_entry(target)
        task = tree.navigate_to(target)
        qtbot.waitUntil(lambda: tree.branch_dialog is not None and tree.branch_dialog.isVisible())
        text = tree.branch_dialog.intro.text()  # type: ignore[union-attr]
        tree.branch_dialog.reject()  # type: ignore[union-attr]
        qtbot.waitUntil(lambda: task is not None and task.done(), timeout=5000)
        return text

    first_reply = _path_ids(controller)[1]
    live = intro_for(first_reply)
    path = str(controller.runtime.store.path)  # type: ignore[union-attr]
    controller.spawn(controller.open_session(None))
    qtbot.waitUntil(lambda: controller.chat.model.rowCount() == 0, timeout=10_000)
    controller.spawn(controller.open_session(path))
    qtbot.waitUntil(lambda: controller.chat.model.rowCount() >= 6, timeout=10_000)
    reopened = intro_for(first_reply)
    assert "holds 4 entries, of which 4 messages would be summarized." in live
    assert reopened == live  # read back from the file, the bodies are the same entries


def test_a_failed_branch_summary_says_nothing_moved_and_what_to_do(
    qtbot: QtBot,
    controller: SessionController,  # noqa: F811
    server: LoopbackServer,  # noqa: F811
) -> None:
    from tests.support import ToolCall

    _answer(qtbot, controller, server, "plan the parser", "a plan")
    _answer(qtbot, controller, server, "write it in Rust", "written")
    tree = controller.window.tree_panel
    first_reply, last_reply = _path_ids(controller)[1], _path_ids(controller)[-1]
    server.script(Turn([ToolCall("read", {"path": "notes.txt"})]))  # the summarizer answers with a tool call
    assert tree.select_entry(first_reply)
    task = tree.navigate_to(first_reply)
    qtbot.waitUntil(lambda: tree.branch_dialog is not None and tree.branch_dialog.isVisible())
    dialog = tree.branch_dialog
    assert dialog is not None
    dialog.summarize.setChecked(True)
    dialog.ok_button.click()
    qtbot.waitUntil(lambda: task is not None and task.done(), timeout=10_000)
    assert _path_ids(controller)[-1] == last_reply  # not moved
    status = tree.status.text()
    assert "attempted to call a tool" in status
    assert "Not moved" in status and "No summary" in status  # what happened, and the way on
