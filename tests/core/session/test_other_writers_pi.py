"""The reference Pi (1.6) as the other writer of a session file piwork has open: Pi takes no lock and holds
no file open, yet piwork names it and stops writing once it appended, and after it quits goes on from the
entries Pi left. Skips with the reason when the reference implementation is not installed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from piwork.core.session.other_writers import pi_writer
from piwork.core.session.reader import read_session_file
from piwork.core.session.store import SessionReadOnly, open_session
from tests.core.session.helpers import HEADER, conversation, write_session
from tests.support.pi_rpc import CLI, RealPi
from tests.support.reference import MISSING_REASON, reference_installed

pytestmark = [
    pytest.mark.oracle,
    pytest.mark.skipif(not reference_installed(CLI), reason=MISSING_REASON),
    pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs Linux /proc"),
]


def test_piwork_names_a_real_pi_appending_and_stops_writing_until_it_quits(tmp_path: Path) -> None:
    folder = tmp_path / "project"
    folder.mkdir()
    path = write_session(tmp_path / "s.jsonl", conversation(1), {**HEADER, "cwd": str(folder)})
    agent = tmp_path / "home" / "agent"
    agent.mkdir(parents=True)
    with open_session(path) as session:
        with RealPi(folder, path, agent) as pi:
            found = pi_writer([str(folder)])
            assert found is not None and found.pid == pi.pid and found.who == f"Pi (pid {pi.pid})"
            pi.name_session("named in pi")
            written_by_pi = path.read_bytes()
            with pytest.raises(SessionReadOnly, match=rf"Pi \(pid {pi.pid}\) is writing this session"):
                session.tree.append_message({"role": "user", "content": "from piwork", "timestamp": 10})
            assert path.read_bytes() == written_by_pi
            assert found.running()
        assert not found.running()
        change = session.read_changes()
        assert change is not None and change.foreign >= 1
        assert session.take_over(change)
        assert session.tree.name == "named in pi"
        session.tree.append_message({"role": "user", "content": "from piwork", "timestamp": 10})
    records = read_session_file(path).records
    assert records[-2].type == "session_info" and records[-1].parent_id == records[-2].id
