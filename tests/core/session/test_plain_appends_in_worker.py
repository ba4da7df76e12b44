"""``Session.write_appends_in_worker``: an append made by a plain call changes the tree at once and its line
is written by a worker of the loop, in order; a write that fails there becomes a notice, losing nothing in
memory. Real files in a temp folder; the failing disk is a real tmpfs filled up (needs root, else skipped)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from piwork.core.session.store import Session, create_session
from tests.support.tiny_fs import fill, tiny_tmpfs


def _saved_session(folder: Path) -> Session:
    session = create_session("/project", session_dir=str(folder))
    session.tree.append_message({"role": "user", "content": "hello", "timestamp": 1})
    session.tree.append_message({"role": "assistant", "content": [], "stopReason": "stop", "timestamp": 2})
    assert session.flushed and session.path is not None
    return session


async def _written(session: Session) -> None:
    while session.writes_pending:  # the worker's write, awaited on the loop
        await asyncio.sleep(0.005)


def test_a_plain_append_is_written_by_a_worker_after_the_call_returns(tmp_path: Path) -> None:
    session = _saved_session(tmp_path)
    path = session.path
    assert path is not None

    async def run() -> None:
        session.write_appends_in_worker(asyncio.get_running_loop())
        before = path.read_bytes()
        session.tree.set_name("first")
        session.tree.set_name("second")
        assert session.tree.name == "second" and path.read_bytes() == before  # nothing written yet
        await _written(session)

    asyncio.run(run())
    names = [json.loads(line).get("name") for line in path.read_text().splitlines()[-2:]]
    assert names == ["first", "second"]
    session.close()


def test_a_failed_write_in_the_worker_becomes_a_notice(tmp_path: Path) -> None:
    with tiny_tmpfs(tmp_path / "disk", "256k") as mount:
        session = _saved_session(mount)
        fill(mount)
        notices: list[str] = []

        async def run() -> None:
            said = asyncio.Event()
            session.on_notice = lambda text: (notices.append(text), said.set())
            session.write_appends_in_worker(asyncio.get_running_loop())
            session.tree.set_name("n" * 200_000)  # more than any slack left on the full disk
            await asyncio.wait_for(said.wait(), 10)

        asyncio.run(run())
        assert notices and notices[-1].startswith("Could not write to the session file:")
        assert "No space left" in notices[-1]
        assert session.tree.name == "n" * 200_000  # kept in memory
        session.close()
