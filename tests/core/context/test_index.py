from __future__ import annotations

import hashlib
import json
from pathlib import Path

from piwork.core.context.index import (
    build_task_pack,
    index_status,
    index_summary,
    load_index,
    refresh_index,
    write_index,
)


def _sha(data: str) -> str:
    return hashlib.sha256(data.encode()).hexdigest()


def _project(root: Path, count: int = 10) -> None:
    """``count`` modules, each one entry citing its own file."""
    entries = []
    for i in range(count):
        rel = f"src/mod{i}.py"
        body = f"def f{i}(): pass\n"
        (root / "src").mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(body)
        entries.append(
            {
                "id": f"mod{i}",
                "title": f"Module {i}",
                "summary": f"handles billing step {i}",
                "tags": ["billing"],
                "files": [{"path": rel, "sha256": _sha(body)}],
            }
        )
    entries[0]["title"] = "Session storage"
    entries[0]["summary"] = "writes session files\x07 atomically\nand\tappends lines"
    (root / ".pi").mkdir(exist_ok=True)
    (root / ".pi" / "context-index.json").write_text(
        json.dumps({"version": 1, "builtAt": "2026-12-01T10:00:00Z", "entries": entries})
    )


def _status(root: Path):  # type: ignore[no-untyped-def]
    loaded = load_index(str(root))
    assert loaded.index is not None, loaded.diagnostics
    return index_status(str(root), loaded.index)


def test_all_fresh(tmp_path: Path) -> None:
    _project(tmp_path)
    status = _status(tmp_path)
    assert (status.count("fresh"), status.count("changed"), status.count("missing")) == (10, 0, 0)
    assert status.fresh and status.ratio == 1.0


def test_eighty_percent_rule_changed_and_missing(tmp_path: Path) -> None:
    _project(tmp_path)
    (tmp_path / "src/mod1.py").write_text("changed\n")
    (tmp_path / "src/mod2.py").unlink()
    status = _status(tmp_path)
    assert (status.count("fresh"), status.count("changed"), status.count("missing")) == (8, 1, 1)
    assert status.fresh  # exactly 80%
    (tmp_path / "src/mod3.py").write_text("changed too\n")
    status = _status(tmp_path)
    assert not status.fresh and status.stale_reason == "30% entries changed"
    assert status.to_json()["reason"] == "30% entries changed"


def test_files_outside_the_project_count_as_missing(tmp_path: Path) -> None:
    outside = tmp_path / "secret.txt"
    outside.write_text("x")
    root = tmp_path / "repo"
    root.mkdir()
    (root / ".pi").mkdir()
    (root / ".pi" / "context-index.json").write_text(
        json.dumps(
            {
                "version": 1,
                "entries": [
                    {"id": "a", "files": [{"path": "../secret.txt", "sha256": _sha("x")}]},
                    {"id": "b", "files": [{"path": str(outside), "sha256": _sha("x")}]},
                ],
            }
        )
    )
    status = _status(root)
    assert status.count("missing") == 2


def test_broken_index_gives_diagnostics(tmp_path: Path) -> None:
    (tmp_path / ".pi").mkdir()
    path = tmp_path / ".pi" / "context-index.json"
    path.write_text("{oops")
    loaded = load_index(str(tmp_path))
    assert loaded.exists and loaded.index is None and "not valid JSON" in loaded.diagnostics[0].message
    path.write_text(json.dumps({"version": 1, "entries": [{"id": "ok"}, {"title": "no id"}, 5]}))
    loaded = load_index(str(tmp_path))
    assert loaded.index is not None and [e.id for e in loaded.index.entries] == ["ok"]
    assert len(loaded.diagnostics) == 2


def test_incremental_refresh_reuses_unchanged_entries(tmp_path: Path) -> None:
    _project(tmp_path, 4)
    loaded = load_index(str(tmp_path))
    assert loaded.index is not None
    (tmp_path / "src/mod1.py").write_text("new body\n")
    (tmp_path / "src/mod2.py").unlink()
    result = refresh_index(str(tmp_path), loaded.index)
    assert (result.reused, result.updated, result.dropped) == (2, 1, 1)
    by_id = {e.id: e for e in result.index.entries}
    assert by_id["mod0"] is loaded.index.entries[0]  # reused as it was
    assert by_id["mod1"].files[0].sha256 == _sha("new body\n") and by_id["mod1"].summary_outdated
    assert "mod2" not in by_id
    write_index(str(tmp_path), result.index)
    status = _status(tmp_path)
    assert status.count("fresh") == 3 and status.fresh
    assert "summary may be outdated" in index_summary(status)


def test_summary_is_sanitised(tmp_path: Path) -> None:
    _project(tmp_path, 2)
    summary = index_summary(_status(tmp_path))
    assert "writes session files  atomically and appends lines" not in summary
    assert "writes session files atomically and appends lines" in summary
    assert "\x07" not in summary and "\t" not in summary


def test_task_pack_uses_fresh_entries_only_and_a_bounded_finder(tmp_path: Path) -> None:
    _project(tmp_path)
    (tmp_path / "src/mod0.py").write_text("changed\n")
    status = _status(tmp_path)
    pack = build_task_pack("fix session storage writes", status, str(tmp_path))
    assert "mod0" not in [e.id for e in pack.entries]  # its file changed: not used
    assert pack.confidence in ("low", "none")
    pack = build_task_pack("billing step", status, str(tmp_path))
    assert pack.confidence == "high" and len(pack.entries) == 8
    assert pack.finder_paths == ()
    low = build_task_pack("mod7 refactor", status, str(tmp_path))
    assert low.confidence == "low" and "src/mod7.py" in low.finder_paths
    assert "Task pack for: mod7 refactor" in low.render_text()
