"""Search across 200 real session files from the window: results stream in off the GUI thread, say which
branch they are on, and opening one opens that session with the tree selected on the entry, abandoned
branches and entries the tree's filter hides included."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QSettings, Qt
from PySide6.QtWidgets import QProxyStyle, QStyle
from pytestqt.qtbot import QtBot

from piwork.core.paths import agent_dir
from piwork.core.session import SESSION_NAME
from piwork.core.session.format import default_session_dir
from piwork.gui.main_window import MainWindow
from piwork.gui.notifications import NotificationCenter
from piwork.gui.search.results_model import HitRole
from piwork.gui.search.search_dialog import SearchDialog
from piwork.gui.session_controller import SessionController
from piwork.gui.theme import load_theme
from tests.core.session.helpers import HEADER, stamp, write_session
from tests.support.search_sessions import two_branches


def _write(folder: Path, n: int, cwd: Path, word: str | None, abandoned: bool) -> Path:
    """Session ``n``: u1 → a1 → (u2 → t2 → r2 → a2) and (u3 → a3); ``word`` goes on one of the branches."""
    side = word if abandoned and word else "nothing special"
    main = word if not abandoned and word else "all good"
    entries = two_branches(
        f"session {n}: why does the build fail?",
        f"try the {side} approach",
        f"grep -rn {side} src/",
        f"src/config.py:12: FLAG = '{side}'",
        "That flag is set in config.py.",
        f"check the linker for {main}",
    )
    header = {**HEADER, "id": f"{n:08x}-0000-7000-8000-000000000000", "cwd": str(cwd)}
    return write_session(folder / f"2024-12-03T14-00-{n:04d}_{header['id']}.jsonl", entries, header)


@pytest.fixture
def sessions(tmp_path: Path) -> tuple[Path, dict[str, Path]]:
    project = tmp_path / "project"
    project.mkdir()
    folder = default_session_dir(str(project), agent_dir())
    folder.mkdir(parents=True)
    marked: dict[str, Path] = {}
    for n in range(200):
        if n in (17, 88, 150):
            marked[f"abandoned{n}"] = _write(folder, n, project, "zebra", abandoned=True)
        elif n == 120:
            marked["active"] = _write(folder, n, project, "zebra", abandoned=False)
        else:
            _write(folder, n, project, None, abandoned=False)
    return project, marked


@pytest.fixture
def controller(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, tmp_path: Path, sessions: tuple[Path, dict[str, Path]]
) -> Iterator[SessionController]:
    project, _marked = sessions
    window = MainWindow(QSettings(str(tmp_path / "w.ini"), QSettings.Format.IniFormat), load_theme("light"))
    qtbot.addWidget(window)
    window.show()
    notifications = NotificationCenter(window)
    ctl = SessionController(window, notifications, str(project), agent_dir(), approve=False, env={})
    ctl.spawn(ctl.open_session(None))
    qtbot.waitUntil(lambda: ctl.runtime is not None, timeout=10_000)
    yield ctl
    done = qloop.create_task(ctl.shutdown())
    qtbot.waitUntil(done.done, timeout=10_000)
    notifications.close_all()


def _search(qtbot: QtBot, dialog: SearchDialog, text: str) -> None:
    with qtbot.waitSignal(
        dialog.search.finished, timeout=20_000, check_params_cb=lambda g: g == dialog._running
    ):
        dialog.set_query(text)


def test_results_name_their_branch_and_open_on_the_entry(
    qtbot: QtBot, controller: SessionController, sessions: tuple[Path, dict[str, Path]]
) -> None:
    _project, marked = sessions
    dialog = controller.dialogs.show_search()
    qtbot.addWidget(dialog)
    _search(qtbot, dialog, "zebra")
    model = dialog.model
    found = {Path(s.path).name: s for s in model.sessions}
    assert set(found) == {p.name for p in marked.values()}
    abandoned = found[marked["abandoned88"].name]
    assert [h.entry_id for h in abandoned.hits] == ["u2", "t2", "r2"]
    assert all(not h.on_active_path and h.branch_point == "a1" for h in abandoned.hits)
    active = found[marked["active"].name]
    assert [(h.entry_id, h.on_active_path) for h in active.hits] == [("u3", True)]
    assert "results in 4 sessions" in dialog.status.text() or "12 results" in dialog.status.text()

    # Open the tool-call turn of an abandoned branch: the tree never lists a turn that only calls
    # tools (its result stands for it), so the selection lands on that result.
    row = next(i for i, s in enumerate(model.sessions) if s.path == marked["abandoned88"])
    parent = model.index(row, 0)
    # the branch is named as the tree shows it (its first prompt here), not by the id it leaves from
    assert model.index(0, 0, parent).data().startswith("user · abandoned branch “try the zebra approach”: ")
    target = next(
        model.index(i, 0, parent)
        for i in range(model.rowCount(parent))
        if model.index(i, 0, parent).data(HitRole).entry_id == "t2"
    )
    dialog.view.setCurrentIndex(target)
    dialog.open_index(target)
    tree = controller.window.tree_panel
    qtbot.waitUntil(
        lambda: (
            controller.runtime is not None
            and controller.runtime.store.path == marked["abandoned88"]
            and tree.current_entry_id() == "r2"
        ),
        timeout=10_000,
    )
    assert controller.window.docks["tree"].isVisible()
    assert controller.session is not None
    assert [r.id for r in controller.session.tree.path()][:3] == ["u1", "a1", "u3"]  # nothing moved

    # A user message on another abandoned branch is shown by the default filter.
    other = next(i for i, s in enumerate(model.sessions) if s.path == marked["abandoned17"])
    dialog.open_index(model.index(0, 0, model.index(other, 0)))
    qtbot.waitUntil(
        lambda: (
            controller.runtime is not None
            and controller.runtime.store.path == marked["abandoned17"]
            and tree.current_entry_id() == "u2"
        ),
        timeout=10_000,
    )


def test_a_new_query_cancels_the_old_search(
    qtbot: QtBot, controller: SessionController, sessions: tuple[Path, dict[str, Path]]
) -> None:
    dialog = controller.dialogs.show_search()
    qtbot.addWidget(dialog)
    dialog.set_query("session")  # matches all 200 files
    _search(qtbot, dialog, "linker zebra")
    assert [s.path for s in dialog.model.sessions] == [sessions[1]["active"]]
    qtbot.waitUntil(lambda: not dialog.search.running, timeout=10_000)  # the old search's worker stopped
    assert [s.path for s in dialog.model.sessions] == [sessions[1]["active"]]  # nothing late from "session"


def test_all_projects_scope_and_nothing_found(
    qtbot: QtBot, controller: SessionController, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    folder = default_session_dir(str(elsewhere), agent_dir())
    folder.mkdir(parents=True)
    other = _write(folder, 999, elsewhere, "okapi", abandoned=True)
    dialog = controller.dialogs.show_search()
    qtbot.addWidget(dialog)
    _search(qtbot, dialog, "okapi")
    assert dialog.model.sessions == [] and dialog.status.text() == "Nothing found."
    with qtbot.waitSignal(dialog.search.finished, timeout=20_000):
        dialog.scope.setCurrentIndex(1)
    assert [s.path for s in dialog.model.sessions] == [other]
    assert str(elsewhere) in dialog.model.index(0, 0).data()


def test_a_session_is_found_by_its_name_and_opens_as_it_is(
    qtbot: QtBot, controller: SessionController, sessions: tuple[Path, dict[str, Path]]
) -> None:
    project, _marked = sessions
    folder = default_session_dir(str(project), agent_dir())
    header = {**HEADER, "id": "0000abcd-0000-7000-8000-000000000000", "cwd": str(project)}
    entries = [
        *two_branches("why?", "try this", "ls", "nothing", "no", "try that"),
        {
            "type": "session_info",
            "id": "n1",
            "parentId": "a3",
            "timestamp": stamp(9),
            "name": "Quokka release",
        },
    ]
    named = write_session(folder / f"2024-12-03T15-00-00_{header['id']}.jsonl", entries, header)
    dialog = controller.dialogs.show_search()
    qtbot.addWidget(dialog)
    _search(qtbot, dialog, "quokka")  # no message says it: only the name
    model = dialog.model
    assert [s.path for s in model.sessions] == [named]
    session_row = model.index(0, 0)
    assert session_row.data() == "Quokka release (1 match)"
    hit_row = model.index(0, 0, session_row)
    assert hit_row.data(HitRole).kind == SESSION_NAME
    assert hit_row.data() == "session name: Quokka release"
    assert dialog.status.text() == "1 result in 1 session"

    dialog.view.setCurrentIndex(hit_row)
    dialog.open_index(hit_row)
    qtbot.waitUntil(
        lambda: controller.runtime is not None and controller.runtime.store.path == named, timeout=10_000
    )
    assert controller.session is not None
    # Opened as it is: on its active branch, not moved to the session_info entry.
    assert [r.id for r in controller.session.tree.path()][:5] == ["u1", "a1", "u3", "a3", "n1"]


def test_closing_the_dialog_stops_its_search_and_nothing_arrives_later(
    qtbot: QtBot, controller: SessionController, sessions: tuple[Path, dict[str, Path]]
) -> None:
    dialog = controller.dialogs.show_search()
    qtbot.addWidget(dialog)
    heard: list[object] = []
    dialog.search.found.connect(lambda *args: heard.append(args))
    dialog.search.finished.connect(heard.append)
    dialog.set_query("session")  # matches all 200 files
    assert dialog.search.running
    dialog.reject()
    qtbot.waitUntil(lambda: not dialog.search.running, timeout=10_000)  # the worker stopped early
    assert heard == []


class _ClickActivates(QProxyStyle):
    """A style that activates an item on a single click (as some desktops' styles do)."""

    def styleHint(self, hint: QStyle.StyleHint, *args: Any) -> int:
        if hint == QStyle.StyleHint.SH_ItemView_ActivateItemOnSingleClick:
            return 1
        return super().styleHint(hint, *args)


def test_looking_at_a_result_leaves_the_tree_alone_and_only_opening_moves_it(
    qtbot: QtBot, controller: SessionController, sessions: tuple[Path, dict[str, Path]]
) -> None:
    _project, marked = sessions
    target_file = marked["abandoned88"]
    controller.spawn(controller.open_at(str(target_file), None))
    tree = controller.window.tree_panel
    qtbot.waitUntil(
        lambda: controller.runtime is not None and controller.runtime.store.path == target_file,
        timeout=10_000,
    )
    qtbot.waitUntil(lambda: tree.current_entry_id() is not None, timeout=10_000)
    before = (tree.filter_mode(), tree.current_entry_id())
    dialog = controller.dialogs.show_search()
    qtbot.addWidget(dialog)
    style = _ClickActivates()
    dialog.view.setStyle(style)
    _search(qtbot, dialog, "zebra")
    model = dialog.model
    row = next(i for i, s in enumerate(model.sessions) if s.path == target_file)
    parent = model.index(row, 0)
    hit = next(
        model.index(i, 0, parent)
        for i in range(model.rowCount(parent))
        if model.index(i, 0, parent).data(HitRole).entry_id == "t2"
    )
    chosen: list[tuple[str, str]] = []
    dialog.hitChosen.connect(lambda path, entry: chosen.append((path, entry)))
    dialog.view.scrollTo(hit)
    where = dialog.view.visualRect(hit).center()
    qtbot.mouseClick(dialog.view.viewport(), Qt.MouseButton.LeftButton, pos=where)
    qtbot.keyClick(dialog.view, Qt.Key.Key_Down)  # and on to the next result
    qtbot.wait(50)  # an open would be spawned at once; give it a chance to show
    assert chosen == [] and (tree.filter_mode(), tree.current_entry_id()) == before
    qtbot.keyClick(dialog.view, Qt.Key.Key_Up)
    qtbot.mouseDClick(dialog.view.viewport(), Qt.MouseButton.LeftButton, pos=where)
    assert chosen == [(str(target_file), "t2")]
    qtbot.waitUntil(lambda: tree.current_entry_id() == "r2", timeout=10_000)
