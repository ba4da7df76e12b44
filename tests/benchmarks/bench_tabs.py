"""Memory per idle tab: a real window (under a display: Xvfb with openbox unless ``$DISPLAY`` is set, or
``QT_QPA_PLATFORM=offscreen``) opens ``TABS`` new sessions as tabs, one after the other, each idle once
open; the resident and anonymous memory after each tab is settled (``SETTLE_S``) is printed, and the mean
growth per tab after the first. Each run is a fresh process in a fresh home; figures are medians of
``RUNS`` runs (default 3). Prints one JSON line.

    python tests/benchmarks/bench_tabs.py
    TABS=12 RUNS=5 python tests/benchmarks/bench_tabs.py
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))  # run as a script from anywhere

from tests.benchmarks.bench_window import display  # noqa: E402

TABS = int(os.environ.get("TABS", "8"))
RUNS = int(os.environ.get("RUNS", "3"))
SETTLE_S = float(os.environ.get("SETTLE_S", "1.5"))


def memory_mb() -> tuple[float, float]:
    """Resident and anonymous resident memory of this process, in MB."""
    fields: dict[str, float] = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "RssAnon"):
            fields[key] = int(value.split()[0]) / 1024
    return fields["VmRSS"], fields.get("RssAnon", 0.0)


def child(report: Path, project: str) -> None:
    """In the measured process: the window with its first tab, then ``TABS - 1`` more, each settled."""
    from PySide6.QtCore import QSettings

    from piwork.core.paths import agent_dir
    from piwork.gui import compat
    from piwork.gui.app import create_application, ui_settings
    from piwork.gui.main_window import MainWindow
    from piwork.gui.notifications import NotificationCenter
    from piwork.gui.tabs.manager import TabManager
    from piwork.gui.theme import ThemeManager

    app = create_application(["bench"])
    themes = ThemeManager(app, "light")
    ui: QSettings = ui_settings()
    window = MainWindow(ui, themes.theme)
    notifications = NotificationCenter(window)
    tabs = TabManager(notifications, agent_dir(), approve=False)
    first = tabs.controller(window, project)
    samples: list[tuple[float, float]] = []

    async def main(_quit: asyncio.Event) -> int:
        window.resize(1600, 1000)
        window.show()
        await first.open_session(None)
        await asyncio.sleep(SETTLE_S)
        samples.append(memory_mb())
        for _ in range(TABS - 1):
            await tabs.new_tab(window)
            await asyncio.sleep(SETTLE_S)
            samples.append(memory_mb())
        await tabs.shutdown()
        report.write_text(json.dumps(samples))
        app.quit()
        return 0

    compat.run_until_quit(app, main)


def run_once(root: Path, screen: dict[str, str]) -> list[tuple[float, float]]:
    home = Path(tempfile.mkdtemp(dir=root))
    project = home / "project"
    project.mkdir()
    report = home / "report.json"
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    if "QT_QPA_PLATFORM" not in os.environ or os.environ["QT_QPA_PLATFORM"] != "offscreen":
        env.pop("QT_QPA_PLATFORM", None)
        env.update(screen)
    env.update(PYTHONPATH=str(ROOT), HOME=str(home), PI_CODING_AGENT_DIR=str(home / "agent"),
               PIWORK_CONFIG_DIR=str(home / "config"), PI_OFFLINE="1",
               PYTHON_KEYRING_BACKEND="keyring.backends.fail.Keyring")  # fmt: skip
    done = subprocess.run(
        [sys.executable, __file__, "--child", str(report), str(project)],
        env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    samples = json.loads(report.read_text()) if report.exists() else []
    shutil.rmtree(home, ignore_errors=True)
    if len(samples) != TABS:
        raise SystemExit(f"the window did not open {TABS} tabs: {done.stderr.strip().splitlines()[-3:]}")
    return [(float(rss), float(anon)) for rss, anon in samples]


def main() -> None:
    root = Path(tempfile.mkdtemp(prefix="bench-tabs-"))
    offscreen = os.environ.get("QT_QPA_PLATFORM") == "offscreen"
    try:
        if offscreen:
            runs = [run_once(root, {}) for _ in range(RUNS)]
        else:
            with display() as screen:
                runs = [run_once(root, screen) for _ in range(RUNS)]
    finally:
        shutil.rmtree(root, ignore_errors=True)
    rss = [statistics.median(run[i][0] for run in runs) for i in range(TABS)]
    anon = [statistics.median(run[i][1] for run in runs) for i in range(TABS)]
    per_tab = [(run[-1][0] - run[0][0]) / (TABS - 1) for run in runs]  # the first tab comes with the window
    per_tab_anon = [(run[-1][1] - run[0][1]) / (TABS - 1) for run in runs]
    result: dict[str, Any] = {
        "platform": "offscreen" if offscreen else "xvfb",
        "tabs": TABS,
        "runs": RUNS,
        "rss_mb_after_each_tab": [round(v, 1) for v in rss],
        "anon_mb_after_each_tab": [round(v, 1) for v in anon],
        "rss_mb_per_idle_tab": round(statistics.median(per_tab), 1),
        "anon_mb_per_idle_tab": round(statistics.median(per_tab_anon), 1),
        "load_average": os.getloadavg()[0],
    }
    print(json.dumps(result))


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--child":
        child(Path(sys.argv[2]), sys.argv[3])
    else:
        main()
