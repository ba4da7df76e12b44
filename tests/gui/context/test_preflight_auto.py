"""The preflight dialog opens by itself only when the next request, as the governor would send it, needs a
decision. A session written without the governor (as Pi writes them) whose last reply was billed past the
pricing mark opens the dialog by itself there; reopened with the governor on, whose projection brings the
next request back under the mark, it shows the meter's warning colours but no dialog."""

from __future__ import annotations

import json
from pathlib import Path

from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from piwork.core.paths import agent_dir
from piwork.gui.context.preflight_dialog import PreflightDialog
from piwork.gui.session_controller import SessionController
from tests.gui.context.conftest import configure_models
from tests.support import LoopbackServer, Text, ToolCall, Turn, Usage

PRICING_MARK = 25_000


def _dialogs() -> list[PreflightDialog]:
    return [w for w in QApplication.topLevelWidgets() if isinstance(w, PreflightDialog) and w.isVisible()]


def _priced_models(server: LoopbackServer) -> None:
    configure_models(server, window=64_000)
    models = json.loads((agent_dir() / "models.json").read_text())
    tier = {"inputTokensAbove": PRICING_MARK, "input": 6, "output": 20, "cacheRead": 0.6, "cacheWrite": 7}
    cost = {
        "input": 3,
        "output": 15,
        "cacheRead": 0.3,
        "cacheWrite": 3.75,
        "tiers": [tier],
    }  # all four rates, as Pi 1.6 asks of a new model
    models["providers"]["loopback"]["models"][0]["cost"] = cost
    (agent_dir() / "models.json").write_text(json.dumps(models))


def _governor(enabled: bool) -> None:
    settings = agent_dir() / "settings.json"
    # pressure well below the pricing mark, so the governor projects long before the request reaches it
    governor = {"piwork": {"contextGovernor": {"enabled": enabled, "pressureMark": 12_000}}}
    settings.write_text(json.dumps({**json.loads(settings.read_text()), **governor}))


def test_a_reopened_session_the_governor_keeps_under_the_mark_opens_no_dialog(
    qtbot: QtBot, controller: SessionController, server: LoopbackServer
) -> None:
    ctl = controller
    _priced_models(server)
    _governor(enabled=False)
    project = Path(ctl.cwd)
    names = []
    for i in range(16):
        name = f"part{i}.txt"
        (project / name).write_text("".join(f"part {i} line {n}: some words to read\n" for n in range(130)))
        names.append(name)
    first = ctl.runtime
    ctl.spawn(ctl.open_session(None))
    qtbot.waitUntil(lambda: ctl.runtime is not first and ctl.runtime is not None, timeout=10_000)
    server.script(
        *[Turn([ToolCall("read", {"path": name}, id=f"call_{i}")]) for i, name in enumerate(names)],
        Turn([Text("Read them all.")], usage=Usage(input=PRICING_MARK + 2_000)),
    )
    ctl.submit("read every part")
    qtbot.waitUntil(lambda: ctl.chat.busy, timeout=5_000)
    qtbot.waitUntil(lambda: not ctl.chat.busy, timeout=30_000)
    runtime = ctl.runtime
    assert runtime is not None and runtime.store.path is not None
    path = runtime.store.path
    # without the governor the next request is the whole transcript, past the mark: the dialog asks
    qtbot.waitUntil(lambda: bool(_dialogs()), timeout=15_000)
    assert _dialogs()[0].verdict == "pricing-zone"
    _dialogs()[0].close()

    _governor(enabled=True)
    earlier = ctl.preflight.auto_task
    ctl.spawn(ctl.open_session(str(path)))
    qtbot.waitUntil(lambda: ctl.runtime is not runtime and ctl.runtime is not None, timeout=10_000)
    feed = ctl.context_feed
    # the meter reads the last reply's billed input, past the pricing mark
    qtbot.waitUntil(lambda: feed.reading.zone == "pricing-zone" and feed.reading.exact, timeout=15_000)
    qtbot.waitUntil(lambda: ctl.preflight.auto_task not in (None, earlier), timeout=5_000)
    task = ctl.preflight.auto_task
    assert task is not None
    qtbot.waitUntil(task.done, timeout=15_000)
    assert task.result() is None and not _dialogs()

    # on demand the dialog opens and says why: the next request, as projected, is under the mark
    ctl.window.action_map["context_preflight"].trigger()
    qtbot.waitUntil(lambda: bool(_dialogs()), timeout=10_000)
    dialog = _dialogs()[0]
    assert dialog.verdict not in ("pricing-zone", "overflow")
    assert dialog.preflight["estimate"]["projected"] < PRICING_MARK
    dialog.close()
