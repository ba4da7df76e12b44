"""The tree tests' asyncio loop on pytest-qt's Qt loop.

Tear-down differs from `compat.detach_loop`: qasync's `stop()` calls `QApplication.exit()`, after
which every later `QEventLoop.exec()` (what qtbot.waitSignal/waitUntil use) returns at once and Qt
timers stop firing for the rest of the process. Here the loop is marked stopped without that call.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from PySide6.QtWidgets import QApplication

from piwork.gui import compat


@pytest.fixture
def qloop(qapp: QApplication) -> Iterator[asyncio.AbstractEventLoop]:
    loop = compat.attach_loop(qapp)
    yield loop
    tasks = [task for task in asyncio.all_tasks(loop) if not task.done()]
    for task in tasks:
        task.cancel()
    for _ in range(100):
        if all(task.done() for task in tasks):
            break
        qapp.processEvents()
    loop._QEventLoop__is_running = False  # type: ignore[attr-defined]
    asyncio.events._set_running_loop(None)
    loop.close()
    asyncio.set_event_loop(None)
