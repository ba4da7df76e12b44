"""The window's file restores at their edges: checkpoints turned off, a reply still streaming, and a restore of
a thousand and more files (listed in part, restored in full, the GUI thread never held)."""

from __future__ import annotations

import asyncio
import json

import shiboken6

from piwork.core.paths import agent_dir
from piwork.gui.chat.rows import RowKind
from piwork.gui.rewind.flow import TURNED_OFF, WAIT_FOR_REPLY
from piwork.gui.rewind.plan_list import GROUP_LIMIT
from piwork.gui.tree.tree_panel import RESTORE_FILES_TEXT
from tests.gui.rewind.conftest import Workbench
from tests.gui.rewind.test_rewind_window import menu_action, notices, open_branch_dialog
from tests.support import Text, ToolCall, Turn
from tests.support.checkpoint_runs import files_of

MANY = 1200


def test_checkpoints_turned_off_disable_the_option_and_say_so(bench: Workbench) -> None:
    settings_file = agent_dir() / "settings.json"
    settings = json.loads(settings_file.read_text())
    settings["piwork"] = {"checkpoints": {"enabled": False}}
    settings_file.write_text(json.dumps(settings))
    ctl = bench.controller
    ctl.spawn(ctl.open_session(None))  # a new session reads the settings
    bench.qtbot.waitUntil(lambda: ctl.runtime is not None and ctl.runtime.session.checkpointer is None)
    bench.ask("first", "a")
    bench.ask("second", None)
    first = bench.user_ids()[0]

    dialog = open_branch_dialog(bench, first)
    assert dialog.restore is not None and not dialog.restore.box.isEnabled()
    assert dialog.restore.status.text() == TURNED_OFF
    dialog.reject()
    bench.qtbot.waitUntil(lambda: bench.window.tree_panel.branch_dialog is None)
    menu_action(bench, first, RESTORE_FILES_TEXT).trigger()
    bench.qtbot.waitUntil(lambda: not bench.window.rewind.busy)
    assert notices(bench)[-1] == ("Files not restored", TURNED_OFF)


def test_no_restore_while_a_reply_streams(bench: Workbench) -> None:
    bench.ask("first", "a")
    first = bench.user_ids()[0]
    now = files_of(bench.project)
    chat = bench.controller.chat
    bench.server.script(Turn([Text(" ".join(f"w{i}" for i in range(400)))], drip=0.02))
    bench.controller.submit("talk a lot")
    bench.qtbot.waitUntil(lambda: chat.busy, timeout=10_000)
    assert bench.window.rewind.restore_to(first) is None
    assert notices(bench)[-1] == ("Files not restored", WAIT_FOR_REPLY)
    chat.send_button.click()  # Stop
    bench.qtbot.waitUntil(lambda: not chat.busy, timeout=10_000)
    assert files_of(bench.project) == now


def test_a_thousand_files_are_listed_in_part_restored_in_full_without_holding_the_gui(
    bench: Workbench,
) -> None:
    qtbot, rewind = bench.qtbot, bench.window.rewind
    command = f"mkdir many && for i in $(seq 1 {MANY}); do echo $i > many/f$i.txt; done"
    bench.server.script(Turn([ToolCall("bash", {"command": command})]), Turn([Text("made them")]))
    chat = bench.controller.chat
    rows = chat.model.rowCount()
    bench.controller.submit("make many files")
    qtbot.waitUntil(lambda: not chat.busy and chat.model.rowCount() >= rows + 2, timeout=30_000)
    assert len(list((bench.project / "many").iterdir())) == MANY
    first = bench.user_ids()[0]

    menu_action(bench, first, RESTORE_FILES_TEXT).trigger()
    qtbot.waitUntil(lambda: rewind.dialog is not None and rewind.dialog.isVisible(), timeout=20_000)
    asked = rewind.dialog
    assert asked is not None
    removed = asked.files.topLevelItem(0)
    assert removed is not None and removed.text(0).startswith(f"Removed — {MANY:,} files")
    assert removed.childCount() == GROUP_LIMIT + 1
    assert removed.child(GROUP_LIMIT).text(0) == f"… and {MANY - GROUP_LIMIT:,} more"  # type: ignore[union-attr]
    with qtbot.waitSignal(rewind.restored, timeout=30_000):
        asked.ok_button.click()
    assert files_of(bench.project) == bench.states[0] and not (bench.project / "many").exists()
    last = [
        r for r in (chat.model.row_at(i) for i in range(chat.model.rowCount())) if r.kind is RowKind.NOTICE
    ]
    assert last[-1].text.startswith(f"{MANY:,} files restored") and f"and {MANY - 6:,} more" in last[-1].text


def test_quitting_after_the_window_was_deleted_still_lets_the_session_go(bench: Workbench) -> None:
    bench.ask("first", None)
    runtime = bench.controller.runtime
    assert runtime is not None
    shiboken6.delete(bench.window.rewind)  # deleted with the window, before the controller lets go
    done = asyncio.ensure_future(bench.controller.shutdown())
    bench.qtbot.waitUntil(done.done, timeout=10_000)
    assert done.exception() is None and bench.controller.runtime is None
