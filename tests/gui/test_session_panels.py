"""A panel registered with the main window attaches to each session opened, lets go of it when another
opens, and shuts down with the window: the controller hands sessions to the panels, never their state."""

from __future__ import annotations

import asyncio

from pytestqt.qtbot import QtBot

from piwork.core.workflows import AgentRuntime
from piwork.gui.session_controller import SessionController
from tests.gui.test_session_controller import controller, server  # noqa: F401  (fixtures)


class _Recorder:
    def __init__(self) -> None:
        self.calls: list[tuple[str, str]] = []

    def attach(self, runtime: AgentRuntime) -> None:
        self.calls.append(("attach", runtime.store.session_id))

    def detach(self) -> None:
        self.calls.append(("detach", ""))

    def shutdown(self) -> None:
        self.calls.append(("shutdown", ""))


def test_a_registered_panel_follows_the_sessions_opened(
    qtbot: QtBot,
    qloop: asyncio.AbstractEventLoop,
    controller: SessionController,  # noqa: F811
) -> None:
    panel = _Recorder()
    controller.window.panels.register(panel)
    first = controller.runtime
    assert first is not None
    controller.spawn(controller.open_session(None))
    qtbot.waitUntil(
        lambda: controller.runtime is not first and controller.runtime is not None, timeout=10_000
    )
    second = controller.runtime
    assert second is not None
    assert panel.calls == [("detach", ""), ("attach", second.store.session_id)]
    # the built-in panels are attached the same way: the tree shows the new session's file
    assert controller.window.tree_panel.session is second.store
    controller.window.close()
    assert panel.calls[-1] == ("shutdown", "")
