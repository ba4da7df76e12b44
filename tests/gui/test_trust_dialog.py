"""The trust dialog answered each way, with the engine's resolver writing trust.json."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest
from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from piwork.core.resources.trust import TrustOption, TrustRequest, TrustResolver, trust_resources
from piwork.core.resources.trust_store import TrustStore
from piwork.gui.trust_dialog import TrustDialog, TrustPrompter


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "home").mkdir()
    root = tmp_path / "work" / "proj"
    (root / ".pi" / "skills" / "deploy").mkdir(parents=True)
    (root / ".pi" / "skills" / "deploy" / "SKILL.md").write_text("---\nname: deploy\n---\nShip it.\n")
    (root / ".pi" / "settings.json").write_text('{"theme": "dark"}\n')
    return root


def _store(tmp_path: Path) -> TrustStore:
    return TrustStore(tmp_path / "agent")


def _saved(tmp_path: Path) -> dict[str, object] | None:
    path = tmp_path / "agent" / "trust.json"
    return json.loads(path.read_text()) if path.exists() else None


def _answering(
    qtbot: QtBot, act: Callable[[TrustDialog], None]
) -> Callable[[TrustRequest], TrustOption | None]:
    """An asker that shows the real dialog and lets `act` click in it."""

    def ask(request: TrustRequest) -> TrustOption | None:
        dialog = TrustDialog(request)
        qtbot.addWidget(dialog)
        QTimer.singleShot(0, lambda: act(dialog))
        dialog.exec()
        return dialog.chosen

    return ask


def _click(kind: str) -> Callable[[TrustDialog], None]:
    return lambda dialog: dialog.option_buttons[kind].click()


@pytest.mark.parametrize(
    ("kind", "trusted", "saved"),
    [
        ("trust", True, {"{proj}": True}),
        ("trust-parent", True, {"{parent}": True}),
        ("trust-session", True, None),
        ("distrust", False, {"{proj}": False}),
        ("distrust-session", False, None),
    ],
)
def test_each_answer_is_written_through_the_engine(
    qtbot: QtBot, tmp_path: Path, project: Path, kind: str, trusted: bool, saved: dict[str, bool] | None
) -> None:
    resolver = TrustResolver(_store(tmp_path), ask=_answering(qtbot, _click(kind)))
    state = asyncio.run(resolver.resolve(str(project)))
    assert state.trusted is trusted
    real = os.path.realpath(project)
    expected = (
        None
        if saved is None
        else {k.format(proj=real, parent=os.path.dirname(real)): v for k, v in saved.items()}
    )
    assert _saved(tmp_path) == expected


def test_dismissing_saves_nothing_and_leaves_the_project_untrusted(
    qtbot: QtBot, tmp_path: Path, project: Path
) -> None:
    resolver = TrustResolver(_store(tmp_path), ask=_answering(qtbot, lambda dialog: dialog.reject()))
    state = asyncio.run(resolver.resolve(str(project)))
    assert (state.trusted, state.source) == (False, "dismissed")
    assert _saved(tmp_path) is None


def _review_roots(dialog: TrustDialog) -> list[str]:
    model = dialog.review.model
    return [model.item(row).text() for row in range(model.rowCount())]


def _wait_listed(qtbot: QtBot, dialog: TrustDialog) -> None:
    qtbot.waitUntil(dialog.review.all_listed)
    assert "Listing files…" not in str(
        [dialog.review.file_rows(r) for r in range(dialog.review.model.rowCount())]
    )


def _read(qtbot: QtBot, dialog: TrustDialog, path: Path | str) -> None:
    with qtbot.waitSignal(dialog.review.previewShown, timeout=5000):
        assert dialog.review.select_path(str(path))


def test_dialog_names_folder_lists_resources_and_previews_them(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, tmp_path: Path, project: Path
) -> None:
    from piwork.core.resources.trust import trust_options

    seen: dict[str, object] = {}
    real = os.path.realpath(project)
    request = TrustRequest(real, tuple(trust_resources(real)), tuple(trust_options(real, True)))
    dialog = TrustDialog(request)  # on the qasync loop, as in the window: files are read in asyncio tasks
    qtbot.addWidget(dialog)
    dialog.show()
    seen["resources"] = _review_roots(dialog)
    seen["labels"] = [b.text() for b in dialog.option_buttons.values()]
    _wait_listed(qtbot, dialog)
    seen["skill_files"] = dialog.review.file_rows(1)
    _read(qtbot, dialog, f"{real}/.pi/settings.json")
    seen["settings"] = dialog.review.content.toPlainText()
    _read(qtbot, dialog, f"{real}/.pi/skills/deploy/SKILL.md")
    seen["skill_heading"] = dialog.review.heading.text()
    seen["skill_body"] = dialog.review.content.toPlainText()
    dialog.reject()
    assert seen["resources"] == ["settings: .pi/settings.json", "skills: .pi/skills"]
    assert seen["labels"] == [
        "Trust",
        f"Trust parent folder ({os.path.dirname(real)})",
        "Trust (this session only)",
        "Do not trust",
        "Do not trust (this session only)",
    ]
    assert seen["skill_files"] == ["deploy/SKILL.md"]
    assert seen["settings"] == '{"theme": "dark"}\n'
    assert 'Skill "deploy"' in str(seen["skill_heading"])
    assert seen["skill_body"] == "---\nname: deploy\n---\nShip it.\n"


def test_every_resource_that_would_load_can_be_read(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, project: Path
) -> None:
    pi = project / ".pi"
    (pi / "skills" / "deploy" / "SKILL.md").write_text(
        "---\nname: deploy\ndescription: Ship the build to production.\n---\nRun `make ship`.\n"
    )
    (pi / "skills" / "deploy" / "icon.png").write_bytes(b"\x89PNG\r\n\x1a\n\0\0" + bytes(200))
    (pi / "prompts").mkdir()
    (pi / "prompts" / "review.md").write_text("---\ndescription: Review the staged diff\n---\nReview $1\n")
    (pi / "SYSTEM.md").write_text("You are the release bot.\n")
    (pi / "APPEND_SYSTEM.md").write_text("Always run the tests.\n" * 10_000)
    (pi / "piwork-profile.json").write_text('{"language": "python"}\n')
    (pi / "mcp.json").write_text('{"mcpServers": {"docs": {"command": "docs-server"}}}\n')
    dialog = TrustDialog.for_saved_decision(str(project), _store(project.parent))
    qtbot.addWidget(dialog)
    dialog.show()
    _wait_listed(qtbot, dialog)
    real = os.path.realpath(project)
    assert _review_roots(dialog) == [
        "settings: .pi/settings.json",
        "mcp: .pi/mcp.json — not used by piwork (it runs no MCP servers yet)",
        "skills: .pi/skills",
        "prompts: .pi/prompts",
        "system: .pi/SYSTEM.md",
        "append: .pi/APPEND_SYSTEM.md",
        "profile: .pi/piwork-profile.json",
    ]
    assert dialog.review.file_rows(2) == ["deploy/SKILL.md", "deploy/icon.png"]
    assert dialog.review.file_rows(0) == []  # a file resource is its own row
    review = dialog.review
    _read(qtbot, dialog, f"{real}/.pi/mcp.json")
    assert "mcp.json — MCP servers for Pi" in review.heading.text()
    assert "piwork runs no MCP servers yet" in review.heading.text()
    assert review.content.toPlainText() == '{"mcpServers": {"docs": {"command": "docs-server"}}}\n'
    _read(qtbot, dialog, f"{real}/.pi/skills/deploy/SKILL.md")
    assert 'Skill "deploy"' in review.heading.text()
    assert "Ship the build to production." in review.heading.text()
    assert "Run `make ship`." in review.content.toPlainText()
    _read(qtbot, dialog, f"{real}/.pi/prompts/review.md")
    assert (
        "Prompt template /review" in review.heading.text()
        and "Review the staged diff" in review.heading.text()
    )
    _read(qtbot, dialog, f"{real}/.pi/SYSTEM.md")
    assert "replaces the built-in system prompt" in review.heading.text()
    assert review.content.toPlainText() == "You are the release bot.\n"
    _read(qtbot, dialog, f"{real}/.pi/APPEND_SYSTEM.md")
    assert review.note.isVisible() and review.note.text() == "Showing the first 64.0KB of 214.8KB."
    _read(qtbot, dialog, f"{real}/.pi/skills/deploy/icon.png")
    assert review.content.toPlainText() == "" and review.note.text().startswith("Binary file (")
    _read(qtbot, dialog, f"{real}/.pi/piwork-profile.json")
    assert review.content.toPlainText() == '{"language": "python"}\n'
    dialog.reject()


def test_enter_never_trusts(qtbot: QtBot, tmp_path: Path, project: Path) -> None:
    def press_enter(dialog: TrustDialog) -> None:
        assert dialog.option_buttons["distrust"].isDefault()
        assert not any(
            dialog.option_buttons[k].isDefault() for k in ("trust", "trust-parent", "trust-session")
        )
        qtbot.keyClick(dialog.focusWidget() or dialog, Qt.Key.Key_Return)

    state = asyncio.run(
        TrustResolver(_store(tmp_path), ask=_answering(qtbot, press_enter)).resolve(str(project))
    )
    assert (state.trusted, state.source) == (False, "prompt")
    assert _saved(tmp_path) == {os.path.realpath(project): False}


def test_settings_form_shows_inherited_decision_and_saves_choice(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, tmp_path: Path, project: Path
) -> None:
    store = _store(tmp_path)
    real = os.path.realpath(project)
    from piwork.core.resources.trust_store import TrustUpdate

    store.set_many([TrustUpdate(os.path.dirname(real), True)])
    dialog = TrustDialog.for_saved_decision(str(project), store)
    qtbot.addWidget(dialog)
    parent = os.path.dirname(real)
    assert dialog.saved_label.text() == f"Saved decision: trusted ({parent}) (inherited from {parent})"
    assert dialog.option_buttons["trust-parent"].font().bold()  # marked, but Enter still does not trust
    assert dialog.option_buttons["distrust"].isDefault()
    assert list(dialog.option_buttons) == [
        "trust",
        "trust-parent",
        "trust-session",
        "distrust",
        "distrust-session",
    ]
    dialog.option_buttons["distrust"].click()
    qtbot.waitUntil(lambda: dialog.chosen is not None)  # written in a worker, then chosen
    assert _saved(tmp_path) == {parent: True, real: False}
    assert dialog.chosen is not None and dialog.chosen.kind == "distrust"


def test_corrupt_store_is_reported_and_can_be_backed_up(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, tmp_path: Path, project: Path
) -> None:
    store = _store(tmp_path)
    store.path.parent.mkdir(parents=True)
    store.path.write_text("{not json")
    dialog = TrustDialog.for_saved_decision(str(project), store)
    qtbot.addWidget(dialog)
    assert "not valid JSON" in dialog.store_error_label.text()
    [reset] = [
        b
        for b in dialog.findChildren(type(dialog.option_buttons["trust"]))
        if b.text() == "Back up and reset"
    ]
    reset.click()
    qtbot.waitUntil(lambda: "was moved" in dialog.store_error_label.text())  # renamed in a worker
    backups = list(store.path.parent.glob("trust.json.corrupt-*"))
    assert len(backups) == 1 and backups[0].read_text() == "{not json"
    dialog.option_buttons["trust"].click()  # answered once the dialog's reading of the files is done
    qtbot.waitUntil(lambda: _saved(tmp_path) is not None)
    assert _saved(tmp_path) == {os.path.realpath(project): True}


def test_asking_does_not_block_the_event_loop(qtbot: QtBot, tmp_path: Path, project: Path) -> None:
    import qasync

    from piwork.core.resources.trust import trust_options, trust_resources
    from piwork.core.resources.trust_fingerprint import FingerprintStore

    request = TrustRequest(
        str(project), tuple(trust_resources(str(project))), tuple(trust_options(str(project), True))
    )
    prompter = TrustPrompter(_store(tmp_path), FingerprintStore(tmp_path / "agent"))
    loop = qasync.QEventLoop(QApplication.instance(), already_running=False)
    ticks: list[int] = []

    async def scenario() -> TrustOption | None:
        asker = asyncio.ensure_future(prompter.ask(request))
        for i in range(3):  # the loop keeps running while the dialog is open
            await asyncio.sleep(0)
            ticks.append(i)
        dialog = next(
            w for w in QApplication.topLevelWidgets() if isinstance(w, TrustDialog) and w.isVisible()
        )
        dialog.option_buttons["trust-session"].click()
        return await asker

    try:
        chosen = loop.run_until_complete(scenario())
    finally:
        loop.close()
        asyncio.set_event_loop(None)
    assert ticks == [0, 1, 2]
    assert chosen is not None and chosen.kind == "trust-session"


def _run(coroutine_factory: Callable[[], object]) -> object:
    """Run a coroutine on a qasync loop of its own (exec/exit pairs keep later Qt loops working)."""
    import qasync

    app = QApplication.instance()
    assert isinstance(app, QApplication)
    # The dialog is the only window here: closing it must not quit the loop while the answer is recorded.
    quit_on_close = app.quitOnLastWindowClosed()
    app.setQuitOnLastWindowClosed(False)
    loop = qasync.QEventLoop(app, already_running=False)
    try:
        return loop.run_until_complete(coroutine_factory())  # type: ignore[arg-type]
    finally:
        loop.close()
        asyncio.set_event_loop(None)
        app.setQuitOnLastWindowClosed(quit_on_close)


def _click_when_shown(kind: str, changed_note: list[str]) -> None:
    def poll() -> None:
        dialogs = [w for w in QApplication.topLevelWidgets() if isinstance(w, TrustDialog) and w.isVisible()]
        if not dialogs:
            QTimer.singleShot(10, poll)
            return
        labels = [label.text() for label in dialogs[0].findChildren(type(dialogs[0].saved_label))]
        changed_note.extend(t for t in labels if "changed since your last decision" in t)
        dialogs[0].option_buttons[kind].click()

    QTimer.singleShot(0, poll)


def test_changed_resources_after_a_saved_decision_ask_again(
    qtbot: QtBot, tmp_path: Path, project: Path
) -> None:
    from piwork.core.resources.trust_fingerprint import FingerprintStore

    store = _store(tmp_path)
    prompter = TrustPrompter(store, FingerprintStore(tmp_path / "agent"))
    resolver = TrustResolver(store, ask=prompter.ask)
    notes: list[str] = []
    _click_when_shown("trust", notes)
    first = _run(lambda: resolver.resolve(str(project)))
    assert first.trusted and notes == []  # type: ignore[attr-defined]
    again = asyncio.run(TrustResolver(store, ask=None).resolve(str(project)))
    assert again.source == "saved" and not prompter.needs_recheck(again)
    # The project gains an extension: the saved "trust" no longer covers what the user saw.
    (project / ".pi" / "extensions").mkdir()
    (project / ".pi" / "extensions" / "hook.ts").write_text("export default () => {}\n")
    changed = asyncio.run(TrustResolver(store, ask=None).resolve(str(project)))
    assert changed.source == "saved" and prompter.needs_recheck(changed)
    _click_when_shown("distrust", notes)
    decided = _run(lambda: prompter.recheck(changed))
    assert (decided.trusted, decided.source) == (False, "prompt")  # type: ignore[attr-defined]
    assert notes and _saved(tmp_path) == {os.path.realpath(project): False}
    latest = asyncio.run(TrustResolver(store, ask=None).resolve(str(project)))
    assert not prompter.needs_recheck(latest)  # the new answer covers the new resources


def test_a_reask_without_a_snapshot_says_so_and_shows_everything(
    qtbot: QtBot, tmp_path: Path, project: Path
) -> None:
    from piwork.core.resources.trust_fingerprint import FingerprintStore, compute_fingerprint
    from piwork.core.resources.trust_store import TrustUpdate

    store = _store(tmp_path)
    real = os.path.realpath(project)
    store.set_many([TrustUpdate(real, True)])
    fingerprints = FingerprintStore(tmp_path / "agent")  # a decision made before snapshots were kept
    fingerprints.record(real, compute_fingerprint(tuple(trust_resources(real))))
    (project / ".pi" / "settings.json").write_text('{"theme": "light"}\n')
    prompter = TrustPrompter(store, fingerprints)
    state = asyncio.run(TrustResolver(store, ask=None).resolve(str(project)))
    assert prompter.needs_recheck(state) and prompter.changes_since(real, state.resources) is None
    seen: list[str] = []

    def poll() -> None:
        dialogs = [w for w in QApplication.topLevelWidgets() if isinstance(w, TrustDialog) and w.isVisible()]
        if not dialogs:
            QTimer.singleShot(10, poll)
            return
        seen.append(dialogs[0].changes_label.text())
        seen.append(str(dialogs[0].review.tabs.count()))
        qtbot.keyClick(dialogs[0].focusWidget() or dialogs[0], Qt.Key.Key_Return)

    QTimer.singleShot(0, poll)
    decided = _run(lambda: prompter.recheck(state))
    assert "no copy of how they looked then" in seen[0] and seen[1] == "1"  # no diff tab to show
    assert (decided.trusted, decided.source) == (False, "prompt")  # type: ignore[attr-defined]
    assert _saved(tmp_path) == {real: False}
    assert prompter.snapshots.load(real) is not None  # the answer is remembered with its files now


def test_previews_never_wait_on_a_pipe_and_the_newest_selection_wins(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, project: Path
) -> None:
    skill = project / ".pi" / "skills" / "deploy"
    os.mkfifo(skill / "pipe.md")  # opening it for reading would wait for a writer forever
    many = project / ".pi" / "skills" / "bulk"
    many.mkdir()
    for n in range(300):
        (many / f"note-{n:03d}.md").write_text(f"note {n}\n" * 2000)
    dialog = TrustDialog.for_saved_decision(str(project), _store(project.parent))
    qtbot.addWidget(dialog)
    dialog.show()
    _wait_listed(qtbot, dialog)
    real = os.path.realpath(project)
    review = dialog.review
    _read(qtbot, dialog, f"{real}/.pi/skills/deploy/pipe.md")
    assert (
        "FIFO" in review.note.text()
        and review.note.text().startswith("Not read")
        and review.content.toPlainText() == ""
    )
    shown: list[str] = []
    review.previewShown.connect(shown.append)
    for n in range(0, 300, 7):  # the user runs down the list faster than files are read
        assert review.select_path(f"{real}/.pi/skills/bulk/note-{n:03d}.md")
    last = f"{real}/.pi/skills/bulk/note-294.md"
    qtbot.waitUntil(lambda: last in shown)
    assert shown == [last]  # earlier previews were cancelled, none was shown
    assert review.content.toPlainText().startswith("note 294\n")
    assert review.select_path(f"{real}/.pi/skills/deploy/SKILL.md")
    dialog.reject()  # closed with a read running: nothing reaches the dialog afterwards
    qtbot.waitUntil(lambda: not review.jobs.running)
    assert shown == [last]
