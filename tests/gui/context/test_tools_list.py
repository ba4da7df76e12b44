"""Tool schemas in the X-ray lead to the Resources panel's Tools list: every tool of the session, whether
the next request sends it (a read-only task leaves the writing tools out, and says so), its description,
its schema as sent (readable, copyable) and the same token figure as the X-ray."""

from __future__ import annotations

import json

from PySide6.QtCore import QModelIndex, Qt
from PySide6.QtGui import QGuiApplication
from pytestqt.qtbot import QtBot

from piwork.gui.commands import SlashCommand
from piwork.gui.resources.tool_rows import ToolRow
from piwork.gui.session_controller import SessionController
from tests.support.loopback_server import LoopbackServer, Text, Turn


def test_a_tool_schema_row_lands_on_that_tool_in_the_tools_list(
    qtbot: QtBot, controller: SessionController
) -> None:
    window = controller.window
    window.show_context_panel(0)
    xray = window.context_panel.xray_model
    tools = window.resource_panel.tools_view
    qtbot.waitUntil(
        lambda: xray.position_of(lambda r: r.part.kind == "tool_schema") is not None, timeout=10_000
    )
    qtbot.waitUntil(lambda: tools.model.rowCount() > 0, timeout=10_000)
    sent = [r.name for r in tools.model.rows if r.sent]
    assert sent == controller.session.tool_names()  # type: ignore[union-attr]  # in the request's order
    assert {r.name for r in tools.model.rows} == set(controller.session.registry.names())  # type: ignore[union-attr]

    position = xray.position_of(lambda r: r.part.ref == "bash")
    assert position is not None
    bash_tokens = xray.row_at(position).part.tokens  # type: ignore[union-attr]
    view = window.context_panel.xray_view
    view.setCurrentIndex(xray.index(position, 0))
    with qtbot.waitSignal(controller.context_navigator.landed) as landed:
        qtbot.keyClick(view, Qt.Key.Key_Return)  # activates the row
    assert landed.args == ["tools", "bash"]
    assert window.docks["resources"].isVisible()
    assert window.resource_panel.tabs.currentWidget() is tools
    row = tools.current_tool()
    assert row is not None and row.name == "bash" and row.sent and row.tokens == bash_tokens
    assert tools.model.index(tools.table.currentIndex().row(), 2).data() == f"{bash_tokens:,}"
    schema = json.loads(tools.schema.toPlainText())
    spec = next(s for s in controller.session.registry.specs() if s.name == "bash")  # type: ignore[union-attr]
    assert schema == {"name": "bash", "description": spec.description, "parameters": spec.parameters}
    assert tools.schema.isReadOnly() and spec.description in tools.description.text()
    qtbot.mouseClick(tools.copy_button, Qt.MouseButton.LeftButton)
    assert json.loads(QGuiApplication.clipboard().text()) == schema

    # a tool the request does not send is listed, greyed, with why
    left_out = next(r for r in tools.model.rows if not r.sent)
    assert left_out.reason and left_out.tokens > 0
    assert xray.position_of(lambda r: r.part.ref == left_out.name) is None


def test_a_read_only_task_leaves_the_writing_tools_out_and_says_why(
    qtbot: QtBot, controller: SessionController
) -> None:
    window = controller.window
    tools = window.resource_panel.tools_view
    qtbot.waitUntil(lambda: tools.model.rowCount() > 0, timeout=10_000)
    controller.run_command(SlashCommand("task", "read-only Look around the project"))

    built_in = {"read", "grep", "find", "ls", "bash", "edit", "write"}

    def state() -> dict[str, bool]:  # the built-in tools (the context tools are read-only, always sent)
        return {r.name: r.sent for r in tools.model.rows if r.name in built_in}

    qtbot.waitUntil(lambda: state().get("bash") is False, timeout=10_000)
    assert state() == {
        "read": True,
        "grep": True,
        "find": True,
        "ls": True,
        "bash": False,
        "edit": False,
        "write": False,
    }
    assert {r.name for r in tools.model.rows if r.sent} - built_in == {
        "context_preflight",
        "context_budget",
        "context_index_status",
        "context_index_search",
    }
    rows = {r.name: r for r in tools.model.rows}
    assert "read-only" in rows["write"].reason
    position = tools.model.position_of("write")
    assert position is not None and position >= 8  # after the sent ones
    assert "read-only" in tools.model.index(position, 0).data(Qt.ItemDataRole.ToolTipRole)
    assert tools.model.index(position, 1).data() == "not sent"
    assert window.resource_panel.select_tool("write")
    assert "read-only" in tools.description.text()
    assert "8 of 11 tools sent with the next request" in tools.summary.text()


def test_the_tools_tab_turns_tools_on_and_off_for_the_session(
    qtbot: QtBot, controller: SessionController, server: LoopbackServer
) -> None:
    window = controller.window
    session = controller.session
    assert session is not None
    tools = window.resource_panel.tools_view
    qtbot.waitUntil(lambda: tools.model.rowCount() > 0, timeout=10_000)

    def row(name: str) -> ToolRow:
        position = tools.model.position_of(name)
        assert position is not None
        found = tools.model.row_at(position)
        assert found is not None
        return found

    def check_index(name: str) -> QModelIndex:
        position = tools.model.position_of(name)
        assert position is not None
        return tools.model.index(position, 0)

    assert row("bash").active and row("bash").sent and not row("grep").active
    assert check_index("bash").data(Qt.ItemDataRole.CheckStateRole) == Qt.CheckState.Checked
    # keyboard: the row selected, Space toggles its check box
    tools.table.setFocus()
    tools.table.setCurrentIndex(check_index("bash"))
    with qtbot.waitSignal(window.resource_panel.toolToggled) as toggled:
        qtbot.keyClick(tools.table, Qt.Key.Key_Space)
    assert toggled.args == ["bash", False]
    assert "bash" not in session.tool_names()
    qtbot.waitUntil(lambda: not row("bash").sent, timeout=10_000)
    assert not row("bash").active and "off" in row("bash").reason.lower()
    assert tools.model.setData(check_index("grep"), Qt.CheckState.Checked, Qt.ItemDataRole.CheckStateRole)
    qtbot.waitUntil(lambda: row("grep").sent, timeout=10_000)
    assert session.tool_names() == ["read", "edit", "write", "grep"]
    assert "grep" in window.status.currentMessage()

    server.script(Turn([Text("done")]))
    controller.submit("list the tools")
    qtbot.waitUntil(lambda: len(server.requests) == 1 and not session.is_streaming, timeout=15_000)
    assert [t["name"] for t in server.requests[0].body["tools"]] == ["read", "edit", "write", "grep"]
