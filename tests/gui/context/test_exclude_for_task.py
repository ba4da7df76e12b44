"""'Exclude for this task' in the Context panel's manifest over a real run: the row turns omitted, the
X-ray and the budget meter lose the part at once, the next request carries a marker instead, the session
file only gains state entries, and 'Include again' undoes it. A context file asks first, saying that the
system prompt (and so the provider's prompt cache) changes."""

from __future__ import annotations

import json

from PySide6.QtWidgets import QMessageBox
from pytestqt.qtbot import QtBot

from piwork.core.context import ManifestEntry
from piwork.gui.chat.rows import RowKind
from piwork.gui.commands import SlashCommand
from piwork.gui.context.context_panel import ContextPanel
from piwork.gui.session_controller import SessionController
from tests.support import LoopbackServer, RecordedRequest, Text, Turn


def _row(panel: ContextPanel, kind: str) -> tuple[int, ManifestEntry]:
    model = panel.manifest_model
    for i in range(model.rowCount()):
        row = model.row_at(i)
        if row is not None and row.entry is not None and row.entry.kind == kind:
            return i, row.entry
    raise AssertionError(f"no {kind} row")


def _status(panel: ContextPanel, kind: str) -> tuple[str, str | None]:
    _i, entry = _row(panel, kind)
    return entry.status, entry.reason


def _xray_bundle(panel: ContextPanel) -> int:
    """Tokens of the X-ray's row for the task context (the bundle message)."""
    model = panel.xray_model
    rows = [model.row_at(i) for i in range(model.rowCount())]
    parts = [r.part for r in rows if r is not None and r.part.label == "piwork.contextBundle"]
    assert len(parts) == 1
    return parts[0].tokens


def _bundle(request: RecordedRequest) -> str:
    first = request.body["messages"][0]["content"]
    return str(first[0]["text"] if isinstance(first, list) else first)


def _system(request: RecordedRequest) -> str:
    system = request.body["system"]
    return "".join(b["text"] for b in system) if isinstance(system, list) else str(system)


def _run(qtbot: QtBot, ctl: SessionController, server: LoopbackServer, text: str) -> RecordedRequest:
    calls = len(server.requests)
    server.script(Turn([Text("noted")]))
    ctl.submit(text)
    qtbot.waitUntil(lambda: len(server.requests) == calls + 1, timeout=10_000)
    qtbot.waitUntil(lambda: not ctl.chat.busy, timeout=10_000)
    return server.requests[-1]


def _notice(ctl: SessionController, title: str) -> str | None:
    model = ctl.chat.model
    rows = [model.row_at(i) for i in range(model.rowCount())]
    found = [r for r in rows if r.kind in (RowKind.NOTICE, RowKind.ERROR) and r.title == title]
    return found[-1].text if found else None


def test_exclude_a_bundle_layer_from_the_manifest_and_include_it_again(
    qtbot: QtBot, trusted_controller: SessionController, server: LoopbackServer
) -> None:
    ctl = trusted_controller
    window = ctl.window
    window.show_context_panel(1)
    panel = window.context_panel
    feed = ctl.context_feed
    ctl.run_command(SlashCommand("task", "read-only find where notes are parsed"))
    qtbot.waitUntil(lambda: panel.manifest_model.manifest is not None, timeout=10_000)
    first = _run(qtbot, ctl, server, "where?")
    assert "module 59: parses and stores notes" in _bundle(first)
    qtbot.waitUntil(
        lambda: feed.reading.segments.bundle > 0 and feed.reading.exact is not None, timeout=5_000
    )
    path = ctl.runtime.store.path  # type: ignore[union-attr]
    assert path is not None
    qtbot.waitUntil(lambda: path.exists() and "noted" in path.read_text(), timeout=5_000)
    lines = path.read_text().splitlines()
    bundle_before = feed.reading.segments.bundle
    assert _xray_bundle(panel) == bundle_before

    position, entry = _row(panel, "snapshot")
    assert entry.status == "included" and entry.tokens > 0
    index = panel.manifest_model.index(position, 0)
    assert ("exclude", "Exclude for this task") in panel.manifest_actions(index)
    panel.run_manifest_action("exclude", index)
    qtbot.waitUntil(
        lambda: _status(panel, "snapshot") == ("omitted", "excluded for this task"), timeout=5_000
    )
    _position, shown = _row(panel, "snapshot")
    assert shown.tokens == 0
    assert (
        "snapshot: .pi/project-context.md (omitted: excluded for this task)"
        in panel.manifest_model.manifest.render_text(ctl.cwd)
    )  # type: ignore[union-attr]
    # the meter and the X-ray count the next request without it, before any request is sent
    qtbot.waitUntil(lambda: feed.reading.segments.bundle < bundle_before - 300, timeout=5_000)
    assert not feed.reading.exact  # the last reply's figure counted the snapshot
    assert _xray_bundle(panel) == feed.reading.segments.bundle  # the X-ray's row for the task context
    assert panel.xray_model.total == feed.reading.segments.total
    notice = _notice(ctl, "/context exclude")
    assert notice is not None and notice.startswith("Excluded for this task: snapshot .pi/project-context.md")
    after_exclude = path.read_text().splitlines()
    assert after_exclude[: len(lines)] == lines and len(after_exclude) == len(lines) + 1
    assert json.loads(after_exclude[-1])["customType"] == "piwork.contextExclusions"

    second = _run(qtbot, ctl, server, "and the tests?")
    assert "module 59" not in _bundle(second)
    assert '<context_layer kind="snapshot" path=".pi/project-context.md" excluded="true">' in _bundle(second)
    bundle_line = next(line for line in path.read_text().splitlines() if "piwork.contextBundle" in line)
    assert "module 59: parses and stores notes" in bundle_line  # the session file keeps it

    position, _entry = _row(panel, "snapshot")
    index = panel.manifest_model.index(position, 0)
    actions = panel.manifest_actions(index)
    assert ("include", "Include again") in actions and all(a != "exclude" for a, _t in actions)
    panel.run_manifest_action("include", index)
    qtbot.waitUntil(lambda: _status(panel, "snapshot")[0] == "included", timeout=5_000)
    qtbot.waitUntil(lambda: feed.reading.segments.bundle >= bundle_before, timeout=5_000)
    third = _run(qtbot, ctl, server, "once more")
    assert _bundle(third) == _bundle(first)


def test_excluding_a_context_file_asks_first_and_changes_the_system_prompt(
    qtbot: QtBot, trusted_controller: SessionController, server: LoopbackServer
) -> None:
    ctl = trusted_controller
    window = ctl.window
    window.show_context_panel(1)
    panel = window.context_panel
    feed = ctl.context_feed
    ctl.run_command(SlashCommand("task", "read-only find where notes are parsed"))
    qtbot.waitUntil(lambda: panel.manifest_model.manifest is not None, timeout=10_000)
    first = _run(qtbot, ctl, server, "where?")
    assert "Run pytest before you say done." in _system(first)
    qtbot.waitUntil(lambda: feed.reading.segments.system_prompt > 0, timeout=5_000)
    system_before = feed.reading.segments.system_prompt

    def confirm() -> QMessageBox:
        qtbot.waitUntil(
            lambda: window.findChild(QMessageBox, "excludeContextFile") is not None, timeout=5_000
        )
        box = window.findChild(QMessageBox, "excludeContextFile")
        assert box is not None
        return box

    position, _entry = _row(panel, "contextFile")
    index = panel.manifest_model.index(position, 0)
    assert ("exclude", "Exclude for this task…") in panel.manifest_actions(index)
    panel.run_manifest_action("exclude", index)
    box = confirm()
    assert "prompt cache starts over once" in box.informativeText()
    box.button(QMessageBox.StandardButton.Cancel).click()
    qtbot.waitUntil(lambda: window.findChild(QMessageBox, "excludeContextFile") is None, timeout=5_000)
    assert _status(panel, "contextFile")[0] == "included"

    panel.run_manifest_action("exclude", index)
    box = confirm()
    next(b for b in box.buttons() if b.text() == "Exclude").click()
    qtbot.waitUntil(
        lambda: _status(panel, "contextFile") == ("omitted", "excluded for this task"), timeout=5_000
    )
    qtbot.waitUntil(lambda: feed.reading.segments.system_prompt < system_before - 100, timeout=5_000)
    second = _run(qtbot, ctl, server, "and the tests?")
    system = _system(second)
    assert "Run pytest before you say done." not in system
    assert "the user excluded this context file from this task's context" in system
    assert _bundle(second) == _bundle(first)  # the bundle is untouched

    # a new task ends the exclusion: the context file is back in its first request
    ctl.run_command(SlashCommand("task", "read-only another question"))
    qtbot.waitUntil(lambda: _status(panel, "contextFile")[0] == "included", timeout=10_000)
    third = _run(qtbot, ctl, server, "go")
    assert "Run pytest before you say done." in _system(third)
