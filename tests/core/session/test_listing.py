"""Session listing: metadata per file, sorting, collisions, custom folders, progress."""

from __future__ import annotations

import contextlib
import os
import threading
import time
from pathlib import Path

import pytest

from piwork.core.session.format import default_session_dir, encode_cwd
from piwork.core.session.listing import (
    LISTING_CONCURRENCY,
    find_session_by_id,
    iter_session_infos,
    list_all_sessions,
    list_sessions,
    most_recent_session,
    session_info,
)

from .helpers import HEADER, assistant, serialize, user, write_session


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


def test_infos_stream_in_file_order_with_progress(tmp_path: Path) -> None:
    paths = [
        _session(
            tmp_path, f"{n:02d}.jsonl", f"s{n}", "/p", [user("u", None, f"q{n}", 1)], f"2024-01-{n + 1:02d}"
        )
        for n in range(25)
    ]
    (tmp_path / "junk.jsonl").write_text("no\n", encoding="utf-8")
    seen: list[tuple[int, int]] = []
    infos = iter_session_infos([*paths[:12], tmp_path / "junk.jsonl", *paths[12:]], lambda *p: seen.append(p))
    first = next(infos)
    assert first.id == "s0"
    assert [first.id, *(i.id for i in infos)] == [f"s{n}" for n in range(25)]
    assert seen == [(n, 26) for n in range(1, 27)]
    assert [i.first_message for i in iter_session_infos(paths[:3])] == ["q0", "q1", "q2"]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_ten_files_are_read_at_once(tmp_path: Path) -> None:
    """Named pipes block their reader until a writer comes: ten must be waiting together."""
    content = (serialize(HEADER) + serialize(user("u", None, "hello", 1))).encode()
    pipes = [tmp_path / f"{n:02d}.jsonl" for n in range(LISTING_CONCURRENCY + 3)]
    for pipe in pipes:
        os.mkfifo(pipe)
    result: list[list[str]] = []
    consumer = threading.Thread(target=lambda: result.append([i.id for i in iter_session_infos(pipes)]))
    consumer.start()
    deadline = time.monotonic() + 20
    held: dict[Path, int] = {}
    try:
        while len(held) < LISTING_CONCURRENCY and time.monotonic() < deadline:
            for pipe in pipes:
                if pipe not in held:
                    with contextlib.suppress(OSError):  # ENXIO: nobody reads it yet
                        held[pipe] = os.open(pipe, os.O_WRONLY | os.O_NONBLOCK)
        assert len(held) == LISTING_CONCURRENCY  # ten readers waiting at the same time, no more
    finally:
        for fd in held.values():
            os.close(fd)  # an empty read: not a session
        while consumer.is_alive() and time.monotonic() < deadline + 10:
            for pipe in pipes:  # serve every later open (header scan, then the lines)
                with contextlib.suppress(OSError):
                    fd = os.open(pipe, os.O_WRONLY | os.O_NONBLOCK)
                    os.write(fd, content)
                    os.close(fd)
            consumer.join(0.01)
    assert not consumer.is_alive()
    assert len(result) == 1
