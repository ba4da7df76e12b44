"""Qt's model checks (qtmodeltester) on the window's list, table and tree models that have no check next to
their own tests, with real rows, including after the changes each model makes (paging, appends, renames)."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QModelIndex, Qt
from pytestqt.modeltest import ModelTester

from piwork.core.resources.panel import ResourceRow
from piwork.core.session.listing import SessionInfo
from piwork.core.session.search import SearchHit, SessionHits
from piwork.gui.logs.line_index import LineIndex
from piwork.gui.logs.lines_model import LogLinesModel
from piwork.gui.logs.panel import TruncatedOutputsModel
from piwork.gui.logs.truncated_results import TruncatedOutput
from piwork.gui.palette.palette_model import PaletteItem, PaletteModel
from piwork.gui.resources.rows_model import ResourceRowsModel
from piwork.gui.search.results_model import SearchResultsModel
from piwork.gui.sessions.session_model import COLUMNS, PAGE, SessionListModel
from piwork.gui.tree.entry_list_model import EntryListModel


def _info(i: int) -> SessionInfo:
    return SessionInfo(
        path=Path(f"/s/{i:04d}.jsonl"),
        id=f"id{i}",
        cwd="/repo",
        name="named" if i % 7 == 0 else None,
        parent_session_path=None,
        created="2026-01-01T00:00:00.000Z",
        modified_ms=1_767_225_600_000.0 + i,
        message_count=i,
        first_message=f"message {i}",
        all_messages_text=f"message {i}",
        size=100,
    )


def test_session_list_model_pages_lazily(qtmodeltester: ModelTester) -> None:
    model = SessionListModel()
    model.set_sessions([_info(i) for i in range(PAGE * 2 + 50)])
    assert model.rowCount() == PAGE and model.canFetchMore(QModelIndex())  # one page until views ask for more
    assert [model.headerData(c, Qt.Orientation.Horizontal) for c in range(model.columnCount())] == list(
        COLUMNS
    )
    model.fetchMore(QModelIndex())
    assert model.rowCount() == 2 * PAGE
    model.rename_path("/s/0003.jsonl", "renamed")
    model.remove_path("/s/0004.jsonl")
    assert model.rowCount() == 2 * PAGE - 1 and model.index(3, 0).data() == "renamed"
    qtmodeltester.check(model)  # the checker also fetches every page
    assert model.rowCount() == 2 * PAGE + 49 and not model.canFetchMore(QModelIndex())


def test_palette_model(qtmodeltester: ModelTester) -> None:
    model = PaletteModel()
    model.add_items([PaletteItem("action", f"Action {i}", f"does {i}", "Ctrl+K") for i in range(30)])
    qtmodeltester.check(model)
    model.set_query("act 1")
    qtmodeltester.check(model)
    assert 0 < model.rowCount() < 30


def test_truncated_outputs_model(qtmodeltester: ModelTester) -> None:
    def output(i: int) -> TruncatedOutput:
        return TruncatedOutput(f"c{i}", "bash", f"make {i}", "tail", None, f"/logs/{i}.log", (), i == 2, i)

    model = TruncatedOutputsModel()
    model.replace_all([output(i) for i in range(5)])
    qtmodeltester.check(model)
    model.append([output(5)])
    qtmodeltester.check(model)
    assert model.rowCount() == 6


def test_log_lines_model(qtmodeltester: ModelTester, tmp_path: Path) -> None:
    log = tmp_path / "out.log"
    log.write_bytes(b"".join(f"\x1b[31mline {i}\x1b[0m\n".encode() for i in range(500)))
    index = LineIndex(str(log))
    try:
        index.index_all()
        model = LogLinesModel(index)
        model.sync_rows()
        model.set_matches({3, 7})
        qtmodeltester.check(model)
        assert model.rowCount() == 500 and model.index(7).data() == "line 7"
    finally:
        index.close()


def test_resource_rows_model(qtmodeltester: ModelTester) -> None:
    rows = [
        ResourceRow("skill", "alpha", "/a/SKILL.md", "global", "active", rank=3, model_visible=True),
        ResourceRow("skill", "alpha", "/b/SKILL.md", "project", "collision-loser", winner_path="/a/SKILL.md"),
        ResourceRow("prompt", "fix", "/p/fix.md", "project", "blocked-untrusted", trust_gated=True),
        ResourceRow("settings", "settings.json", "/g/settings.json", "global", "active"),
    ]
    model = ResourceRowsModel()
    model.set_rows(rows)
    qtmodeltester.check(model)
    model.set_rows(rows[:2])
    qtmodeltester.check(model)


def test_search_results_model(qtmodeltester: ModelTester) -> None:
    def hits(n: int, on_path: bool) -> list[SearchHit]:
        return [
            SearchHit(
                f"e{i}", "user", "", f"the login flow {i}", ((4, 9),), "2026-01-01T00:00:00.000Z", on_path
            )
            for i in range(n)
        ]

    model = SearchResultsModel()
    model.add(SessionHits(Path("/s/a.jsonl"), "a", "/repo", None, hits(3, True), 3, "first"))
    qtmodeltester.check(model)
    model.add(SessionHits(Path("/s/b.jsonl"), "b", "/repo", "named", hits(2, False), 9, "", more=True))
    qtmodeltester.check(model)
    assert model.rowCount() == 2 and model.rowCount(model.index(1, 0)) == 2


def test_entry_list_model(qtmodeltester: ModelTester) -> None:
    model = EntryListModel(
        40, lambda row: f"entry {row}", lambda row: f"id{row}", tooltip_of=str, failed=lambda row: row == 3
    )
    qtmodeltester.check(model)
