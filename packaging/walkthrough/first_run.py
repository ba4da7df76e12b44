"""First-run walk-through: from an EMPTY agent folder to a finished, tool-using answer from a local
OpenAI-compatible server configured through Settings → Providers, with a screenshot of every step.

It drives the real window on a real X display (Xvfb + openbox, started here unless ``--display`` names one
already running) and the loopback model server of the test suite, so it needs no network and no key.
Run from the repository root::

    PYTHONPATH=. python packaging/walkthrough/first_run.py --out docs/screenshots

Screenshots are whole-screen captures (``import -window root``) named ``first-run-<step>.png``; the settings
dialog is also saved on its own as ``settings.png`` (the README's settings picture). The script exits non-zero,
naming the step, when the window does not reach the state a step expects.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

SCREEN = "1280x800x24"
WINDOW_SIZE = (1000, 700)
PROMPT = "Read notes.txt and tell me what it asks for."
NOTES = "Release checklist\n- bump the version\n- write the changelog\n- tag the release\n"


class StepFailed(Exception):
    pass


@contextlib.contextmanager
def x_display(display: str, start: bool, screen: str = SCREEN) -> Iterator[None]:
    """Xvfb and openbox on ``display`` for the duration (only the processes started here are stopped)."""
    started: list[subprocess.Popen[bytes]] = []
    if start:
        xvfb = subprocess.Popen(["Xvfb", display, "-screen", "0", screen, "-nolisten", "tcp"])
        started.append(xvfb)
        for _ in range(100):
            if subprocess.run(["xdpyinfo", "-display", display], capture_output=True).returncode == 0:
                break
            time.sleep(0.05)
        else:
            raise StepFailed(f"Xvfb did not start on {display}")
        started.append(subprocess.Popen(["openbox"], env={**os.environ, "DISPLAY": display}))
        time.sleep(0.5)
    try:
        yield
    finally:
        for process in reversed(started):
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                process.kill()


def capture(display: str, path: Path) -> None:
    subprocess.run(["import", "-display", display, "-window", "root", str(path)], check=True)
    print(f"  saved {path}")


async def wait_for(what: str, condition: Callable[[], bool], timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise StepFailed(f"timed out waiting for: {what}")
        await asyncio.sleep(0.05)


async def settle(seconds: float = 0.6) -> None:
    """Let the window paint (and openbox map it) before a capture."""
    await asyncio.sleep(seconds)


def prepare(base: Path) -> tuple[Path, Path]:
    agent = base / "agent"
    agent.mkdir()  # empty: no models.json, no settings, no keys
    project = base / "release-notes"
    project.mkdir()
    (project / "notes.txt").write_text(NOTES)
    return agent, project


async def walk(display: str, out: Path, project: Path) -> None:
    from PySide6.QtCore import Qt
    from PySide6.QtTest import QTest
    from PySide6.QtWidgets import QApplication

    from piwork.gui.app import WindowOptions, build_window
    from piwork.gui.session_controller import SessionController
    from piwork.gui.settings.settings_dialog import SettingsDialog
    from tests.support import LoopbackServer, Text, ToolCall, Turn

    app = QApplication.instance()
    assert isinstance(app, QApplication)
    window, _themes, notifications = build_window(app, WindowOptions(cwd=str(project)))
    notifications.install(asyncio.get_running_loop())
    controller = SessionController(
        window, notifications, str(project), Path(os.environ["PI_CODING_AGENT_DIR"])
    )
    window.resize(*WINDOW_SIZE)
    window.move(40, 30)
    window.show()
    controller.spawn(controller.open_session(None))
    chat = window.chat
    with LoopbackServer(model="local-coder") as server:
        server.script(
            Turn([Text("Let me read it."), ToolCall("read", {"path": "notes.txt"})]),
            Turn(
                [
                    Text(
                        "`notes.txt` is a **release checklist**. It asks for three things:\n\n"
                        "1. bump the version\n2. write the changelog\n3. tag the release"
                    )
                ]
            ),
        )
        print("1. first launch with an empty agent folder")
        await wait_for("the session to open", lambda: controller.runtime is not None)
        await wait_for("the empty state", chat.empty_state.isVisible)
        await settle()
        capture(display, out / "first-run-1-no-model.png")

        print("2. a message typed before a model exists stays in the editor")
        chat.composer.setFocus()
        QTest.keyClicks(chat.composer, PROMPT)
        QTest.keyClick(chat.composer, Qt.Key.Key_Return)
        if chat.composer.toPlainText() != PROMPT:
            raise StepFailed("the typed message left the editor")
        await settle()
        capture(display, out / "first-run-2-message-kept.png")

        print("3. Add a local server from the empty state; Test Connection lists its models")
        QTest.mouseClick(chat.empty_state.server_button, Qt.MouseButton.LeftButton)
        dialog = window.findChild(SettingsDialog, "settingsDialog")
        if dialog is None:
            raise StepFailed("the settings dialog did not open")
        editor = dialog.providers_page.server_dialog
        if editor is None:
            raise StepFailed("the server dialog did not open")
        QTest.keyClicks(editor.name_edit, "Local coder")
        editor.url_edit.clear()
        QTest.keyClicks(editor.url_edit, server.openai_url)
        QTest.mouseClick(editor.test_button, Qt.MouseButton.LeftButton)
        await wait_for("the model list", lambda: editor.checked_models() == ["local-coder"])
        await settle()
        capture(display, out / "first-run-3-add-server.png")

        print("4. saved: the provider is listed, no key needed on this computer")
        QTest.mouseClick(editor.buttons.button(editor.buttons.StandardButton.Save), Qt.MouseButton.LeftButton)
        await wait_for(
            "the model to be chosen",
            lambda: chat.footer.model_picker.current_key() == ("local-coder", "local-coder"),
        )
        await settle()
        capture(display, out / "first-run-4-provider-saved.png")
        dialog.grab().save(str(out / "settings.png"))
        print(f"  saved {out / 'settings.png'}")
        dialog.close()

        print("5. the kept message is sent: the model reads a file and answers")
        await wait_for("the empty state to go", lambda: not chat.empty_state.isVisible())
        chat.composer.setFocus()
        QTest.keyClick(chat.composer, Qt.Key.Key_Return)
        await wait_for("the answer", lambda: server.pending == 0 and not chat.busy, timeout=30)
        await settle(1.0)
        capture(display, out / "first-run-5-answer.png")

        print("6. every panel open at 1000x700")
        for dock in window.docks.values():
            dock.show()
        await settle(1.0)
        capture(display, out / "first-run-6-all-panels.png")
        if window.width() > WINDOW_SIZE[0] + 2 or window.height() > WINDOW_SIZE[1] + 2:
            raise StepFailed(f"opening every panel grew the window to {window.width()}x{window.height()}")

    await controller.shutdown()
    notifications.uninstall()
    window.close()


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--display", default=":14", help="X display to use (default :14)")
    parser.add_argument("--use-running-display", action="store_true", help="do not start Xvfb and openbox")
    parser.add_argument(
        "--out", type=Path, default=Path("docs/screenshots"), help="folder for the screenshots"
    )
    args = parser.parse_args()
    for tool in ("import",) + (() if args.use_running_display else ("Xvfb", "openbox", "xdpyinfo")):
        if shutil.which(tool) is None:
            print(
                f"first_run: {tool} is missing (apt-get install xvfb openbox x11-utils imagemagick)",
                file=sys.stderr,
            )
            return 2
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="piwork-first-run-") as tmp:
        agent, project = prepare(Path(tmp))
        os.environ.update(
            {
                "DISPLAY": args.display,
                "QT_QPA_PLATFORM": "xcb",
                "PI_CODING_AGENT_DIR": str(agent),
                "PIWORK_CONFIG_DIR": str(Path(tmp) / "config"),
                "PIWORK_THEME": "light",
                "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring",  # never the real keyring
            }
        )
        for name in list(os.environ):
            if name.endswith("_API_KEY"):
                del os.environ[name]  # a first run: no key anywhere
        with x_display(args.display, start=not args.use_running_display):
            from piwork.gui import compat
            from piwork.gui.app import create_application

            app = create_application(["piwork"])
            failure: list[str] = []

            async def run(_quit: asyncio.Event) -> int:
                try:
                    await walk(args.display, args.out, project)
                except StepFailed as err:
                    failure.append(str(err))
                app.quit()
                return 0

            compat.run_until_quit(app, run)
    if failure:
        print(f"first_run: FAILED: {failure[0]}", file=sys.stderr)
        return 1
    print("first_run: every step reached")
    return 0


if __name__ == "__main__":
    sys.exit(main())
