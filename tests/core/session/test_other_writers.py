"""One writer per session file: a Pi appending to it (found in /proc, as Pi takes no lock) or another piwork
holding its writer lock. piwork stops writing rather than interleave, follows what the other writer adds, and
takes the file over once it has stopped. Each other writer is a real second process."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from piwork.core.session.other_writers import appending_writer, lock_held_by, pi_processes, pi_writer
from piwork.core.session.reader import read_session_file
from piwork.core.session.store import SessionReadOnly, open_session
from tests.core.session.helpers import HEADER, conversation, user, write_session
from tests.support.pi_like_writer import PiLikeWriter
from tests.support.piwork_holder import PiworkHolder

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs Linux /proc")


def _session_in(folder: Path) -> Path:
    return write_session(folder / "s.jsonl", conversation(1), {**HEADER, "cwd": str(folder)})


def _ids(path: Path) -> list[str]:
    return [str(r.id) for r in read_session_file(path).records]


def test_a_pi_in_the_sessions_folder_is_found_and_named_until_it_stops(tmp_path: Path) -> None:
    other = tmp_path / "elsewhere"
    other.mkdir()
    with PiLikeWriter(tmp_path) as pi:
        assert pi_processes([str(tmp_path)]) == [pi.pid]
        assert pi_processes([str(other)]) == []
        writer = pi_writer([str(other), str(tmp_path)])
        assert writer is not None and writer.who == f"Pi (pid {pi.pid})" and writer.running()
        assert appending_writer([str(tmp_path)]).who == f"Pi (pid {pi.pid})"
        pi.stop()
        assert not writer.running()
    assert appending_writer([str(tmp_path)]).who == "Another program"


def test_piwork_stops_writing_when_a_running_pi_appended(tmp_path: Path) -> None:
    path = _session_in(tmp_path)
    with open_session(path) as session, PiLikeWriter(tmp_path) as pi:
        pi.append(path, user("pi1", "a0", "from pi", 9))
        with pytest.raises(SessionReadOnly, match=rf"Pi \(pid {pi.pid}\) is writing this session"):
            session.tree.append_message({"role": "user", "content": "from piwork", "timestamp": 10})
        assert session.read_only and _ids(path) == ["u0", "a0", "pi1"]
        assert lock_held_by(path) is None  # the writer lock was let go with the file


def test_appends_of_a_pi_that_has_stopped_are_reloaded_and_piwork_goes_on(tmp_path: Path) -> None:
    path = _session_in(tmp_path)
    with open_session(path) as session:
        with PiLikeWriter(tmp_path) as pi:
            pi.append(path, user("pi1", "a0", "from pi", 9))
        session.tree.append_message({"role": "user", "content": "from piwork", "timestamp": 10})
        assert not session.read_only and session.tree.has("pi1")
    assert _ids(path)[:3] == ["u0", "a0", "pi1"] and len(_ids(path)) == 4


def test_a_pi_running_in_the_folder_alone_does_not_make_it_read_only(tmp_path: Path) -> None:
    path = _session_in(tmp_path)
    with PiLikeWriter(tmp_path) as pi:
        pi.append(path, user("pi1", "a0", "from pi", 9))  # before piwork opened it: part of what it reads
        with open_session(path) as session:
            assert not session.read_only and session.tree.has("pi1")


def test_a_read_only_session_follows_the_holders_appends_and_takes_over_when_it_lets_go(
    tmp_path: Path,
) -> None:
    path = _session_in(tmp_path)
    with PiworkHolder(path) as holder, open_session(path) as session:
        assert session.read_only and f"(pid {holder.pid})" in str(session.read_only_reason)
        assert session.read_changes() is None  # nothing new yet
        holder.append("from the other window")
        change = session.read_changes()
        assert change is not None and change.foreign == 1
        assert session.follow(change)
        last = session.tree.records[-1]
        assert last.role == "user" and session.tree.leaf_id == last.id  # the view is at its end
        holder_who = lock_held_by(path)
        assert holder_who is not None and holder_who.pid == holder.pid
        assert not session.take_over(session.read_changes())  # still held: stays read-only, says who
        assert session.read_only and f"(pid {holder.pid})" in str(session.read_only_reason)
        holder.append("one more")
        holder.let_go()
        assert lock_held_by(path) is None
        assert session.take_over(session.read_changes())
        assert not session.read_only and session.tree.records[-1].preview.endswith("one more")
        session.tree.append_message({"role": "user", "content": "mine now", "timestamp": 5})
        now_held = lock_held_by(path)
        assert now_held is not None and now_held.pid == os.getpid()
    records = read_session_file(path).records
    assert records[-1].parent_id == records[-2].id  # continued from the other window's last entry


def test_a_change_read_before_the_file_moved_on_is_not_applied(tmp_path: Path) -> None:
    path = _session_in(tmp_path)
    with PiworkHolder(path) as holder, open_session(path) as session:
        holder.append("first")
        change = session.read_changes()
        holder.append("second")
        assert change is not None and not session.follow(change)
        assert len(session.tree.records) == 2
        newer = session.read_changes()
        assert newer is not None and newer.foreign == 2 and session.follow(newer)
        assert len(session.tree.records) == 4


def test_own_appends_are_not_foreign(tmp_path: Path) -> None:
    path = _session_in(tmp_path)
    with open_session(path) as session:
        session.tree.append_message({"role": "user", "content": "mine", "timestamp": 5})
        assert session.read_changes() is None
        with open(path, "a", encoding="utf-8") as other:
            other.write('{"type":"label","id":"x1","parentId":null,"timestamp":"t"}\n')
        change = session.read_changes()
        assert change is not None and change.foreign == 1


def test_only_entries_appended_past_what_piwork_knew_count_as_another_writers(tmp_path: Path) -> None:
    path = _session_in(tmp_path)
    with open_session(path) as session:
        path.write_text(path.read_text().replace('"id":"a0"', '"id":"b0"'))  # an edit, not an append
        edited = session.read_changes()
        assert edited is not None and edited.foreign == 0
        with open(path, "a", encoding="utf-8") as other:
            other.write('{"type":"label","id":"x1","parentId":null,"timestamp":"t"}\n')
        appended = session.read_changes()
        assert appended is not None and appended.foreign == 1  # kept for the next append to use


def test_following_appends_indexes_only_the_new_entries_and_keeps_a_leaf_moved_elsewhere(
    tmp_path: Path,
) -> None:
    path = _session_in(tmp_path)
    with PiworkHolder(path) as holder, open_session(path) as session:
        first = session.tree.records[0]
        events: list[str] = []
        session.tree.subscribe(lambda event: events.append(event.kind))
        holder.append("one")
        change = session.read_changes()
        assert change is not None and change.appended_to == 2 and len(change.loaded.records) == 1
        assert session.follow(change)
        assert session.tree.records[0] is first and events == ["append"]  # the rest was not read again
        assert session.tree.leaf_id == session.tree.records[-1].id
        session.tree.branch("u0")  # the user looks at an earlier entry
        holder.append("two")
        change = session.read_changes()
        assert change is not None and session.follow(change)
        assert session.tree.leaf_id == "u0" and len(session.tree.records) == 4
        assert session.tree.body(session.tree.records[-1])["message"]["content"] == "two"


def test_a_last_line_still_being_written_is_left_for_the_next_read(tmp_path: Path) -> None:
    path = _session_in(tmp_path)
    with PiworkHolder(path), open_session(path) as session:
        with open(path, "a", encoding="utf-8") as other:
            other.write('{"type":"label","id":"x1","parentId":"a0","timestamp":"t"}\n{"type":"lab')
        change = session.read_changes()  # read whole: the torn line is not an entry yet
        assert change is not None and change.appended_to is None and change.foreign == 1
        assert session.follow(change) and session.tree.records[-1].id == "x1"
        with open(path, "a", encoding="utf-8") as other:
            other.write('el","id":"x2","parentId":"x1","timestamp":"t"}\n')
        change = session.read_changes()
        assert change is not None and session.follow(change)
        assert [r.id for r in session.tree.records][-2:] == ["x1", "x2"]
