"""Opening a long session: the tokenizer counts its messages off the GUI thread, into the governor's own
estimator, and the X-ray goes to the panel before the count ends, the rows not counted yet saying so."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pytestqt.qtbot import QtBot

from piwork.core.context import TokenEstimator, Xray, build_xray
from piwork.gui.context import feed as feed_module
from piwork.gui.context.reading import Segments
from piwork.gui.session_controller import SessionController
from tests.core.session.helpers import HEADER, assistant, user, write_session

ROUNDS = 150


def long_session(path: Path, cwd: str) -> Path:
    entries: list[dict[str, Any]] = []
    parent = None
    for n in range(ROUNDS):
        question, answer = f"u{n}", f"a{n}"
        entries.append(user(question, parent, f"question {n}: " + "why does it fail? " * 30, 2 * n + 1))
        entries.append(assistant(answer, question, f"answer {n}: " + "the cache is stale. " * 60, 2 * n + 2))
        parent = answer
    return write_session(path, entries, {**HEADER, "cwd": cwd})


def test_a_long_session_shows_its_xray_while_counting_then_complete(
    qtbot: QtBot, controller: SessionController, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(feed_module, "FIRST_SHOW_S", -1.0)  # show the X-ray after one message is counted
    window = controller.window
    window.show_context_panel(0)
    panel = window.context_panel
    shown: list[Xray] = []
    controller.context_feed.xrayChanged.connect(lambda xray, *_: shown.append(xray))
    path = long_session(tmp_path / "long.jsonl", controller.cwd)
    controller.spawn(controller.open_session(str(path)))

    def ours() -> list[Xray]:  # the long session's (the fixture's empty session came first)
        return [x for x in shown if any(p.group is not None for p in x.parts)]

    qtbot.waitUntil(lambda: bool(ours()) and ours()[-1].counting == 0, timeout=20_000)

    first = ours()[0]
    assert first.counting == 2 * ROUNDS - 1  # the first message counted, the prompt and tools too
    assert [p.counting for p in first.parts if p.group is not None] == [False] + [True] * (2 * ROUNDS - 1)
    assert not any(p.counting for p in first.parts if p.group is None)
    assert first.total == sum(p.tokens for p in first.parts) > 0

    session = controller.runtime.session  # type: ignore[union-attr]
    estimator = session.governance.governor.estimator
    # one count serves both: the governor's next call finds every message counted
    assert all(estimator.known(m) is not None for m in session.messages)
    complete = ours()[-1]
    fresh = build_xray(
        session.system_prompt_parts(),
        controller.context_feed._snapshot().tools,
        session.messages,
        TokenEstimator(estimator.counter),
    )
    assert complete.total == fresh.total and [p.tokens for p in complete.parts] == [
        p.tokens for p in fresh.parts
    ]
    assert panel.xray_model.counting == 0 and panel.xray_model.total == complete.total
    assert panel.xray_summary.text().startswith(f"Next request: {complete.total:,} tokens")
    assert controller.chat.footer.reading.segments.total == complete.total  # the meter: from the complete one
    # labelled once for the partial and the complete X-ray, counted in slices: part for part a fresh one
    assert complete.parts == fresh.parts and complete.counting == 0
    assert controller.chat.footer.reading.segments == Segments.from_xray(fresh)


def test_counting_rows_say_so_and_show_no_share(qtbot: QtBot, controller: SessionController) -> None:
    from piwork.core.context.xray import XrayPart

    window = controller.window
    window.show_context_panel(0)
    panel = window.context_panel
    parts = (
        XrayPart("system", "system prompt: role", 300, 0.75),
        XrayPart("tool_schema", "tool: read", 100, 0.25, "read"),
        XrayPart("user", "hello", 0, 0.0, "e1", 0, counting=True),
        XrayPart("assistant", "hi there", 0, 0.0, "e2", 1, counting=True),
    )
    panel.set_xray(Xray(parts, 400, "cl100k_base"), [0, 1])
    model = panel.xray_model
    assert model.counting == 2
    column = [model.index(r, 2).data() for r in range(model.rowCount())]
    assert column == ["300", "100", "counting…", "counting…"]  # the counted ones first, exact
    assert all(model.index(r, 3).data() == "" for r in range(model.rowCount()))  # no share yet
    assert "not counted yet" in model.index(2, 0).data(3)  # tooltip role
    assert panel.xray_summary.text() == (
        "Next request: counting tokens (cl100k_base)… 400 so far in 2 of 4 parts"
    )
