"""A session folder on a full disk: no model request is made, and no empty session file is left."""

from __future__ import annotations

import io
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from piwork.commands import headless
from piwork.core.session.store import create_session
from tests.support.loopback_server import LoopbackServer, Text, Turn
from tests.support.tiny_fs import fill, tiny_tmpfs


@pytest.fixture
def full_disk(tmp_path: Path) -> Iterator[Path]:
    with tiny_tmpfs(tmp_path / "disk", "256k") as mount:
        (mount / "sessions").mkdir()
        fill(mount)
        yield mount / "sessions"


def test_a_new_session_on_a_full_disk_asks_the_model_nothing(
    full_disk: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    agent = tmp_path / "agent"
    agent.mkdir()
    for key in [k for k in os.environ if k.endswith("_API_KEY")]:
        monkeypatch.delenv(key)
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(agent))
    monkeypatch.setenv("PI_CODING_AGENT_SESSION_DIR", str(full_disk))
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.null.Keyring")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-full-disk")
    monkeypatch.chdir(tmp_path)
    with LoopbackServer() as server:
        server.script(Turn([Text("an answer that could not be kept")]))
        out, err = io.StringIO(), io.StringIO()
        args = ["-p", "hello", "--model", f"anthropic/{server.model}", "--base-url", server.url]
        code = headless.main(args, io.StringIO(""), out, err)
        assert server.requests == []
    assert code == 1 and out.getvalue() == ""
    assert (
        "could not save to the session file (No space left on device), so nothing was sent" in err.getvalue()
    )
    assert sorted(p.name for p in full_disk.iterdir()) == []


def test_the_first_write_on_a_full_disk_leaves_no_file(full_disk: Path) -> None:
    session = create_session("/project", session_dir=str(full_disk))
    session.tree.append_model_change("anthropic", "claude-sonnet-4-5")
    with pytest.raises(OSError):  # the file is first written with the first user message
        session.tree.append_message({"role": "user", "content": "x" * 300_000, "timestamp": 1})
    assert list(full_disk.iterdir()) == []
