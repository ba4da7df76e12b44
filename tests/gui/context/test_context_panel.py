"""The Context panel over a real run: the X-ray lists every source of the next request, largest first,
and activating a row lands on that message's tool card in the chat and its entry in the session tree, or
on the context file in the Resources panel. The meter follows the run with exact figures after a reply."""

from __future__ import annotations

import json
from pathlib import Path

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from piwork.gui.chat.chat_model import RowRole
from piwork.gui.context.xray_model import TargetRole
from piwork.gui.session_controller import SessionController
from tests.support import LoopbackServer, Text, ToolCall, Turn, Usage


def _run(qtbot: QtBot, controller: SessionController, text: str) -> None:
    controller.submit(text)
    qtbot.waitUntil(lambda: controller.chat.busy, timeout=5000)
    qtbot.waitUntil(lambda: not controller.chat.busy, timeout=15_000)


def _entry_of_result(controller: SessionController, call_id: str) -> str:
    path = controller.runtime.store.path  # type: ignore[union-attr]
    for line in path.read_text().splitlines():
        entry = json.loads(line)
        message = entry.get("message") or {}
        if message.get("role") == "toolResult" and message.get("toolCallId") == call_id:
            return str(entry["id"])
    raise AssertionError(f"no entry for {call_id}")


def test_xray_row_jumps_to_its_tool_result_in_chat_and_tree(
    qtbot: QtBot, controller: SessionController, server: LoopbackServer
) -> None:
    server.script(
        Turn([ToolCall("read", {"path": "big.txt"}, id="call_big")], usage=Usage(input=900)),
        Turn([ToolCall("read", {"path": "notes.txt"}, id="call_notes")], usage=Usage(input=9000)),
        Turn([Text("Both read.")], usage=Usage(input=9100, output=4)),
    )
    window = controller.window
    window.show_context_panel(0)
    _run(qtbot, controller, "read big.txt then notes.txt")
    panel = window.context_panel
    model = panel.xray_model
    qtbot.waitUntil(
        lambda: model.position_of(lambda r: r.part.ref == "call_notes") is not None and not model.counting,
        timeout=10_000,
    )
    # sorted largest first: the big read leads; the parts add up to the request total
    tokens = [model.row_at(i).part.tokens for i in range(model.rowCount())]  # type: ignore[union-attr]
    assert tokens == sorted(tokens, reverse=True) and sum(tokens) == model.total
    assert model.row_at(0).part.ref == "call_big"  # type: ignore[union-attr]
    kinds = {model.row_at(i).part.kind for i in range(model.rowCount())}  # type: ignore[union-attr]
    assert {"system", "context_file", "tool_schema", "user", "assistant", "tool_result"} <= kinds

    position = model.position_of(lambda r: r.part.ref == "call_notes")
    assert position is not None
    view = panel.xray_view
    view.setCurrentIndex(model.index(position, 0))
    qtbot.keyClick(view, Qt.Key.Key_Return)  # activates the row
    chat = window.chat.view
    qtbot.waitUntil(lambda: chat.currentIndex().isValid(), timeout=5000)
    row = chat.currentIndex().data(RowRole)
    assert row.tool is not None and row.tool.call_id == "call_notes" and "alpha" in row.tool.result_text
    expected = _entry_of_result(controller, "call_notes")
    qtbot.waitUntil(lambda: window.tree_panel.current_entry_id() == expected, timeout=5000)

    # a context file row leads to the Resources panel, on that file
    position = model.position_of(lambda r: r.part.kind == "context_file")
    assert position is not None
    target = model.index(position, 0).data(TargetRole)
    assert target.path.endswith("AGENTS.md")
    view.setCurrentIndex(model.index(position, 0))
    qtbot.keyClick(view, Qt.Key.Key_Return)
    assert window.docks["resources"].isVisible()
    resource = window.resource_panel.model.row_at(window.resource_panel.view.currentIndex())
    assert resource is not None and resource.path == target.path

    # the meter: exact after the reply, the provider's count, against the 32K window's marks
    footer = window.chat.footer
    qtbot.waitUntil(lambda: footer.reading.exact, timeout=5000)
    assert footer.reading.window == 32_000 and footer.reading.marks is not None
    assert footer.reading.marks.pressure == 10_931
    assert footer.reading.occupancy == 9104  # input 9100 + output 4 of the last reply
    assert footer.context_label.text() == "context 9.1k / 32k · exact"
    assert footer.meter.reading.segments.total == model.total


def test_manifest_tab_follows_a_task_and_offers_its_actions(
    qtbot: QtBot, controller: SessionController
) -> None:
    from PySide6.QtWidgets import QTableWidget

    from piwork.gui.commands import SlashCommand

    project = controller.cwd
    (Path(project) / ".pi").mkdir()
    (Path(project) / ".pi" / "piwork-profile.json").write_text('{"version": 1, "verify": ["pytest -q"]}')
    window = controller.window
    window.show_context_panel(1)
    panel = window.context_panel
    controller.run_command(SlashCommand("task", "read-only Look around the project"))
    qtbot.waitUntil(lambda: panel.manifest_model.manifest is not None, timeout=10_000)
    model = panel.manifest_model
    rows = {model.row_at(i).layer.number: model.row_at(i) for i in range(model.rowCount())}  # type: ignore[union-attr]
    assert rows[1].entry is not None and rows[1].entry.path.endswith("AGENTS.md")
    profile = rows[2].entry
    assert profile is not None and profile.status == "blocked-untrusted"  # the window opened untrusted
    profile_row = next(i for i in range(model.rowCount()) if model.row_at(i).entry is profile)  # type: ignore[union-attr]
    assert ("trust", "Trust project…") in panel.manifest_actions(model.index(profile_row, 0))
    first = model.index(0, 0)
    assert panel.manifest_actions(first)[0] == ("open", "Show in Resources")
    with qtbot.waitSignal(panel.manifestActionRequested) as asked:
        panel.manifest_view.setCurrentIndex(first)
        qtbot.keyClick(panel.manifest_view, Qt.Key.Key_Return)
    assert asked.args[0] == "open" and asked.args[1].layer == 1
    qtbot.waitUntil(lambda: window.docks["resources"].isVisible(), timeout=5000)
    selected = window.resource_panel.model.row_at(window.resource_panel.view.currentIndex())
    assert selected is not None and selected.path.endswith("AGENTS.md")

    # the dock's toggle and its key are listed with the other shortcuts
    dialog = window.show_shortcuts()
    table = dialog.findChild(QTableWidget, "shortcutsTable")
    listed = {tuple(table.item(r, c).text() for c in range(3)) for r in range(table.rowCount())}
    assert ("View", "Context", "Alt+4") in listed
    assert any(row[1] == "Context Preflight" for row in listed)
    dialog.close()


def test_xray_row_of_the_task_bundle_selects_its_entry_in_the_tree(
    qtbot: QtBot, controller: SessionController, server: LoopbackServer
) -> None:
    from piwork.gui.commands import SlashCommand

    server.script(Turn([Text("Looked.")]))
    window = controller.window
    window.show_context_panel(0)
    controller.run_command(SlashCommand("task", "read-only Look around the project"))
    _run(qtbot, controller, "look around")
    model = window.context_panel.xray_model
    qtbot.waitUntil(
        lambda: model.position_of(lambda r: r.part.kind == "custom") is not None and not model.counting,
        timeout=10_000,
    )
    path = controller.runtime.store.path  # type: ignore[union-attr]
    entries = [json.loads(line) for line in path.read_text().splitlines()]
    bundle = next(e["id"] for e in entries if e.get("type") == "custom_message")
    position = model.position_of(lambda r: r.part.kind == "custom")
    view = window.context_panel.xray_view
    view.setCurrentIndex(model.index(position, 0))  # type: ignore[arg-type]
    qtbot.keyClick(view, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: window.tree_panel.current_entry_id() == bundle, timeout=5000)


def test_xray_names_a_context_file_inside_the_project_by_its_relative_path(
    qtbot: QtBot, controller: SessionController, server: LoopbackServer
) -> None:
    server.script(Turn([Text("Hello.")], usage=Usage(input=900, output=2)))
    window = controller.window
    window.show_context_panel(0)
    _run(qtbot, controller, "hi")
    model = window.context_panel.xray_model
    qtbot.waitUntil(
        lambda: model.position_of(lambda r: r.part.kind == "context_file") is not None, timeout=10_000
    )
    position = model.position_of(lambda r: r.part.kind == "context_file")
    assert position is not None
    full = str(Path(controller.cwd) / "AGENTS.md")
    assert model.index(position, 0).data() == "AGENTS.md"
    assert model.index(position, 0).data(Qt.ItemDataRole.ToolTipRole).startswith(full + " ")
    # outside the project (another project's window): the full path
    window.context_panel.set_project_dir(str(Path(controller.cwd).parent / "elsewhere"))
    assert model.index(position, 0).data() == full
