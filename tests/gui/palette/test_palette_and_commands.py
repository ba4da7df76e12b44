"""Command palette and the composer's window commands, on the real window and engine: a reply from the
loopback provider, then /session, /copy, /export (HTML and JSONL), /import, /clone, /model, /thinking,
completion when typing "/", and the palette finding and running actions, commands, models and sessions."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings, Qt
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from piwork.core.paths import agent_dir
from piwork.core.session.format import default_session_dir
from piwork.gui.chat.rows import RowKind
from piwork.gui.main_window import MainWindow
from piwork.gui.notifications import NotificationCenter
from piwork.gui.palette.palette_dialog import PaletteDialog
from piwork.gui.session_controller import SessionController
from piwork.gui.shortcuts_dialog import ShortcutsDialog
from piwork.gui.theme import load_theme
from tests.support import LoopbackServer, Text, Turn
from tests.support.rich_session import write_rich_session


@pytest.fixture
def server() -> Iterator[LoopbackServer]:
    with LoopbackServer() as running:
        yield running


@pytest.fixture
def controller(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, server: LoopbackServer, tmp_path: Path
) -> Iterator[SessionController]:
    adir = agent_dir()
    models = {
        "providers": {
            "loopback": {
                "baseUrl": server.url,
                "api": "anthropic-messages",
                "apiKey": "test-key",
                "models": [
                    {"id": "loopback-model", "name": "Loopback", "contextWindow": 200000, "maxTokens": 4096},
                    {"id": "other-model", "name": "Other", "contextWindow": 100000, "maxTokens": 4096},
                ],
            }
        }
    }
    (adir / "models.json").write_text(json.dumps(models))
    (adir / "settings.json").write_text(
        json.dumps({"defaultProvider": "loopback", "defaultModel": "loopback-model"})
    )
    project = tmp_path / "project"
    project.mkdir()
    window = MainWindow(QSettings(str(tmp_path / "w.ini"), QSettings.Format.IniFormat), load_theme("light"))
    qtbot.addWidget(window)
    window.show()
    notifications = NotificationCenter(window)
    ctl = SessionController(window, notifications, str(project), adir, approve=False, env={})
    ctl.spawn(ctl.open_session(None))
    qtbot.waitUntil(lambda: ctl.runtime is not None, timeout=10_000)
    yield ctl
    done = qloop.create_task(ctl.shutdown())
    qtbot.waitUntil(done.done, timeout=10_000)
    notifications.close_all()


def _notices(ctl: SessionController) -> list[str]:
    model = ctl.chat.model
    rows = [model.row_at(i) for i in range(model.rowCount())]
    return [r.plain_text() for r in rows if r.kind in (RowKind.NOTICE, RowKind.ERROR)]


def _type(ctl: SessionController, text: str) -> None:
    ctl.chat.composer.set_text(text)
    ctl.chat.composer.submit()


def _reply(qtbot: QtBot, ctl: SessionController, server: LoopbackServer, text: str) -> None:
    server.script(Turn([Text(text)]))
    _type(ctl, "hello there")
    qtbot.waitUntil(
        lambda: ctl.runtime is not None and ctl.runtime.store.flushed and not ctl.chat.busy, timeout=10_000
    )


def test_session_copy_export_import_clone_commands(
    qtbot: QtBot, controller: SessionController, server: LoopbackServer, tmp_path: Path
) -> None:
    ctl = controller
    _type(ctl, "/export")
    qtbot.waitUntil(lambda: any("Nothing to export yet" in n for n in _notices(ctl)))
    _reply(qtbot, ctl, server, "General Kenobi.")

    _type(ctl, "/session")
    info = next(n for n in _notices(ctl) if n.startswith("Session\n"))
    assert str(ctl.runtime.store.path) in info and ctl.runtime.store.session_id in info  # type: ignore[union-attr]

    _type(ctl, "/copy")
    assert QApplication.clipboard().text() == "General Kenobi."

    page = tmp_path / "out" / "s.html"
    page.parent.mkdir()
    _type(ctl, f"/export {page}")
    qtbot.waitUntil(lambda: any(n.startswith("Exported") for n in _notices(ctl)), timeout=10_000)
    text = page.read_text(encoding="utf-8")
    assert "General Kenobi." in text and "loopback-model" in text

    branch = tmp_path / "out" / "s.jsonl"
    _type(ctl, f"/export {branch}")
    qtbot.waitUntil(lambda: branch.exists(), timeout=10_000)
    header = json.loads(branch.read_text(encoding="utf-8").splitlines()[0])
    assert header["id"] != ctl.runtime.store.session_id  # type: ignore[union-attr]

    original = ctl.runtime.store.path  # type: ignore[union-attr]
    _type(ctl, "/clone")
    qtbot.waitUntil(lambda: ctl.runtime is not None and ctl.runtime.store.path != original, timeout=10_000)
    assert [m.get("role") for m in ctl.session.messages][:2] == ["user", "assistant"]  # type: ignore[union-attr]

    source = write_rich_session(tmp_path / "elsewhere.jsonl", cwd=str(tmp_path / "project"))
    before = source.read_bytes()
    _type(ctl, f"/import {source}")
    folder = default_session_dir(ctl.cwd, agent_dir())
    qtbot.waitUntil(
        lambda: ctl.runtime is not None and ctl.runtime.store.path == folder / "elsewhere.jsonl",
        timeout=10_000,
    )
    assert source.read_bytes() == before
    assert ctl.session is not None and ctl.session.tree.has("a5")

    _type(ctl, "/import /nonexistent/file.jsonl")
    qtbot.waitUntil(lambda: any("Import failed" in n for n in _notices(ctl)), timeout=10_000)


def test_model_and_thinking_commands(qtbot: QtBot, controller: SessionController) -> None:
    ctl = controller
    _type(ctl, "/model loopback/other-model")
    assert ctl.session is not None and ctl.session.model is not None and ctl.session.model.id == "other-model"
    _type(ctl, "/model nothing-like-it")
    assert any("names 0 models" in n for n in _notices(ctl))
    _type(ctl, "/thinking high")
    assert ctl.session.thinking_level in ("high", "off")  # a model without reasoning keeps "off"
    _type(ctl, "/thinking loud")
    assert any("Levels: off" in n for n in _notices(ctl))


def test_typing_slash_opens_the_completer_with_descriptions(
    qtbot: QtBot, controller: SessionController
) -> None:
    composer = controller.chat.composer
    composer.setFocus()
    qtbot.waitUntil(composer.hasFocus)
    composer.clear()
    qtbot.keyClicks(composer, "/ex")
    popup = composer._completer.popup()
    qtbot.waitUntil(lambda: popup is not None and popup.isVisible())
    model = composer._completer.completionModel()
    rows = [model.index(r, 0).data() for r in range(model.rowCount())]
    assert rows == ["/export"]
    assert "HTML page" in model.index(0, 1).data()
    qtbot.keyClick(popup, Qt.Key.Key_Return)
    assert composer.toPlainText() == "/export "


def test_palette_finds_and_runs_everything(
    qtbot: QtBot, controller: SessionController, server: LoopbackServer, tmp_path: Path
) -> None:
    ctl = controller
    _reply(qtbot, ctl, server, "Saved so the palette lists it.")
    saved = ctl.runtime.store.path  # type: ignore[union-attr]
    action = ctl.window.action_map["command_palette"]
    assert action.shortcut() == QKeySequence("Ctrl+Shift+P")
    action.trigger()
    palette = next(
        w for w in QApplication.topLevelWidgets() if isinstance(w, PaletteDialog) and w.isVisible()
    )
    qtbot.addWidget(palette)
    kinds = {item.kind for item in palette.model.items}
    assert {"action", "command", "model"} <= kinds
    search = next(i for i in palette.model.items if i.title == "Search All Sessions…")
    assert search.shortcut == QKeySequence("Ctrl+Shift+F").toString(QKeySequence.SequenceFormat.NativeText)
    qtbot.waitUntil(lambda: any(i.kind == "session" for i in palette.model.items), timeout=10_000)

    qtbot.keyClicks(palette.query, "dark pal")
    assert palette.current_item is not None and palette.current_item.title == "Dark Palette"
    qtbot.keyClick(palette.query, Qt.Key.Key_Return)
    assert ctl.window.action_map["toggle_theme"].isChecked()
    assert not palette.isVisible()

    palette = ctl.dialogs.show_palette()
    qtbot.addWidget(palette)
    qtbot.keyClicks(palette.query, "hotkeys")
    assert palette.current_item is not None and palette.current_item.title == "/hotkeys"
    qtbot.keyClick(palette.query, Qt.Key.Key_Return)
    shortcuts = next(
        w for w in QApplication.topLevelWidgets() if isinstance(w, ShortcutsDialog) and w.isVisible()
    )
    shortcuts.close()

    palette = ctl.dialogs.show_palette()
    qtbot.addWidget(palette)
    qtbot.keyClicks(palette.query, "other-model")
    assert palette.current_item is not None and palette.current_item.kind == "model"
    qtbot.keyClick(palette.query, Qt.Key.Key_Return)
    assert ctl.session is not None and ctl.session.model is not None and ctl.session.model.id == "other-model"

    _type(ctl, "/new")
    qtbot.waitUntil(lambda: ctl.runtime is not None and ctl.runtime.store.path != saved, timeout=10_000)
    palette = ctl.dialogs.show_palette()
    qtbot.addWidget(palette)
    qtbot.waitUntil(lambda: any(i.kind == "session" for i in palette.model.items), timeout=10_000)
    qtbot.keyClicks(palette.query, "hello there")
    assert palette.current_item is not None and palette.current_item.kind == "session"
    qtbot.keyClick(palette.query, Qt.Key.Key_Down)
    qtbot.keyClick(palette.query, Qt.Key.Key_Up)
    qtbot.keyClick(palette.query, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: ctl.runtime is not None and ctl.runtime.store.path == saved, timeout=10_000)


def test_palette_offers_skills_and_prompt_templates(
    qtbot: QtBot, tmp_path: Path, qloop: asyncio.AbstractEventLoop
) -> None:
    skill = agent_dir() / "skills" / "release-notes"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        "---\nname: release-notes\ndescription: Write release notes.\n---\nSummarise.\n"
    )
    prompts = agent_dir() / "prompts"
    prompts.mkdir(parents=True)
    (prompts / "review.md").write_text("---\ndescription: Review the diff\n---\nReview $@\n")
    project = tmp_path / "p"
    project.mkdir()
    window = MainWindow(QSettings(str(tmp_path / "w.ini"), QSettings.Format.IniFormat), load_theme("light"))
    qtbot.addWidget(window)
    notifications = NotificationCenter(window)
    ctl = SessionController(window, notifications, str(project), agent_dir(), approve=False, env={})
    ctl.spawn(ctl.open_session(None))
    qtbot.waitUntil(lambda: ctl.runtime is not None, timeout=10_000)
    palette = ctl.dialogs.show_palette()
    qtbot.addWidget(palette)
    by_title = {i.title: i for i in palette.model.items}
    assert by_title["/skill:release-notes"].kind == "skill"
    assert by_title["/review"].kind == "prompt" and by_title["/review"].detail == "Review the diff"
    qtbot.keyClicks(palette.query, "release")
    assert palette.current_item is not None and palette.current_item.title == "/skill:release-notes"
    qtbot.keyClick(palette.query, Qt.Key.Key_Return)
    assert ctl.chat.composer.toPlainText() == "/skill:release-notes "
    done = qloop.create_task(ctl.shutdown())
    qtbot.waitUntil(done.done, timeout=10_000)
    notifications.close_all()


def test_enable_skill_commands_false_hides_skills_from_completion_and_palette(
    qtbot: QtBot, controller: SessionController, server: LoopbackServer
) -> None:
    skill = agent_dir() / "skills" / "release-notes"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        "---\nname: release-notes\ndescription: Write release notes.\n---\nSummarise.\n"
    )
    (agent_dir() / "prompts").mkdir(parents=True)
    (agent_dir() / "prompts" / "review.md").write_text("---\ndescription: Review the diff\n---\nReview $@\n")
    settings = agent_dir() / "settings.json"

    def reopen(enabled: bool) -> None:
        data = json.loads(settings.read_text())
        settings.write_text(json.dumps({**data, "enableSkillCommands": enabled}))
        before = controller.runtime
        controller.reload()
        qtbot.waitUntil(lambda: controller.runtime not in (None, before), timeout=10_000)

    def popup_rows(typed: str) -> list[str]:
        composer = controller.chat.composer
        controller.window.activateWindow()
        composer.setFocus()
        qtbot.waitUntil(composer.hasFocus)
        composer.clear()
        qtbot.keyClicks(composer, typed)
        popup = next(w for w in QApplication.topLevelWidgets() if w.objectName() == "commandCompleter")
        rows = []
        if popup.isVisible():
            model = popup.model()
            rows = [str(model.index(row, 0).data()) for row in range(model.rowCount())]
        composer.clear()
        return rows

    def palette_titles() -> set[str]:
        palette = controller.dialogs.show_palette()
        qtbot.addWidget(palette)
        titles = {item.title for item in palette.model.items}
        palette.close()
        return titles

    reopen(False)
    words = controller.chat.composer.completion_words()
    assert "/review" in words and not any(w.startswith("/skill:") for w in words)
    assert popup_rows("/ski") == []  # nothing to offer: no popup at all
    assert "/review" in palette_titles() and "/skill:release-notes" not in palette_titles()
    # Typed by hand it still runs the skill, as in Pi.
    server.script(Turn([Text("notes")]))
    _type(controller, "/skill:release-notes for 1.2")
    qtbot.waitUntil(lambda: len(server.requests) == 1 and not controller.chat.busy, timeout=10_000)
    sent = server.requests[0].body["messages"][-1]["content"][0]["text"]
    assert sent.startswith('<skill name="release-notes"') and sent.endswith("\n\nfor 1.2")

    reopen(True)
    assert popup_rows("/ski") == ["/skill:", "/skill:release-notes"]
    assert "/skill:release-notes" in palette_titles()


def test_commands_that_open_windows_and_fork(
    qtbot: QtBot, controller: SessionController, server: LoopbackServer
) -> None:
    from PySide6.QtWidgets import QWidget

    from piwork.gui.search.search_dialog import SearchDialog
    from piwork.gui.sessions.session_browser import SessionBrowser
    from piwork.gui.settings.settings_dialog import SettingsDialog
    from piwork.gui.trust_dialog import TrustDialog

    ctl = controller
    for command, kind in (
        ("/resume", SessionBrowser),
        ("/settings", SettingsDialog),
        ("/trust", TrustDialog),
    ):
        _type(ctl, command)

        def shown(kind: type = kind) -> list[QWidget]:
            return [w for w in QApplication.topLevelWidgets() if isinstance(w, kind) and w.isVisible()]

        qtbot.waitUntil(lambda: bool(shown()))  # /trust reads trust.json in a worker first
        opened = shown()
        assert opened, command
        for widget in opened:
            widget.close()
    _type(ctl, "/search linker")
    search = next(w for w in QApplication.topLevelWidgets() if isinstance(w, SearchDialog) and w.isVisible())
    assert search.query.text() == "linker"
    search.close()

    _reply(qtbot, ctl, server, "Forkable.")
    original = ctl.runtime.store.path  # type: ignore[union-attr]

    _type(ctl, "/fork")
    qtbot.waitUntil(lambda: QApplication.activeModalWidget() is not None)  # the choices are read in a worker
    dialog = QApplication.activeModalWidget()
    assert dialog is not None
    dialog.accept()  # the first choice: the latest message of yours
    qtbot.waitUntil(lambda: ctl.runtime is not None and ctl.runtime.store.path != original, timeout=10_000)
    assert ctl.chat.composer.toPlainText() == "hello there"  # the forked message, to edit and send again

    _type(ctl, "/quit")
    assert not ctl.window.isVisible()


def _run_in_palette(qtbot: QtBot, ctl: SessionController, query: str, title: str) -> None:
    palette = ctl.dialogs.show_palette()
    qtbot.addWidget(palette)
    qtbot.keyClicks(palette.query, query)
    assert palette.current_item is not None and palette.current_item.title == title, query
    qtbot.keyClick(palette.query, Qt.Key.Key_Return)


def test_palette_reaches_the_branch_graph_compare_and_files_touched(
    qtbot: QtBot, controller: SessionController, server: LoopbackServer
) -> None:
    from piwork.gui.tree.compare_dialog import CompareDialog
    from piwork.gui.tree.files_dialog import FilesTouchedDialog

    ctl = controller
    _reply(qtbot, ctl, server, "First answer.")
    _reply(qtbot, ctl, server, "Second answer.")
    panel = ctl.window.tree_panel
    ctl.window.docks["tree"].hide()

    _run_in_palette(qtbot, ctl, "graph", "Branch Graph")
    assert ctl.window.docks["tree"].isVisible()
    assert panel.views.currentWidget() is panel.graph

    tools = panel.branch_tools
    _run_in_palette(qtbot, ctl, "files touched", "Files Touched…")
    qtbot.waitUntil(lambda: any(isinstance(d, FilesTouchedDialog) for d in tools.dialogs), timeout=10_000)

    assert panel.tree is not None
    first_user = next(r.id for r in panel.tree.records if r.role == "user")
    assert panel.select_entry(first_user)
    _run_in_palette(qtbot, ctl, "compare", "Compare Branches…")
    qtbot.waitUntil(lambda: any(isinstance(d, CompareDialog) for d in tools.dialogs), timeout=10_000)
    for dialog in list(tools.dialogs):
        dialog.close()

    _run_in_palette(qtbot, ctl, "theme", "Dark Palette")
