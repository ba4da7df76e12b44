"""Out of view (its dock closed, as at start), the Tool Output Logs panel keeps the session's messages and
lists their cut outputs once it is shown: a long session's branch is not looked through for a panel nobody
sees, and what it lists when shown is what it would have listed at once."""

from __future__ import annotations

from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from piwork.gui.logs.panel import LogViewerPanel
from tests.gui.logs.test_log_viewer import _bash_session

pytestmark = pytest.mark.usefixtures("qloop")


def test_a_hidden_panel_lists_its_cut_outputs_once_shown(qtbot: QtBot, tmp_path: Path) -> None:
    log = tmp_path / "bash-0123456789abcdef.log"
    log.write_bytes(b"".join(b"line %d\n" % i for i in range(1, 3001)))
    panel = LogViewerPanel()
    qtbot.addWidget(panel)
    messages = _bash_session(str(log), 3000)
    panel.set_messages(messages[:2])  # the prompt and the call
    panel.add_message(messages[2])  # its cut result, as it arrives
    assert panel.outputs.rowCount() == 0  # nothing looked through while out of view
    panel.show()
    assert panel.outputs.rowCount() == 1
    assert "make all" in panel.outputs.items[0].title
    shown = LogViewerPanel()  # the same messages given to a panel on screen
    qtbot.addWidget(shown)
    shown.show()
    shown.set_messages(messages)
    assert [i.title for i in shown.outputs.items] == [i.title for i in panel.outputs.items]
