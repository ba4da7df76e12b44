"""Full-output log folders (listing, metadata, size cap) and the default tool registry."""

from __future__ import annotations

import asyncio
import os
import stat
import time
from pathlib import Path

import pytest

from piwork.core.tools.base import ToolContext
from piwork.core.tools.logs import (
    create_log_file,
    enforce_size_cap,
    list_session_logs,
    session_log_dir,
    write_log_metadata,
)
from piwork.core.tools.registry import ALL_TOOL_NAMES, DEFAULT_ACTIVE_TOOLS, ToolOptions, create_default_tools

from .helpers import call


def _log(folder: Path, size: int, age: float) -> Path:
    path, handle = create_log_file(folder)
    with handle:
        handle.write(b"x" * size)
    os.utime(path, (time.time() - age, time.time() - age))
    write_log_metadata(path, {"command": f"make {size}", "toolCallId": f"id{size}"})
    return Path(path)


def test_session_folders_are_private_and_path_safe(tmp_path: Path) -> None:
    folder = session_log_dir(tmp_path, "../weird id/")
    assert folder.parent == tmp_path / "logs" and ".." not in folder.name and "/" not in folder.name
    path = _log(folder, 10, 0)
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700 and stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.with_suffix(".json").stat().st_mode) == 0o600


def test_listing_is_oldest_first_with_metadata_and_survives_corrupt_sidecars(tmp_path: Path) -> None:
    folder = session_log_dir(tmp_path, "s1")
    newer, older = _log(folder, 20, 10), _log(folder, 30, 100)
    newer.with_suffix(".json").write_text("{not json")
    logs = list_session_logs(folder)
    assert [log.path for log in logs] == [older, newer]
    assert logs[0].command == "make 30" and logs[0].tool_call_id == "id30" and logs[0].size == 30
    assert logs[1].metadata == {} and logs[1].command is None
    assert list_session_logs(tmp_path / "missing") == []


def test_size_cap_removes_oldest_logs_across_sessions_but_never_kept_ones(tmp_path: Path) -> None:
    root = tmp_path / "logs"
    oldest = _log(session_log_dir(tmp_path, "a"), 100, 300)
    middle = _log(session_log_dir(tmp_path, "b"), 100, 200)
    newest = _log(session_log_dir(tmp_path, "a"), 100, 100)
    removed = enforce_size_cap(root, 150, keep=frozenset({str(oldest)}))
    assert removed == [middle, newest] and oldest.exists() and not middle.with_suffix(".json").exists()
    assert enforce_size_cap(tmp_path / "none", 0) == []


def test_bash_applies_the_cap_after_writing_a_log(tmp_path: Path) -> None:
    old = _log(session_log_dir(tmp_path, "old"), 2_000_000, 1000)
    registry = create_default_tools(["bash"], ToolOptions(logs_max_total_mb=1))
    ctx = ToolContext(cwd=str(tmp_path), log_dir=session_log_dir(tmp_path, "new"))
    outcome = asyncio.run(registry.run("c", "bash", {"command": "seq 1 5000"}, ctx))
    assert not old.exists() and Path((outcome.details or {})["fullOutputPath"]).exists()


def test_default_registry() -> None:
    assert create_default_tools().names() == list(DEFAULT_ACTIVE_TOOLS) == ["read", "bash", "edit", "write"]
    everything = create_default_tools(ALL_TOOL_NAMES)
    assert everything.names() == list(ALL_TOOL_NAMES)
    for tool in everything:
        assert tool.description and tool.snippet and tool.parameters["type"] == "object"
    assert "50KB" in everything.get("read").description  # type: ignore[union-attr]
    with pytest.raises(ValueError, match="Unknown built-in tool"):
        create_default_tools(["read", "telepathy"])


def test_edit_and_write_share_one_lock_table(tmp_path: Path) -> None:
    registry = create_default_tools(["edit", "write"])
    assert registry.get("edit").locks is registry.get("write").locks  # type: ignore[union-attr]
    assert not call("write", {"path": "x.txt", "content": "1"}, tmp_path).is_error


def test_tool_options_from_settings(tmp_path: Path) -> None:
    options = ToolOptions.from_settings(
        tmp_path, {"shellPath": "/bin/sh", "shellCommandPrefix": "set -e", "logs": {"maxTotalMB": 64}}
    )
    assert (options.shell_path, options.shell_command_prefix, options.logs_max_total_mb) == (
        "/bin/sh",
        "set -e",
        64,
    )
    fallback = ToolOptions.from_settings(None, {"shellPath": 3, "logs": {"maxTotalMB": "lots"}})
    assert fallback.shell_path is None and fallback.logs_max_total_mb == 512
