"""Session listing: metadata per file, sorting, collisions, custom folders, progress."""

from __future__ import annotations

import os
from pathlib import Path

from piwork.core.session.format import default_session_dir, encode_cwd
from piwork.core.session.listing import (
    find_session_by_id,
    list_all_sessions,
    list_sessions,
    most_recent_session,
    session_info,
)

from .helpers import HEADER, assistant, user, write_session


def _session(folder: Path, name: str, session_id: str, cwd: str, entries: list, created: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    header = {**HEADER, "id": session_id, "cwd": cwd, "timestamp": created}
    return write_session(folder / name, entries, header)


def test_metadata_of_one_file(tmp_path: Path) -> None:
    info_entry = {
        "type": "session_info",
        "id": "n",
        "parentId": "a0",
        "timestamp": "2024-12-03T14:00:09.000Z",
        "name": "  Named  ",
    }
    tool = {
        "type": "message",
        "id": "t",
        "parentId": "n",
        "timestamp": "2024-12-03T14:00:10.000Z",
        "message": {
            "role": "toolResult",
            "toolCallId": "c",
            "toolName": "ls",
            "content": [],
            "isError": False,
            "timestamp": 1,
        },
    }
    path = _session(
        tmp_path,
        "a.jsonl",
        "id-1",
        "/p",
        [
            user("u0", None, "", 1),
            user("u1", "u0", "first words", 2),
            assistant("a0", "u1", "reply", 3),
            info_entry,
            tool,
        ],
        "2024-12-03T14:00:00.000Z",
    )
    info = session_info(path)
    assert info is not None
    assert (info.id, info.cwd, info.name, info.message_count) == ("id-1", "/p", "Named", 4)
    assert info.first_message == "first words"
    assert info.all_messages_text == "first words reply"
    assert info.modified_ms == 1733234400000 + 3000
    assert info.size == path.stat().st_size
    assert info.to_json()["modified"] == "2024-12-03T14:00:03.000Z"


def test_listing_sorts_newest_first_and_marks_cwd_collisions(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    folder = default_session_dir("/srv/my-app", agent)
    assert folder.name == encode_cwd("/srv/my/app")
    _session(
        folder, "old.jsonl", "old", "/srv/my-app", [user("u", None, "old", 1)], "2024-01-01T00:00:00.000Z"
    )
    _session(folder, "new.jsonl", "new", "/srv/my-app", [], "2025-06-01T00:00:00.000Z")
    _session(folder, "other.jsonl", "other", "/srv/my/app", [], "2025-03-01T00:00:00.000Z")
    (folder / "junk.jsonl").write_text("not a session\n", encoding="utf-8")
    (folder / "notes.txt").write_text("ignored\n", encoding="utf-8")
    seen: list[tuple[int, int]] = []
    infos = list_sessions(
        "/srv/my-app", agent_dir=agent, progress=lambda done, total: seen.append((done, total))
    )
    assert [(i.id, i.cwd_mismatch) for i in infos] == [("new", False), ("other", True), ("old", False)]
    assert infos[2].first_message == "old" and infos[0].first_message == "(no messages)"
    assert seen[-1] == (4, 4)


def test_custom_folder_keeps_only_this_project_and_all_lists_everything(tmp_path: Path) -> None:
    custom = tmp_path / "custom"
    _session(custom, "a.jsonl", "a", "/p1", [], "2024-01-01T00:00:00.000Z")
    _session(custom, "b.jsonl", "b", "/p2", [], "2024-01-02T00:00:00.000Z")
    assert [i.id for i in list_sessions("/p1", agent_dir=tmp_path, session_dir=custom)] == ["a"]
    agent = tmp_path / "agent"
    _session(default_session_dir("/p1", agent), "x.jsonl", "x", "/p1", [], "2024-01-03T00:00:00.000Z")
    _session(default_session_dir("/p2", agent), "y.jsonl", "y-long-id", "/p2", [], "2024-01-04T00:00:00.000Z")
    assert [i.id for i in list_all_sessions(agent_dir=agent)] == ["y-long-id", "x"]
    assert find_session_by_id("y-lo", "/p1", agent_dir=agent) == default_session_dir("/p2", agent) / "y.jsonl"
    assert find_session_by_id("x", "/p1", agent_dir=agent) == default_session_dir("/p1", agent) / "x.jsonl"
    assert find_session_by_id("zzz", "/p1", agent_dir=agent) is None


def test_most_recent_uses_file_mtime(tmp_path: Path) -> None:
    a = _session(tmp_path, "a.jsonl", "a", "/p", [], "2030-01-01T00:00:00.000Z")
    b = _session(tmp_path, "b.jsonl", "b", "/p", [], "2020-01-01T00:00:00.000Z")
    os.utime(a, (1_000_000, 1_000_000))
    assert most_recent_session(tmp_path) == b


def test_unsupported_files_are_listed_as_such(tmp_path: Path) -> None:
    (tmp_path / "v4.jsonl").write_text('{"v":4,"kind":"header","id":"h"}\n', encoding="utf-8")
    info = session_info(tmp_path / "v4.jsonl")
    assert info is not None and info.unsupported and info.to_json()["unsupported"] is True
