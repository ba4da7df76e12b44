"""Folding long runs in the branch graph after a failed reply and its retry (a branch beside it): only
long runs of quiet entries fold, and the selected entry stays selected (or its fold's row, never the
root)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QTimer
from pytestqt.qtbot import QtBot

from piwork.core.session import Fold
from piwork.core.session.store import Session, new_header, open_session
from piwork.gui.tree.tree_panel import SessionTreePanel

from .sessions import SessionBuilder


def _retried() -> tuple[list[dict[str, Any]], dict[str, str]]:
    """A first exchange, a prompt whose reply failed, the same prompt again from just before it (a
    branch beside the failed attempt), then a conversation with one long turn of tool steps."""
    b = SessionBuilder()
    b.model_change()
    ids = {"first": b.user("set up the project"), "before": b.assistant("done")}
    ids["failed_prompt"] = b.user("explain the parser")
    ids["failed"] = b.assistant(stop="error")
    b.at(ids["before"])
    ids["retry"] = b.user("explain the parser")
    ids["run_first"] = b.assistant("reading the grammar", tool_call="g0")
    for k in range(6):  # a long turn: these steps fold behind the run's first entry
        ids[f"result{k}"] = b.tool_result(f"g{k}", f"grammar part {k}")
        b.assistant(f"and part {k + 1}", tool_call=f"g{k + 1}")
    b.tool_result("g6", "the end")
    ids["explained"] = b.assistant("It parses in two passes.")
    for k in range(4):  # then short turns: nothing to fold
        ids[f"prompt{k}"] = b.user(f"question {k}")
        ids[f"answer{k}"] = b.assistant(f"answer {k}")
    return b.entries, ids


@pytest.fixture
def panel(qtbot: QtBot, qloop: asyncio.AbstractEventLoop, tmp_path: Path) -> Iterator[Any]:
    entries, ids = _retried()
    path = tmp_path / "retried.jsonl"
    lines = [new_header(str(tmp_path)), *entries]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    session: Session = open_session(path, writable=False)
    panel = SessionTreePanel()
    qtbot.addWidget(panel)
    panel.resize(420, 700)
    panel.show()
    panel.set_session(session)
    panel.graph.fold_box.setChecked(False)
    panel.show_graph()
    qtbot.waitUntil(lambda: not panel.graph.laying_out)
    yield panel, ids
    panel.shutdown()
    session.close()


def _toggle(qtbot: QtBot, panel: SessionTreePanel, checked: bool) -> None:
    QTimer.singleShot(0, lambda: panel.graph.fold_box.setChecked(checked))
    qtbot.waitUntil(lambda: panel.graph.fold_box.isChecked() == checked and not panel.graph.laying_out)


def _shown(panel: SessionTreePanel) -> list[Any]:
    model = panel.graph.model
    assert model is not None
    return list(model.rows.rows)


def test_folding_after_a_retry_folds_only_the_long_turn_and_keeps_the_selection(
    panel: Any, qtbot: QtBot
) -> None:
    panel, ids = panel
    graph = panel.graph
    assert graph.select(ids["answer1"])
    _toggle(qtbot, panel, True)
    model = graph.model
    assert model is not None
    folds = [row for row in _shown(panel) if isinstance(row, Fold)]
    assert len(folds) == 1 and model.tree.records[folds[0].first].id == ids["result0"]
    shown = {model.tree.records[row].id for row in _shown(panel) if not isinstance(row, Fold)}
    prompts = ("first", "failed_prompt", "retry", "prompt0", "prompt1", "prompt2", "prompt3")
    assert {ids[name] for name in prompts} <= shown  # every prompt, both attempts, keeps its row
    assert graph.current_entry_id() == ids["answer1"] == panel.current_entry_id()  # not the root
    # a folded entry selected: its nearest shown ancestor (the run's first entry) takes the selection
    _toggle(qtbot, panel, False)
    assert graph.select(ids["result3"])
    _toggle(qtbot, panel, True)
    assert graph.current_entry_id() == ids["run_first"] == panel.current_entry_id()
