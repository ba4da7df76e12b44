"""The open session file, changed by another program, is read ahead in a worker thread; the next append uses
that read and shows the change as before (the reload and its notice come with the append)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from pytestqt.qtbot import QtBot

from piwork.core.session.format import serialize
from piwork.core.session.store import open_session
from piwork.gui.session_file_watch import SessionFileWatch
from tests.core.session.helpers import conversation, user, write_session


def test_an_outside_append_is_read_ahead_and_used_by_the_next_append(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, tmp_path: Path
) -> None:
    path = write_session(tmp_path / "s.jsonl", conversation(1))
    watch = SessionFileWatch()
    with open_session(path) as session:
        notices: list[str] = []
        session.on_notice = notices.append
        watch.watch(session)
        with (
            qtbot.waitSignal(watch.readAhead, timeout=10_000) as read,
            open(path, "a", encoding="utf-8") as other,  # another program (e.g. Pi) appends
        ):
            other.write(serialize(user("pi1", "a0", "from pi", 9)))
        assert read.args == [True]
        assert not session.tree.has("pi1") and not notices  # shown with the next append, as before
        session.tree.append_message({"role": "user", "content": "from piwork", "timestamp": 10})
        assert session.tree.has("pi1") and notices and "another program" in notices[0]
        watch.watch(None)


def test_its_own_appends_read_nothing(qtbot: QtBot, qloop: asyncio.AbstractEventLoop, tmp_path: Path) -> None:
    path = write_session(tmp_path / "s.jsonl", conversation(1))
    watch = SessionFileWatch()
    with open_session(path) as session:
        watch.watch(session)
        with qtbot.waitSignal(watch.readAhead, timeout=10_000) as read:
            session.tree.append_message({"role": "user", "content": "mine", "timestamp": 10})
        assert read.args == [False]
        watch.watch(None)
