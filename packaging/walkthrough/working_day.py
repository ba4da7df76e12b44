"""Working-day walk-through: open a folder from the menu, work with a model, quit, reopen the next morning
(the same session, the same palette), select and copy text across two answers and a code block, and retry
a reply that failed — with a screenshot of every step.

The two halves of the day are two processes, so "quit and reopen" is a real quit: the first runs the window
at 1000×700 in the light palette and switches to the dark one before quitting; the second starts the window
at 1600×1000 and must find the session and the palette as they were left. Both drive the real window on a
real X display (Xvfb + openbox, started here unless ``--display`` names one already running) and the test
suite's loopback model server (an OpenAI-compatible server on 127.0.0.1), so no network or key is needed.
Run from the repository root::

    PYTHONPATH=. python packaging/walkthrough/working_day.py --out docs/screenshots

Screenshots are whole-screen captures named ``working-day-<step>.png``. The script exits non-zero, naming
the step, when the window does not reach the state a step expects.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # its sibling, first_run (not an installed package)

from first_run import StepFailed, capture, settle, wait_for, x_display

SCREEN = "1680x1080x24"
MODEL = "local-coder"
CONFIG = "[project]\nname = 'release-notes'\nversion = '1.4.0'\n"
CODE = "import tomllib\n\nwith open('pyproject.toml', 'rb') as f:\n    config = tomllib.load(f)\n"
FIRST_ANSWER = (
    "Read it with the standard library's `tomllib`:\n\n```python\n"
    + CODE
    + "```\n\nThen `config['project']['version']` is the version."
)
SECOND_ANSWER = "Write it back with a TOML writer such as `tomli-w`; `tomllib` only reads."


def prepare(base: Path) -> tuple[Path, Path, Path]:
    """An agent folder that knows one local model, a home folder to start in, and the project."""
    agent, home, project = base / "agent", base / "home", base / "release-notes"
    for folder in (agent, home, project):
        folder.mkdir()
    (agent / "settings.json").write_text(json.dumps({"defaultProvider": MODEL, "defaultModel": MODEL}))
    (project / "pyproject.toml").write_text(CONFIG)
    return agent, home, project


def point_models_at(agent: Path, url: str) -> None:
    """models.json naming the loopback server of this process (its port changes between the halves)."""
    models = {
        "providers": {
            MODEL: {
                "name": "Local coder",
                "baseUrl": url,
                "api": "openai-completions",
                "models": [{"id": MODEL}],
            }
        }
    }
    (agent / "models.json").write_text(json.dumps(models))


def rows(controller: object) -> list[object]:
    model = controller.chat.model  # type: ignore[attr-defined]
    return [model.row_at(i) for i in range(model.rowCount())]


def visible_row(controller: object, predicate: object) -> int:
    for i, row in enumerate(rows(controller)):
        if predicate(row):  # type: ignore[operator]
            return i
    raise StepFailed("a row the step needs is not in the chat")


async def first_half(display: str, out: Path, base: Path) -> None:
    from PySide6.QtCore import Qt
    from PySide6.QtTest import QTest
    from PySide6.QtWidgets import QApplication, QFileDialog, QLineEdit

    from piwork.gui.app import WindowOptions, build_window
    from piwork.gui.session_controller import SessionController
    from tests.support import LoopbackServer, Text, Turn

    agent, home, project = base / "agent", base / "home", base / "release-notes"
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    window, _themes, notifications = build_window(app, WindowOptions(cwd=str(home)))
    notifications.install(asyncio.get_running_loop())
    with LoopbackServer(model=MODEL) as server:
        point_models_at(agent, server.openai_url)
        controller = SessionController(window, notifications, str(home), agent)
        window.restore_layout()
        window.resize(1000, 700)
        window.move(30, 30)
        window.show()
        print("1. piwork starts in the home folder")
        controller.spawn(controller.open_session(None))
        await wait_for("the window to open in the home folder", lambda: controller.runtime is not None)
        await settle()
        capture(display, out / "working-day-1-start.png")

        print("2. File → Open Folder… picks the project")
        window.action_map["open_folder"].trigger()
        await wait_for(
            "the folder dialog",
            lambda: any(isinstance(w, QFileDialog) and w.isVisible() for w in QApplication.topLevelWidgets()),
        )
        dialog = next(
            w for w in QApplication.topLevelWidgets() if isinstance(w, QFileDialog) and w.isVisible()
        )
        dialog.setDirectory(str(base))
        name_field = dialog.findChild(QLineEdit, "fileNameEdit")
        if name_field is None:
            raise StepFailed("the folder dialog has no name field")
        name_field.setFocus()
        QTest.keyClicks(name_field, project.name)
        await settle()
        capture(display, out / "working-day-2-open-folder.png")
        QTest.keyClick(name_field, Qt.Key.Key_Return)
        await wait_for(
            "the project to open, named in the title",
            lambda: (
                controller.cwd == str(project)
                and controller.runtime is not None
                and "release-notes" in str(controller.runtime.store.path)
                and "release-notes" in window.windowTitle()
            ),
        )

        print("3. two questions, two answers (one with a code block)")
        server.script(Turn([Text(FIRST_ANSWER)]), Turn([Text(SECOND_ANSWER)]))
        for prompt, answer in (
            ("How do I read the version from pyproject.toml?", FIRST_ANSWER),
            ("And write it back?", SECOND_ANSWER),
        ):
            controller.submit(prompt)
            await wait_for(
                "the answer",
                lambda answer=answer: any(getattr(r, "text", "") == answer for r in rows(controller)),
                timeout=30,
            )
            await wait_for("the reply to end", lambda: not controller.chat.busy, timeout=30)
        await settle(1.0)
        capture(display, out / "working-day-3-answers.png")

        print("4. View → Dark Palette, then quit")
        window.action_map["toggle_theme"].trigger()
        await settle(1.0)
        capture(display, out / "working-day-4-dark.png")
        session_file = (
            str(controller.runtime.store.path) if controller.runtime else None
        )  # what the next start reopens
        if session_file is None:
            raise StepFailed("the session was not written")
        (base / "session-file.txt").write_text(session_file)
        await controller.shutdown()
        window.save_layout()
        notifications.uninstall()
        window.close()
        controller.close_session_file()


async def second_half(display: str, out: Path, base: Path) -> None:
    from PySide6.QtCore import QPoint, Qt, QTimer
    from PySide6.QtGui import QContextMenuEvent, QGuiApplication
    from PySide6.QtTest import QTest
    from PySide6.QtWidgets import QApplication, QMenu

    from piwork.gui.app import WindowOptions, build_window
    from piwork.gui.chat.rows import FAILED_TITLE
    from piwork.gui.session_controller import SessionController
    from tests.gui.chat.selection_support import char_pos, drag
    from tests.support import Failure, LoopbackServer, Text, Turn

    agent, project = base / "agent", base / "release-notes"
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    window, themes, notifications = build_window(app, WindowOptions(cwd=str(project)))
    notifications.install(asyncio.get_running_loop())
    with LoopbackServer(model=MODEL) as server:
        point_models_at(agent, server.openai_url)
        controller = SessionController(window, notifications, str(project), agent)
        window.restore_layout()
        window.resize(1600, 1000)
        window.move(30, 30)
        window.show()
        print("5. the next morning: the same project, session and palette")
        controller.spawn(controller.open_session(None, most_recent=window.reopens_last_session()))
        await wait_for("the session to reopen", lambda: controller.runtime is not None)
        await wait_for(
            "its answers", lambda: any(SECOND_ANSWER in getattr(r, "text", "") for r in rows(controller))
        )
        expected = (base / "session-file.txt").read_text()
        opened = str(controller.runtime.store.path) if controller.runtime else None
        if opened != expected:
            raise StepFailed(f"another session opened: {opened} (not {expected})")
        if themes.theme.name != "dark":
            raise StepFailed(f"the palette was not kept: {themes.theme.name}")
        await settle(1.0)
        capture(display, out / "working-day-5-reopened.png")

        print("6. select from the first answer into the second, Ctrl+C")
        view = controller.chat.view
        view.scrollToBottom()
        await settle()
        first = visible_row(controller, lambda r: getattr(r, "text", "").startswith("Read it with"))
        second = visible_row(controller, lambda r: getattr(r, "text", "") == SECOND_ANSWER)
        start = char_pos(view, first, len("Read it with the "))
        end = char_pos(view, second, len("Write it back with a TOML writer"))
        drag(view, start, end, steps=8)
        view.setFocus()
        QTest.keyClick(view, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
        await wait_for(
            "the selection on the clipboard",
            lambda: (
                QGuiApplication.clipboard().text().startswith("standard library")
                and QGuiApplication.clipboard().text().endswith("Write it back with a TOML writer")
            ),
        )
        await settle()
        capture(display, out / "working-day-6-selection.png")

        print("7. the code block's Copy button")
        QTest.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(4, 4))  # clears the selection
        buttons = view.chat_delegate.copy_buttons
        row = rows(controller)[first]
        targets = buttons.targets(row, view.visualRect(controller.chat.model.index(first)))
        if not targets:
            raise StepFailed("the answer's code block has no Copy button")
        QTest.mouseMove(view.viewport(), targets[0].area.center())
        await wait_for("the button to show", lambda: buttons.hovered is not None)
        button = buttons.button(targets[0], row)
        QTest.mouseMove(view.viewport(), button.center())
        QTest.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=button.center())
        if QGuiApplication.clipboard().text() != CODE.rstrip("\n"):  # the block, without its last newline
            raise StepFailed(f"the Copy button copied {QGuiApplication.clipboard().text()!r}")
        await settle(0.3)
        capture(display, out / "working-day-7-code-copied.png")

        print("8. a reply fails; Retry from its row")
        server.script(Turn(failure=Failure.http(400, '{"error": {"message": "the server was restarting"}}')))
        controller.submit("Add a changelog entry for 1.4.0.")
        await wait_for(
            "the failure", lambda: any(r.title == FAILED_TITLE for r in rows(controller)), timeout=30
        )
        await wait_for("the reply to end", lambda: not controller.chat.busy)
        view.scrollToBottom()
        await settle()
        failed = visible_row(controller, lambda r: r.title == FAILED_TITLE)
        server.script(Turn([Text("Added `## 1.4.0` to CHANGELOG.md with the version bump.")]))
        where = view.visualRect(controller.chat.model.index(failed)).center()

        def open_menu() -> None:  # a right click: the menu runs its own event loop, as for a person
            QApplication.sendEvent(
                view.viewport(),
                QContextMenuEvent(QContextMenuEvent.Reason.Mouse, where, view.viewport().mapToGlobal(where)),
            )

        QTimer.singleShot(0, open_menu)
        await wait_for("the row's menu", lambda: isinstance(QApplication.activePopupWidget(), QMenu))
        menu = QApplication.activePopupWidget()
        assert isinstance(menu, QMenu)
        await settle(0.5)
        capture(display, out / "working-day-8-retry-menu.png")
        retry = next((a for a in menu.actions() if a.text() == "Retry"), None)
        if retry is None:
            raise StepFailed("the failed reply's menu has no Retry")
        retry.trigger()
        menu.close()
        await wait_for(
            "the retried answer",
            lambda: any("CHANGELOG.md" in getattr(r, "text", "") for r in rows(controller)),
            timeout=30,
        )
        await wait_for("the reply to end", lambda: not controller.chat.busy)
        await settle(1.0)
        capture(display, out / "working-day-9-retried.png")
        await controller.shutdown()
        window.save_layout()
        notifications.uninstall()
        window.close()
        controller.close_session_file()


def run_half(half: str, display: str, out: Path, base: Path) -> int:
    """One half of the day in this process: the window, its steps, and quitting."""
    agent = base / "agent"
    os.environ.update(
        {
            "DISPLAY": display,
            "QT_QPA_PLATFORM": "xcb",
            "HOME": str(base / "home"),
            "PI_CODING_AGENT_DIR": str(agent),
            "PIWORK_CONFIG_DIR": str(base / "config"),
            "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring",  # never the real keyring
        }
    )
    os.environ.pop("PIWORK_THEME", None)  # the palette is the window's own choice, kept between runs
    from piwork.gui import compat
    from piwork.gui.app import create_application

    app = create_application(["piwork"])
    failure: list[str] = []
    walk = first_half if half == "first" else second_half

    async def run(_quit: asyncio.Event) -> int:
        try:
            await walk(display, out, base)
        except StepFailed as err:
            failure.append(str(err))
        app.quit()
        return 0

    compat.run_until_quit(app, run)
    if failure:
        print(f"working_day: FAILED: {failure[0]}", file=sys.stderr)
        return 1
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--display", default=":15", help="X display to use (default :15)")
    parser.add_argument("--use-running-display", action="store_true", help="do not start Xvfb and openbox")
    parser.add_argument(
        "--out", type=Path, default=Path("docs/screenshots"), help="folder for the screenshots"
    )
    parser.add_argument("--half", choices=("first", "second"), help=argparse.SUPPRESS)
    parser.add_argument("--base", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.half:
        return run_half(args.half, args.display, args.out.resolve(), args.base)
    for tool in ("import",) + (() if args.use_running_display else ("Xvfb", "openbox", "xdpyinfo")):
        if shutil.which(tool) is None:
            print(
                f"working_day: {tool} is missing (apt-get install xvfb openbox x11-utils imagemagick)",
                file=sys.stderr,
            )
            return 2
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="piwork-working-day-") as tmp:
        base = Path(tmp)
        prepare(base)
        with x_display(args.display, start=not args.use_running_display, screen=SCREEN):
            for number, half in enumerate(("first", "second"), start=1):
                print(f"== {'morning: work, then quit' if number == 1 else 'next morning: reopen'}")
                done = subprocess.run(
                    [
                        sys.executable,
                        __file__,
                        "--half",
                        half,
                        "--display",
                        args.display,
                        "--out",
                        str(args.out.resolve()),
                        "--base",
                        str(base),
                    ],
                    check=False,
                )
                if done.returncode != 0:
                    return 1
    print("working_day: every step reached")
    return 0


if __name__ == "__main__":
    sys.exit(main())
