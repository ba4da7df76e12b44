"""An append that runs out of space leaves the session file as it was: no torn half line."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from piwork.core.session.reader import read_session_file
from piwork.core.session.store import create_session
from tests.support.tiny_fs import fill, tiny_tmpfs


def test_a_line_cut_by_a_full_disk_is_taken_back(tmp_path: Path) -> None:
    with tiny_tmpfs(tmp_path / "disk", "256k") as mount:
        session = create_session("/project", session_dir=str(mount))
        session.tree.append_message({"role": "user", "content": "hello", "timestamp": 1})
        session.tree.append_message(
            {
                "role": "assistant",
                "content": [{"type": "text", "text": "hi"}],
                "stopReason": "stop",
                "timestamp": 2,
            }
        )
        assert session.path is not None
        before = session.path.read_bytes()
        assert len(before) % 4096 != 0  # the file's last page has room for the start of a line
        fill(mount)
        with pytest.raises(OSError) as caught:
            session.tree.append_message({"role": "user", "content": "x" * 20_000, "timestamp": 3})
        assert caught.value.errno == 28  # ENOSPC, from the real file system
        assert session.path.read_bytes() == before  # the part that fitted was cut off again
        os.unlink(mount / "filler")
        session.tree.append_message({"role": "user", "content": "after", "timestamp": 4})
        session.close()
        lines = session.path.read_bytes().split(b"\n")
        assert lines[-1] == b""
        assert [json.loads(line).get("message", {}).get("content") for line in lines[1:-1]][-1] == "after"
        loaded = read_session_file(session.path)
        assert loaded.status == "ok" and not loaded.torn and not loaded.diagnostics
        if loaded.source is not None:
            loaded.source.close()
