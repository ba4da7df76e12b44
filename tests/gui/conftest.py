"""GUI test harness: offscreen Qt, per-test agent dir and window settings, a qasync loop on pytest-qt's
event loop, a check that no test leaves a top-level window behind, and the GUI-thread stall guard: a test
fails when one event kept the GUI thread busy for more than 50 ms of its CPU time (see
tests/support/gui_stalls.py for how it is measured; mark a test that blocks on purpose with
``@pytest.mark.gui_stall_allowed``).

A test that failed on the stall guard alone runs once more before it counts as failed (pytest-rerunfailures,
``--only-rerun`` in pyproject.toml): thread CPU time on a shared two-core machine now and then jumps for one
event without the code doing more (a neighbour's load, memory reclaim charged to whoever faulted). Work that
really holds the GUI thread stalls on both runs; every other failure is reported at once."""

from __future__ import annotations

import os

os.environ["QT_QPA_PLATFORM"] = "offscreen"  # before any QApplication exists
os.environ.setdefault("QT_API", "pyside6")
# Never touch the OS keyring from tests: keyring reads this when it first picks a backend.
os.environ["PYTHON_KEYRING_BACKEND"] = "keyring.backends.fail.Keyring"

import asyncio
import gc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QApplication, QWidget
from pytestqt.qt_compat import qt_api

from piwork.gui import compat
from tests.support.gui_stalls import STALL_LIMIT_S, StallMeter


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "gui_stall_allowed: the test blocks the GUI thread on purpose (the stall guard only measures)",
    )


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    """Fail a test during which the GUI thread ran for more than STALL_LIMIT_S without its event loop."""
    app = QApplication.instance()
    if not isinstance(app, QApplication):  # a test without Qt
        return (yield)
    meter = StallMeter(app)
    meter.track_loops()
    meter.start()
    real_exec = qt_api.exec

    def exec_then_mark(obj: Any, *args: Any, **kwargs: Any) -> Any:
        meter.loop_entered()
        try:
            return real_exec(obj, *args, **kwargs)
        finally:
            meter.loop_returned()

    qt_api.exec = exec_then_mark  # every qtbot wait runs a nested loop through it
    try:
        result = yield
    finally:
        qt_api.exec = real_exec
        meter.stop()
    stall = meter.worst
    if stall is not None and item.get_closest_marker("gui_stall_allowed") is None:
        pytest.fail(f"the GUI thread stalled over {STALL_LIMIT_S * 1000:.0f} ms: {stall.describe()}")
    return result


@pytest.fixture(autouse=True)
def garbage_collected_on_the_gui_thread() -> Iterator[None]:
    """Collect what each test left in reference cycles now, on the GUI thread. Left for later, a Qt object
    in such a cycle is destroyed wherever the collector happens to run next: in a worker thread, which
    crashes a later test."""
    yield
    gc.collect()


@pytest.fixture(autouse=True)
def isolated_dirs(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Agent dir, window settings, HOME and key-free env in a private tmp dir (``tmp_path`` stays the test's)."""
    base = tmp_path_factory.mktemp("isolated")
    home = base / "home"
    (home / ".pi" / "agent").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(home / ".pi" / "agent"))
    monkeypatch.setenv("PIWORK_CONFIG_DIR", str(base / "config"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(base / "xdg-config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(base / "xdg-data"))
    monkeypatch.delenv("PI_CODING_AGENT_SESSION_DIR", raising=False)
    monkeypatch.setenv("PIWORK_THEME", "light")
    for name in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENROUTER_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    return home


@pytest.fixture(autouse=True)
def no_leaked_windows(qapp: QApplication) -> Iterator[None]:
    """Fail a test that leaves a top-level window open (checked after qtbot has closed its widgets).

    Closed widgets still waiting for their deferred deletion are not counted: forcing DeferredDelete here
    crashes PySide6 at interpreter exit (a refcount bug in shiboken), so only visible windows are leaks."""
    before = {id(w) for w in QApplication.topLevelWidgets()}
    yield
    leaked: list[QWidget] = [
        w for w in QApplication.topLevelWidgets() if id(w) not in before and w.isVisible()
    ]
    for widget in leaked:
        widget.close()
        widget.deleteLater()
    if leaked:
        names = ", ".join(f"{type(w).__name__}({w.objectName() or w.windowTitle()!r})" for w in leaked)
        pytest.fail(f"test left top-level widgets open: {names}")


@pytest.fixture
def qloop(qapp: QApplication) -> Iterator[asyncio.AbstractEventLoop]:
    """A qasync loop running on the Qt event loop: tasks advance inside qtbot.waitUntil/waitSignal."""
    loop = compat.attach_loop(qapp)
    yield loop
    compat.detach_loop(loop, qapp)
