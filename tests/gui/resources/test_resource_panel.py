"""ResourcePanel over the engine's loader for a planted project: order, greying, winners, previews,
and the assembled system prompt with token counts."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from piwork.core.llm.tokens import Tokenizers
from piwork.core.resources.loader import LoadedResources, load_resources
from piwork.core.resources.system_prompt import prompt_input_for, system_prompt_parts
from piwork.core.resources.trust import TrustResolver
from piwork.core.resources.trust_store import TrustStore
from piwork.core.settings import FileSettingsStorage, Settings
from piwork.gui.resources import ResourcePanel
from piwork.gui.resources.rows_model import ROW_ROLE

SKILL = "---\nname: {name}\ndescription: {text}\n---\nBody of {name}.\n"


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


@pytest.fixture
def planted(tmp_path: Path) -> tuple[str, str, str]:
    home = os.environ["HOME"]
    agent = os.environ["PI_CODING_AGENT_DIR"]
    _write(Path(agent) / "AGENTS.md", "global rules\n")
    _write(Path(agent) / "skills" / "alpha" / "SKILL.md", SKILL.format(name="alpha", text="global alpha"))
    _write(Path(agent) / "skills" / "beta" / "SKILL.md", SKILL.format(name="beta", text="global beta"))
    _write(Path(agent) / "prompts" / "review.md", "Review $1\n")
    work = tmp_path / "work"
    project = work / "proj"
    _write(work / "AGENTS.md", "workspace rules\n")
    _write(project / "AGENTS.md", "project rules\n")
    _write(project / "CLAUDE.md", "claude rules\n")
    _write(
        project / ".pi" / "skills" / "alpha" / "SKILL.md", SKILL.format(name="alpha", text="project alpha")
    )
    _write(project / ".pi" / "SYSTEM.md", "You are the project's assistant.\n")
    return home, agent, os.path.realpath(project)


def _load(planted: tuple[str, str, str], trusted: bool) -> LoadedResources:
    home, agent, cwd = planted
    policy = "always" if trusted else "never"
    state = asyncio.run(TrustResolver(TrustStore(agent), default_policy=policy).resolve(cwd))
    settings = Settings.load(FileSettingsStorage(cwd, agent), project_trusted=state.trusted)
    return load_resources(cwd, agent, settings, trust=state, home=home)


def _panel(qtbot: QtBot, loaded: LoadedResources) -> ResourcePanel:
    panel = ResourcePanel()
    qtbot.addWidget(panel)
    panel.set_resources(loaded)
    return panel


def _shown(panel: ResourcePanel) -> list[tuple[str, str, str]]:
    out = []
    for group in range(panel.model.rowCount()):
        parent = panel.model.index(group, 0)
        for row in range(panel.model.rowCount(parent)):
            r = panel.model.index(row, 0, parent).data(ROW_ROLE)
            out.append((r.kind, r.path, r.state))
    return out


@pytest.mark.parametrize("trusted", [True, False])
def test_rows_follow_the_engine_order(qtbot: QtBot, planted: tuple[str, str, str], trusted: bool) -> None:
    loaded = _load(planted, trusted)
    panel = _panel(qtbot, loaded)
    kinds = [
        k
        for k in ("context", "skill", "prompt", "system", "append", "settings")
        if any(r.kind == k for r in loaded.rows)
    ]
    expected = [(r.kind, r.path, r.state) for k in kinds for r in loaded.rows if r.kind == k]
    assert _shown(panel) == expected
    contexts = [(os.path.basename(os.path.dirname(p)), s) for k, p, s in expected if k == "context"]
    assert contexts[0][1] == "active" and ("proj", "not-selected") in contexts


def test_untrusted_project_rows_are_greyed_with_the_reason(
    qtbot: QtBot, planted: tuple[str, str, str]
) -> None:
    loaded = _load(planted, trusted=False)
    panel = _panel(qtbot, loaded)
    header = panel.trust_label.text()
    assert header.startswith("<b>Project not trusted</b> (the defaultProjectTrust setting)")
    assert "Entries that need trust: <code>.pi/skills</code>, <code>.pi/SYSTEM.md</code>" in header
    blocked = [
        panel.model.index(row, 0, panel.model.index(group, 0))
        for group in range(panel.model.rowCount())
        for row in range(panel.model.rowCount(panel.model.index(group, 0)))
        if panel.model.index(row, 0, panel.model.index(group, 0)).data(ROW_ROLE).state == "blocked-untrusted"
    ]
    assert blocked, "the project's skills folder and SYSTEM.md are listed as blocked"
    for index in blocked:
        assert index.data(Qt.ItemDataRole.ForegroundRole) is not None
        assert "not trusted" in index.data(Qt.ItemDataRole.ToolTipRole)
    panel.view.setCurrentIndex(blocked[0])
    assert panel.preview.toPlainText() == "(not read: the project is not trusted)"


@pytest.fixture
def trusted(planted: tuple[str, str, str]) -> LoadedResources:
    return _load(planted, trusted=True)  # before a test's qloop: loading runs its own asyncio loop


def test_shadowed_skill_names_the_winner_and_previews(
    qtbot: QtBot, trusted: LoadedResources, qloop: asyncio.AbstractEventLoop
) -> None:
    loaded = trusted
    panel = _panel(qtbot, loaded)
    skills = panel.model.group_rows("skill")
    loser = next(r for r in skills if r.state == "collision-loser")
    winner = next(r for r in skills if r.name == "alpha" and r.state == "active")
    assert ".pi/skills/alpha" in winner.path and loser.winner_path == winner.path
    group = next(
        g for g in range(panel.model.rowCount()) if panel.model.index(g, 0).data().startswith("Skills")
    )
    position = skills.index(loser)
    index = panel.model.index(position, 1, panel.model.index(group, 0))
    assert index.data() == "alpha ⚠"  # the collision warning is flagged too
    assert index.siblingAtColumn(3).data() == "shadowed"  # plain words, not the engine's state id
    # the winner is named as the Path column names files: inside the project, relative to it
    assert "already loaded from .pi/skills/alpha/SKILL.md." in index.data(Qt.ItemDataRole.ToolTipRole)
    with qtbot.waitSignal(panel.previewShown, timeout=10_000):  # read in a worker thread
        panel.view.setCurrentIndex(index)
    assert panel.preview.toPlainText() == SKILL.format(name="alpha", text="global alpha")
    assert "already loaded from .pi/skills/alpha/SKILL.md" in panel.reason_label.text()


def test_system_prompt_parts_with_token_counts(
    qtbot: QtBot, trusted: LoadedResources, qloop: asyncio.AbstractEventLoop
) -> None:
    loaded = trusted
    panel = _panel(qtbot, loaded)
    parts = system_prompt_parts(prompt_input_for(loaded, ["read", "bash"], {"read": "Read files"}, {}))
    counter = Tokenizers(None, use_package_data=False, use_offline_package=False).counter_for("gpt-4o")
    with qtbot.waitSignal(panel.prompt_view.counted, timeout=5000):
        panel.set_system_prompt(parts, counter)
    view = panel.prompt_view
    assert view.parts[0].name == "custom"  # the trusted project's SYSTEM.md replaces the default
    assert view.counts == [counter.count(p.text) for p in parts]
    assert view.total == counter.count("".join(p.text for p in parts))
    assert view.table.item(0, 1).text().startswith(f"{view.counts[0]:,}  (")  # count and share of the total
    assert "chars/4" in view.table.horizontalHeaderItem(1).toolTip() and "chars/4" in view.summary.text()
    panel.shutdown()


@pytest.fixture
def reloaded(planted: tuple[str, str, str]) -> tuple[LoadedResources, LoadedResources, LoadedResources]:
    """The same project loaded twice, then once more after its SYSTEM.md is gone (before a test's qloop)."""
    first, again = _load(planted, trusted=True), _load(planted, trusted=True)
    os.remove(os.path.join(planted[2], ".pi", "SYSTEM.md"))
    return first, again, _load(planted, trusted=True)


def _system_row(panel: ResourcePanel, path: str) -> object:
    for group in range(panel.model.rowCount()):
        parent = panel.model.index(group, 0)
        for position in range(panel.model.rowCount(parent)):
            index = panel.model.index(position, 0, parent)
            if index.data(ROW_ROLE).path == path:
                return index
    raise AssertionError(f"no row for {path}")


def test_a_reload_reads_the_selected_row_again_and_clears_a_row_that_went(
    qtbot: QtBot,
    planted: tuple[str, str, str],
    reloaded: tuple[LoadedResources, LoadedResources, LoadedResources],
    qloop: asyncio.AbstractEventLoop,
) -> None:
    first, again, without = reloaded
    system_md = os.path.join(planted[2], ".pi", "SYSTEM.md")
    Path(system_md).write_text("Old words.\n")
    panel = _panel(qtbot, first)
    with qtbot.waitSignal(panel.previewShown, timeout=10_000):
        panel.view.setCurrentIndex(_system_row(panel, system_md))  # type: ignore[arg-type]
    assert panel.preview.toPlainText() == "Old words.\n"

    Path(system_md).write_text("New words.\n")
    with qtbot.waitSignal(panel.previewShown, timeout=10_000):  # the preview is not left showing old text
        panel.set_resources(again)
    assert panel.preview.toPlainText() == "New words.\n" and ".pi/SYSTEM.md" in panel.reason_label.text()
    assert panel.model.row_at(panel.view.currentIndex()).path == system_md  # type: ignore[union-attr]

    os.remove(system_md)
    panel.set_resources(without)
    assert not panel.view.currentIndex().isValid()
    assert panel.preview.toPlainText() == "" and panel.reason_label.text() == ""


@pytest.mark.parametrize("trusted", [True, False])
def test_mcp_json_is_listed_with_a_note_that_piwork_runs_no_mcp_servers(
    qtbot: QtBot, planted: tuple[str, str, str], trusted: bool
) -> None:
    _home, _agent, cwd = planted
    _write(Path(cwd) / ".pi" / "mcp.json", '{"mcpServers": {"x": {"command": "x"}}}')
    loaded = _load(planted, trusted)
    panel = _panel(qtbot, loaded)
    path = os.path.join(cwd, ".pi", "mcp.json")
    state = "not-used" if trusted else "blocked-untrusted"
    assert [(r.kind, r.name, r.path, r.state) for r in loaded.rows if r.kind == "mcp"] == [
        ("mcp", "mcp.json", path, state)
    ]
    assert "<code>.pi/mcp.json</code>" in panel.trust_label.text()
    group = next(
        panel.model.index(g, 0)
        for g in range(panel.model.rowCount())
        if panel.model.index(g, 0).data(Qt.ItemDataRole.DisplayRole).startswith("MCP servers (read by Pi)")
    )
    index = panel.model.index(0, 0, group)
    assert index.data(ROW_ROLE).kind == "mcp"
    word = "not used by piwork" if trusted else "needs trust"
    assert panel.model.index(0, 3, group).data(Qt.ItemDataRole.DisplayRole) == word
    tip = index.data(Qt.ItemDataRole.ToolTipRole)
    state_reason_start = (
        "Not used by piwork." if trusted else "Not loaded: this project folder is not trusted."
    )
    assert (
        f"{state_reason_start} piwork runs no MCP servers yet: this file is listed because Pi starts" in tip
    )
    assert index.data(Qt.ItemDataRole.ForegroundRole) is not None  # greyed: nothing of it is in effect


@pytest.mark.parametrize("width", [285, 380, 640, 1000])  # docks of 1000×700 and 1600×1000 windows
def test_columns_fit_the_dock_paths_take_the_room_and_files_are_named_alike(
    qtbot: QtBot, trusted: LoadedResources, width: int
) -> None:
    panel = ResourcePanel()
    qtbot.addWidget(panel)
    panel.resize(width, 600)
    panel.show()
    qtbot.waitExposed(panel)
    panel.set_resources(trusted)
    view, header = panel.view, panel.view.header()
    qtbot.waitUntil(lambda: header.length() <= view.viewport().width())  # nothing falls off the dock
    sizes = [header.sectionSize(c) for c in range(panel.model.columnCount())]
    words = view.fontMetrics().horizontalAdvance
    assert sizes[3] <= words("not chosen") + 24  # the state is a short word, never a path
    if width >= 640:
        assert sizes[4] == max(sizes)  # the path gets the stretch
    paths = {r.path: panel.model.index(i, 4, panel.model.index(g, 0)).data()
             for g in range(panel.model.rowCount())
             for i, r in enumerate(panel.model.group_rows(panel.model._groups[g][0]))}  # fmt: skip
    home = os.environ["HOME"]
    for path, shown in paths.items():
        if path.startswith(trusted.cwd + os.sep):
            assert shown == os.path.relpath(path, trusted.cwd)
        elif path.startswith(home + os.sep):
            assert shown == "~/" + os.path.relpath(path, home)
    assert "AGENTS.md" in paths.values() and "~/.pi/agent/AGENTS.md" in paths.values()


def test_ranks_explain_their_gaps(qtbot: QtBot, trusted: LoadedResources) -> None:
    """Skills are ranked by origin (1 project folders, 3 your folders): 2 shows nowhere, and the legend
    and each rank's tooltip say what a rank is and why a number is missing."""
    panel = _panel(qtbot, trusted)
    group = next(
        g for g in range(panel.model.rowCount()) if panel.model.index(g, 0).data().startswith("Skills")
    )
    parent = panel.model.index(group, 0)
    ranks = [panel.model.index(i, 0, parent).data() for i in range(panel.model.rowCount(parent))]
    assert "2" not in ranks and {"1", "3"} <= set(ranks)
    assert panel.rank_legend.text().startswith("Rank: precedence, lowest wins; a missing number")
    legend = panel.rank_legend.toolTip()
    assert "1 this project's folders, 2 your settings, 3 your folders" in legend
    assert "nothing comes from there" in legend
    tip = panel.model.index(ranks.index("3"), 0, parent).data(Qt.ItemDataRole.ToolTipRole)
    assert "Rank 3: your folders." in tip
