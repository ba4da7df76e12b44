"""What the window has imported of the engine when it paints its first frame: only the few small modules its
widgets read as they are made (constants, names, the error type its handlers catch). The session's engine
(the tree, its layout and the graph's model, the listing, messages, usage, JSON) loads in a worker after the
first frame, with the session's parts (``piwork.gui.app.load_session_parts``).

Checked in a real ``piwork`` process on an empty project: a test process has imported half the world already.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

# Each with what the first frame reads of it.
ENGINE_BEFORE_THE_FIRST_FRAME = {
    "piwork.core",  # the packages: their names load lazily (``piwork.core.lazy_exports``)
    "piwork.core.lazy_exports",
    "piwork.core.collector",  # the cycle collector's pause the window's modules load in (``piwork.code_cache``)
    "piwork.core.errors",  # ``PiworkError``, caught by the window's handlers
    "piwork.core.paths",  # the agent folder (recent sessions, branch tools, approval cards)
    "piwork.core.vocabulary",  # the thinking levels of the footer's picker
    "piwork.core.settings_schema",  # the tree's filter mode and the worktrees' location, by default
    "piwork.core.approvals",  # the approval modes of the footer's button
    "piwork.core.approvals.rules",
    "piwork.core.fs",  # the worktree actions' support before a project is open
    "piwork.core.fs.git_worktrees",
    "piwork.core.session",  # the graph view's fold size and folds (not the tree or its layout)
    "piwork.core.session.graph_rows",
}
# The window's own modules that come with the session's parts, not before the first frame.
WINDOW_PARTS_AFTER = (
    "piwork.gui.tree.graph_model",
    "piwork.gui.tabs.manager",
    "piwork.gui.session_controller",
)

SCRIPT = textwrap.dedent(
    """
    import json, runpy, sys
    from PySide6.QtCore import QEvent, QObject, QTimer
    from PySide6.QtWidgets import QMainWindow
    from piwork.gui import compat

    report = sys.argv[1]

    class Watch(QObject):  # the main window's first paint, seen from outside piwork's code
        painted = False

        def eventFilter(self, watched, event):
            if not self.painted and event.type() == QEvent.Type.Paint and isinstance(watched, QMainWindow):
                self.painted = True
                with open(report, "w") as out:
                    json.dump(sorted(m for m in sys.modules if m.startswith("piwork")), out)
                QTimer.singleShot(0, watched.close)
            return False

    watch = Watch()
    run_until_quit = compat.run_until_quit

    def run_watched(app, main):
        app.installEventFilter(watch)
        return run_until_quit(app, main)

    compat.run_until_quit = run_watched
    sys.argv = ["piwork", *sys.argv[2:]]
    runpy.run_module("piwork", run_name="__main__", alter_sys=True)
    """
)


def test_the_first_frame_imports_only_the_engine_modules_its_widgets_read(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    report = tmp_path / "modules.json"
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(QT_QPA_PLATFORM="offscreen", HOME=str(tmp_path), PI_CODING_AGENT_DIR=str(tmp_path / "agent"),
               PIWORK_CONFIG_DIR=str(tmp_path / "config"), PI_OFFLINE="1",
               PYTHON_KEYRING_BACKEND="keyring.backends.fail.Keyring")  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(report), "--cwd", str(project)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    modules = json.loads(report.read_text())
    assert "piwork.gui.main_window" in modules  # the report is of the window's first frame
    engine = {m for m in modules if m == "piwork.core" or m.startswith("piwork.core.")}
    assert sorted(engine - ENGINE_BEFORE_THE_FIRST_FRAME) == []
    assert [m for m in WINDOW_PARTS_AFTER if m in modules] == []
