"""A reopened session's X-ray shows what the governor will send: the restored elisions as stubs, before
the session's first new request."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pytestqt.qtbot import QtBot

from piwork.core.paths import agent_dir
from piwork.gui.session_controller import SessionController
from tests.gui.context.conftest import configure_models
from tests.support import LoopbackServer, Text, ToolCall, Turn
from tests.support.loopback_server import counting


def test_a_reopened_session_shows_its_restored_elisions(
    qtbot: QtBot, controller: SessionController, server: LoopbackServer
) -> None:
    ctl = controller
    configure_models(server, window=200_000)
    settings = agent_dir() / "settings.json"
    governor = {"piwork": {"contextGovernor": {"pressureMark": 12_000, "minSavings": 2_000}}}
    settings.write_text(json.dumps({**json.loads(settings.read_text()), **governor}))
    project = Path(ctl.cwd)
    names = []
    for i in range(12):
        name = f"part{i}.txt"
        (project / name).write_text("".join(f"part {i} line {n}: some words to read\n" for n in range(150)))
        names.append(name)
    first = ctl.runtime
    ctl.spawn(ctl.open_session(None))
    qtbot.waitUntil(lambda: ctl.runtime is not first and ctl.runtime is not None, timeout=10_000)
    server.script(  # each reply counts the request it answers, as a real provider does
        *[counting(Turn([ToolCall("read", {"path": name}, id=f"call_{i}")])) for i, name in enumerate(names)],
        counting(Turn([Text("Read them all.")])),
    )
    ctl.submit("read every part")
    qtbot.waitUntil(lambda: ctl.chat.busy, timeout=5_000)
    qtbot.waitUntil(lambda: not ctl.chat.busy, timeout=30_000)
    runtime = ctl.runtime
    assert runtime is not None and runtime.store.path is not None
    sticky = runtime.session.governance.governor.sticky_ids
    assert sticky  # the run projected, and its elisions were saved at settle
    path = runtime.store.path

    ctl.spawn(ctl.open_session(str(path)))
    qtbot.waitUntil(lambda: ctl.runtime is not runtime and ctl.runtime is not None, timeout=10_000)
    reopened = ctl.runtime
    assert reopened is not None and reopened.session.governance.last_outcome is None
    shown: list[Any] = []
    ctl.context_feed.xrayChanged.connect(lambda xray, index, elided, table: shown.append((xray, elided)))
    ctl.context_feed.schedule()
    qtbot.waitUntil(lambda: any(elided for _, elided in shown), timeout=15_000)
    xray, elided = next((x, e) for x, e in shown if e)
    assert len(elided) >= len(sticky)
    stubs = [p for p in xray.parts if p.kind == "tool_result" and p.ref in sticky]
    assert len(stubs) == len(sticky) and all(p.tokens < 200 for p in stubs)  # stubs, not whole reads
