"""Writing sessions: lazy first write, one line per entry, torn-tail repair, safe migration, locks."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any

import pytest

from piwork.core.ids import SequentialIds
from piwork.core.session import store
from piwork.core.session.file_bodies import FileBodies
from piwork.core.session.format import encode_cwd, serialize
from piwork.core.session.reader import LoadedFile, read_session_file
from piwork.core.session.store import (
    Session,
    SessionReadOnly,
    create_session,
    in_memory_session,
    open_session,
)
from piwork.core.session.tree import SessionTree

from .helpers import assistant, conversation, user, write_session

ASSISTANT = assistant("x", None, "hi")["message"]


def test_new_session_is_written_at_the_first_user_message(tmp_path: Path) -> None:
    session = create_session("/home/ana/proj", agent_dir=tmp_path, new_id=SequentialIds())
    assert session.path is not None
    assert session.path.parent == tmp_path / "sessions" / encode_cwd("/home/ana/proj")
    assert session.path.name.endswith(f"_{session.session_id}.jsonl")
    session.tree.append_model_change("anthropic", "claude")
    assert not session.path.exists()
    session.tree.append_message({"role": "user", "content": "hello", "timestamp": 1})
    lines = session.path.read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["type"] for line in lines] == ["session", "model_change", "message"]  # as Pi 1.6
    session.tree.append_message(ASSISTANT)
    lines = session.path.read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["type"] for line in lines] == ["session", "model_change", "message", "message"]
    session.tree.append_message({"role": "user", "content": "more", "timestamp": 2})
    assert len(session.path.read_text(encoding="utf-8").splitlines()) == 5
    session.close()
    with open_session(session.path, writable=False) as again:
        assert again.tree.leaf_id == "$ID:0004"
        assert [r.parent_id for r in again.tree.records] == [None, "$ID:0001", "$ID:0002", "$ID:0003"]


def test_session_without_a_message_is_never_written(tmp_path: Path) -> None:
    session = create_session(str(tmp_path), session_dir=tmp_path / "s")
    session.tree.append_model_change("anthropic", "claude")
    session.tree.append_thinking_level_change("high")
    session.close()
    assert list((tmp_path / "s").iterdir()) == []


def test_error_assistant_counts_for_the_first_write(tmp_path: Path) -> None:
    session = create_session(str(tmp_path), session_dir=tmp_path)
    session.tree.append_message({**ASSISTANT, "stopReason": "error", "errorMessage": "boom"})
    assert session.path is not None and session.path.exists()


def test_entry_key_order_matches_the_format(tmp_path: Path) -> None:
    session = in_memory_session(str(tmp_path), new_id=SequentialIds())
    tree = session.tree
    tree.append_custom_entry("ext", {"n": 1})
    tree.append_custom_message("note", "text", True)
    tree.append_compaction("sum", "$ID:0001", 100, {"readFiles": [], "modifiedFiles": []}, False)
    tree.branch_with_summary(None, "left", None, False)
    keys = [list(r.body) for r in tree.records]
    assert keys[0] == ["type", "customType", "data", "id", "parentId", "timestamp"]
    assert keys[1] == ["type", "customType", "content", "display", "id", "parentId", "timestamp"]
    assert keys[2] == [
        "type",
        "id",
        "parentId",
        "timestamp",
        "summary",
        "firstKeptEntryId",
        "tokensBefore",
        "details",
        "fromHook",
    ]
    assert keys[3] == ["type", "id", "parentId", "timestamp", "fromId", "summary", "fromHook"]
    assert tree.records[3].body["fromId"] == "$ID:0003" and tree.records[3].parent_id is None
    tree.reset_leaf()
    tree.branch_with_summary("$ID:0001", "from nowhere")
    assert tree.records[4].body["fromId"] == "root" and tree.records[4].parent_id == "$ID:0001"


def test_viewing_never_writes_and_writing_repairs_the_torn_tail_first(tmp_path: Path) -> None:
    path = write_session(tmp_path / "s.jsonl", conversation(1))
    with open(path, "a", encoding="utf-8") as out:
        out.write('{"type":"message","id":"cut')
    before = path.read_bytes()
    with open_session(path, writable=False) as viewer:
        assert viewer.tree.leaf_id == "a0"
        with pytest.raises(SessionReadOnly):
            viewer.tree.append_message({"role": "user", "content": "x", "timestamp": 1})
    assert path.read_bytes() == before
    with open_session(path) as writer:
        assert path.read_bytes() == before  # the repair waits for the first append
        writer.tree.append_message({"role": "user", "content": "next", "timestamp": 3})
    data = path.read_bytes()
    assert data.startswith(before + b"\n{")
    loaded = read_session_file(path)
    assert [r.id for r in loaded.records][-1] == loaded.records[-1].id
    assert [d.kind for d in loaded.diagnostics] == ["malformed_json"]
    assert loaded.records[-1].parent_id == "a0"


def test_empty_file_gets_a_header(tmp_path: Path) -> None:
    path = tmp_path / "new.jsonl"
    path.write_bytes(b"")
    with open_session(path, cwd="/work/x") as session:
        header = json.loads(path.read_text(encoding="utf-8"))
        assert header["type"] == "session" and header["cwd"] == "/work/x" and header["version"] == 3
        assert session.session_id == header["id"]


def test_legacy_file_is_migrated_through_a_backup(tmp_path: Path) -> None:
    path = tmp_path / "old.jsonl"
    original = (
        '{"type":"session","id":"s1","timestamp":"2024-12-03T14:00:00.000Z","cwd":"/p"}\n'
        '{"type":"message","timestamp":"2024-12-03T14:00:01.000Z","message":{"role":"user","content":"v1"}}\n'
    )
    path.write_text(original, encoding="utf-8")
    with open_session(path, writable=False, new_id=SequentialIds()) as viewer:
        assert viewer.tree.leaf_id == "$ID:0001"
    assert path.read_text(encoding="utf-8") == original and not list(tmp_path.glob("*.bak-*"))
    with open_session(path, new_id=SequentialIds()) as writer:
        assert writer.tree.leaf_id == "$ID:0001"
    assert (tmp_path / "old.jsonl.bak-v1").read_text(encoding="utf-8") == original
    assert path.read_text(encoding="utf-8") == (
        '{"type":"session","id":"s1","timestamp":"2024-12-03T14:00:00.000Z","cwd":"/p","version":3}\n'
        '{"type":"message","timestamp":"2024-12-03T14:00:01.000Z","message":{"role":"user","content":"v1"},'
        '"id":"$ID:0001","parentId":null}\n'
    )
    assert not [p for p in tmp_path.iterdir() if ".tmp-" in p.name]
    path.write_text(original, encoding="utf-8")
    open_session(path).close()
    assert (tmp_path / "old.jsonl.bak-v1.2").read_text(encoding="utf-8") == original


def test_second_writer_gets_a_read_only_session(tmp_path: Path) -> None:
    path = write_session(tmp_path / "s.jsonl", conversation(1))
    with open_session(path) as first:
        code = textwrap.dedent(
            f"""
            from piwork.core.session.store import open_session
            s = open_session({str(path)!r})
            print(s.read_only)
            """
        )
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
        assert out.stdout.strip() == "True"
        first.tree.append_message({"role": "user", "content": "still mine", "timestamp": 9})
    assert read_session_file(path).records[-1].role == "user"


def test_external_append_is_noticed_and_reloaded_before_writing(tmp_path: Path) -> None:
    path = write_session(tmp_path / "s.jsonl", conversation(1))
    with open_session(path) as session:
        notices: list[str] = []
        session.on_notice = notices.append
        with open(path, "a", encoding="utf-8") as other:  # another program (e.g. Pi) appends
            other.write(serialize(user("pi1", "a0", "from pi", 9)))
        session.tree.append_message({"role": "user", "content": "from piwork", "timestamp": 10})
        assert notices and "another program" in notices[0]
        assert session.tree.has("pi1")
        assert session.tree.records[-1].parent_id == "a0"  # our leaf is kept
    assert [r.id for r in read_session_file(path).records][:3] == ["u0", "a0", "pi1"]


def test_an_outside_change_read_ahead_is_used_by_the_next_append(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    reads: list[Path] = []

    def counted(path: Path, *args: Any, **kwargs: Any) -> LoadedFile:
        reads.append(Path(path))
        return read_session_file(path, *args, **kwargs)

    monkeypatch.setattr(store, "read_session_file", counted)
    path = write_session(tmp_path / "s.jsonl", conversation(1))
    with open_session(path) as session:
        assert not session.read_outside_change()  # nothing changed yet: nothing read
        notices: list[str] = []
        session.on_notice = notices.append
        with open(path, "a", encoding="utf-8") as other:
            other.write(serialize(user("pi1", "a0", "from pi", 9)))
        reads.clear()
        assert session.read_outside_change()  # what a worker thread does when the file changes
        assert not session.tree.has("pi1")  # nothing applied yet: the session is as it was
        session.tree.append_message({"role": "user", "content": "from piwork", "timestamp": 10})
        assert len(reads) == 1  # the append used what was read ahead
        assert notices and "another program" in notices[0]
        assert session.tree.has("pi1") and session.tree.records[-1].parent_id == "a0"
    assert [r.id for r in read_session_file(path).records][:3] == ["u0", "a0", "pi1"]


def test_a_read_ahead_the_file_has_moved_past_is_not_used(tmp_path: Path) -> None:
    path = write_session(tmp_path / "s.jsonl", conversation(1))
    with open_session(path) as session:
        with open(path, "a", encoding="utf-8") as other:
            other.write(serialize(user("pi1", "a0", "from pi", 9)))
        assert session.read_outside_change()
        with open(path, "a", encoding="utf-8") as other:  # a second outside append after the read
            other.write(serialize(user("pi2", "pi1", "more from pi", 10)))
        session.tree.append_message({"role": "user", "content": "from piwork", "timestamp": 11})
        assert session.tree.has("pi1") and session.tree.has("pi2")


def test_killed_writer_loses_at_most_the_entry_being_written(tmp_path: Path) -> None:
    path = write_session(tmp_path / "s.jsonl", [user("u0", None, "start"), assistant("a0", "u0", "ok")])
    code = textwrap.dedent(
        f"""
        import sys
        from piwork.core.session.store import open_session
        s = open_session({str(path)!r})
        big = "x" * 200_000
        n = 0
        while True:
            s.tree.append_message({{"role": "user", "content": big, "timestamp": n}})
            n += 1
            if n == 5:
                print("ready", flush=True)
        """
    )
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "ready"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    loaded = read_session_file(path)
    assert loaded.status == "ok"
    assert len(loaded.records) >= 7
    assert {d.kind for d in loaded.diagnostics} <= {"torn_tail"}
    with open_session(path) as session:  # a later writer continues cleanly after any fragment
        session.tree.append_message({"role": "user", "content": "after", "timestamp": 1})
    assert read_session_file(path).records[-1].parent_id == loaded.records[-1].id


def test_write_failure_does_not_touch_existing_files(tmp_path: Path) -> None:
    session = create_session(str(tmp_path), session_dir=tmp_path)
    assert session.path is not None
    session.path.write_text("someone else's file\n", encoding="utf-8")
    with pytest.raises(FileExistsError):
        session.tree.append_message(ASSISTANT)
    assert session.path.read_text(encoding="utf-8") == "someone else's file\n"


def test_legacy_file_held_by_another_writer_is_migrated_in_memory_only(tmp_path: Path) -> None:
    import fcntl

    path = tmp_path / "old.jsonl"
    original = '{"type":"session","id":"s1","timestamp":"2024-12-03T14:00:00.000Z","cwd":"/p","version":2}\n'
    path.write_text(original, encoding="utf-8")
    with open(path, "rb") as holder:
        fcntl.flock(holder.fileno(), fcntl.LOCK_EX)
        code = f"from piwork.core.session.store import open_session; print(open_session({str(path)!r}).read_only)"
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True"
    assert path.read_text(encoding="utf-8") == original and not list(tmp_path.glob("*.bak-*"))


def test_an_opened_tree_reads_bodies_through_the_loader_it_was_built_with(tmp_path: Path) -> None:
    path = write_session(tmp_path / "s.jsonl", conversation(2))
    with open_session(path, writable=False) as session:
        assert session.tree.body_loader is session.bodies
        record = session.tree.record("a1")
        assert record is not None and record.body is None  # kept light: read back on demand
        assert session.tree.body(record)["message"]["content"][0]["text"] == "answer 1"
    with pytest.raises(ValueError, match="body loader"):
        Session(SessionTree(None), path, str(tmp_path), tmp_path, bodies=FileBodies(path), flushed=True)


def test_an_in_memory_tree_holds_its_bodies() -> None:
    session = in_memory_session("/home/ana/proj")
    session.tree.append_message({"role": "user", "content": "hello", "timestamp": 1})
    assert [e["message"]["content"] for e in session.tree.entries()] == ["hello"]
    assert SessionTree(None).body_loader is None  # a bare tree (tests, previews) needs no loader


def _file_types(path: Path) -> list[str]:
    return [json.loads(line)["type"] for line in path.read_text(encoding="utf-8").splitlines()]


def test_appends_made_writing_later_reach_the_file_only_when_written_in_order(tmp_path: Path) -> None:
    session = create_session(str(tmp_path), session_dir=tmp_path / "s", new_id=SequentialIds())
    assert session.path is not None
    with session.writing_later():
        session.tree.append_message({"role": "user", "content": "hello", "timestamp": 1})
        session.tree.append_message(ASSISTANT)  # the first write of the file, queued
        session.tree.set_label("$ID:0001", "first")
        session.tree.set_label("$ID:0001", "second")
    assert not session.path.exists() and session.writes_pending
    assert session.tree.label("$ID:0001") == "second"  # the tree changed at once
    session.write_pending()
    assert not session.writes_pending
    assert _file_types(session.path) == ["session", "message", "message", "label", "label"]
    session.close()
    with open_session(session.path, writable=False) as again:
        assert again.tree.label("$ID:0001") == "second"


def test_pending_writes_from_two_threads_land_once_each_in_append_order(tmp_path: Path) -> None:
    path = write_session(tmp_path / "s.jsonl", conversation())
    session = open_session(path, new_id=SequentialIds())
    before = len(path.read_text(encoding="utf-8").splitlines())
    with session.writing_later():
        for n in range(200):
            session.tree.append_message({"role": "user", "content": f"m{n}", "timestamp": n})
    threads = [threading.Thread(target=session.write_pending) for _ in range(2)]
    for thread in threads:
        thread.start()
    session.write_pending()
    for thread in threads:
        thread.join()
    lines = path.read_text(encoding="utf-8").splitlines()[before:]
    assert [json.loads(line)["message"]["content"] for line in lines] == [f"m{n}" for n in range(200)]
    session.close()


def test_closing_writes_what_is_still_queued(tmp_path: Path) -> None:
    path = write_session(tmp_path / "s.jsonl", conversation())
    session = open_session(path, new_id=SequentialIds())
    with session.writing_later():
        session.tree.append_message({"role": "user", "content": "last words", "timestamp": 9})
    session.close()
    assert json.loads(path.read_text(encoding="utf-8").splitlines()[-1])["message"]["content"] == "last words"


def test_a_failed_first_write_is_retried_whole_by_the_next_append(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the session folder should be", encoding="utf-8")
    session = create_session(str(tmp_path), session_dir=tmp_path, new_id=SequentialIds())
    session.path = blocker / "session.jsonl"
    with session.writing_later():
        session.tree.append_message({"role": "user", "content": "hello", "timestamp": 1})
        session.tree.append_message(ASSISTANT)
        session.tree.append_message({"role": "user", "content": "more", "timestamp": 2})
    with pytest.raises(OSError):
        session.write_pending()
    assert not session.writes_pending and not session.flushed
    blocker.unlink()  # the folder can be made now
    session.tree.append_message(ASSISTANT)
    assert _file_types(session.path) == ["session", "message", "message", "message", "message"]
    session.close()
