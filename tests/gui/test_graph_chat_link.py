"""An entry picked in the branch graph is shown in the chat as well (real window, real agent runs against
the loopback provider): user messages, tool results (their card) and answers; entries of another branch
move nothing."""

from __future__ import annotations

from pytestqt.qtbot import QtBot

from piwork.gui.chat.chat_model import RowRole
from piwork.gui.chat.rows import RowKind
from piwork.gui.session_controller import SessionController
from tests.gui.test_session_controller import controller, server  # noqa: F401  (fixtures)
from tests.support import LoopbackServer, Text, ToolCall, Turn


def _current_row(ctl: SessionController) -> object:
    return ctl.chat.view.currentIndex().data(RowRole)


def test_picking_graph_entries_scrolls_the_chat_to_them(
    qtbot: QtBot,
    controller: SessionController,  # noqa: F811
    server: LoopbackServer,  # noqa: F811
) -> None:
    server.script(Turn([ToolCall("read", {"path": "notes.txt"})]), Turn([Text("It says alpha and beta.")]))
    controller.submit("read notes.txt")
    qtbot.waitUntil(
        lambda: not controller.chat.busy and len(controller.chat.model.all_rows()) >= 3, timeout=10_000
    )
    server.script(Turn([Text("Second answer.")]))
    controller.submit("and again")
    qtbot.waitUntil(
        lambda: not controller.chat.busy and len(controller.chat.model.all_rows()) >= 5, timeout=10_000
    )
    panel = controller.window.tree_panel
    panel.views.setCurrentWidget(panel.graph)
    qtbot.waitUntil(
        lambda: panel.graph.model is not None and not panel.graph.laying_out
    )  # laid out in a worker
    tree = panel.tree
    assert tree is not None
    path = [r for r in tree.path() if r.type == "message"]
    first_user, result = path[0], next(r for r in path if r.role == "toolResult")
    panel.select_entry(str(result.id))
    row = _current_row(controller)
    assert row.kind is RowKind.TOOL and "alpha" in row.tool.result_text  # type: ignore[attr-defined]
    panel.select_entry(str(first_user.id))
    row = _current_row(controller)
    assert row.kind is RowKind.USER and row.text == "read notes.txt"  # type: ignore[attr-defined]
    panel.select_entry(str(path[-1].id))
    assert _current_row(controller).text == "Second answer."  # type: ignore[attr-defined]
    # an entry of another branch has no chat row: the chat stays where it is
    tree.branch(str(first_user.id))
    other = tree.append_message({"role": "assistant", "content": [{"type": "text", "text": "elsewhere"}],
                                 "stopReason": "stop", "timestamp": 1})  # fmt: skip
    tree.branch(str(path[-1].id))
    assert controller.window.show_entry_in_chat(other) is False
