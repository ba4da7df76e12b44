"""The window's session counts with the model's offline tokenizer (loaded off the GUI thread), not chars/4."""

from __future__ import annotations

from pytestqt.qtbot import QtBot

from piwork.core.agent.events import OccupancyEvent
from piwork.gui.session_controller import SessionController
from tests.support import LoopbackServer, Text, Turn


def test_governor_estimates_name_the_models_tokenizer(
    qtbot: QtBot, controller: SessionController, server: LoopbackServer
) -> None:
    runtime = controller.runtime
    assert runtime is not None
    session = runtime.session
    assert session.governance.governor.estimator.tokenizer == "≈ cl100k_base"
    samples: list[OccupancyEvent] = []
    session.subscribe(lambda e: samples.append(e) if isinstance(e, OccupancyEvent) else None)
    server.script(Turn([Text("Hello.")]))
    controller.send_prompt("hi")
    qtbot.waitUntil(lambda: any(e.sample.source == "provider" for e in samples), timeout=10_000)
    assert [e.sample.tokenizer for e in samples if e.sample.source == "estimate"] == ["≈ cl100k_base"]
