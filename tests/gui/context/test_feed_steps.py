"""The context feed's refresh over a long session: the X-ray goes to the Context panel while counting only
when the panel is on screen, and a refresh still counting for a session that was let go (another one
opened, the window quitting) stops at its next step instead of counting on to the end."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from piwork.core.context import Xray
from piwork.gui.context import feed as feed_module
from piwork.gui.session_controller import SessionController
from tests.gui.context.test_xray_counting import ROUNDS, long_session


def _open_long(qtbot: QtBot, controller: SessionController, tmp_path: Path) -> list[Xray]:
    shown: list[Xray] = []
    controller.context_feed.xrayChanged.connect(lambda xray, *_: shown.append(xray))
    path = long_session(tmp_path / "long.jsonl", controller.cwd)
    controller.spawn(controller.open_session(str(path)))

    def ours() -> list[Xray]:
        return [x for x in shown if any(p.group is not None for p in x.parts)]

    qtbot.waitUntil(lambda: bool(ours()) and ours()[-1].counting == 0, timeout=20_000)
    return ours()


def test_out_of_view_the_context_panel_gets_only_the_complete_xray(
    qtbot: QtBot, controller: SessionController, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(feed_module, "FIRST_SHOW_S", -1.0)  # on screen, a partial X-ray would follow at once
    assert not controller.window.docks["context"].isVisible()
    shown = _open_long(qtbot, controller, tmp_path)
    assert [x.counting for x in shown] == [0]  # no partial X-rays built for a panel nobody sees
    assert shown[0].total == controller.window.context_panel.xray_model.total > 0


def test_a_refresh_for_a_session_let_go_stops_at_its_next_step(
    qtbot: QtBot, controller: SessionController, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _open_long(qtbot, controller, tmp_path)
    feed = controller.context_feed
    snapshot = dataclasses.replace(feed._snapshot(), governor_estimator=None)
    feed._estimators.clear()  # counted afresh: the refresh below starts from nothing counted
    monkeypatch.setattr(feed_module, "COUNT_SLICE_S", -1.0)  # one message per slice
    generation = feed._generation
    feed.detach()  # the session is let go
    with pytest.raises(feed_module._LetGo):
        feed._compute(snapshot, 0, generation)
    (estimator,) = feed._estimators.values()
    counted = [m for m in snapshot.messages if estimator.known(m) is not None]
    assert len(snapshot.messages) == 2 * ROUNDS and len(counted) == 1  # it stopped after the first slice
