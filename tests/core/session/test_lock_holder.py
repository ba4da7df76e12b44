"""A session held by another piwork opens read-only, and the message names what holds it."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from piwork.core.session.lock_holder import lock_holder_pids, read_only_reason
from piwork.core.session.store import SessionReadOnly, create_session, open_session
from tests.support.loopback_server import Failure, LoopbackServer, Text, Turn

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/locks")


def _session_file(tmp_path: Path) -> Path:
    session = create_session(str(tmp_path), session_dir=str(tmp_path / "sessions"))
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
    session.close()
    return session.path


def _env(tmp_path: Path) -> dict[str, str]:
    agent = tmp_path / "agent"
    agent.mkdir(exist_ok=True)
    return {
        **{k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")},
        "HOME": str(tmp_path),
        "PI_CODING_AGENT_DIR": str(agent),
        "PYTHON_KEYRING_BACKEND": "keyring.backends.null.Keyring",
        "ANTHROPIC_API_KEY": "sk-lock-holder-test",
    }


@pytest.mark.timeout(90)
def test_a_headless_run_holding_the_session_is_named(tmp_path: Path) -> None:
    path = _session_file(tmp_path)
    with LoopbackServer() as server:
        server.script(Turn([Text("never")], failure=Failure("hang")))
        args = ["-p", "again", "--session", str(path), "--model", f"anthropic/{server.model}"]
        run = subprocess.Popen(
            [sys.executable, "-m", "piwork", *args, "--base-url", server.url],
            cwd=tmp_path,
            env=_env(tmp_path),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            deadline = time.monotonic() + 60
            while not server.requests and time.monotonic() < deadline:  # the run has the session open
                time.sleep(0.05)
            assert server.requests
            session = open_session(path)
            try:
                assert session.read_only
                notice = session.notices[-1]
                assert (
                    notice
                    == f"A headless piwork run (pid {run.pid}) is writing this session, so it is open read-only here."
                )
                with pytest.raises(SessionReadOnly, match="headless piwork run"):
                    session.tree.append_message({"role": "user", "content": "x", "timestamp": 3})
            finally:
                session.close()
        finally:
            run.kill()
            run.wait(30)


@pytest.mark.timeout(30)
def test_a_window_and_this_process_are_told_apart(tmp_path: Path) -> None:
    path = _session_file(tmp_path)
    holder = subprocess.Popen(  # holds the lock the way a window does, with a window's command line
        [
            sys.executable,
            "-c",
            "import fcntl, os, sys, time\n"
            "fd = os.open(sys.argv[1], os.O_WRONLY | os.O_APPEND)\n"
            "fcntl.flock(fd, fcntl.LOCK_EX)\n"
            "print('held', flush=True)\n"
            "time.sleep(60)\n",
            str(path),
            "--session",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        fd = os.open(path, os.O_RDONLY)
        try:
            assert lock_holder_pids(fd) == [holder.pid]
            assert read_only_reason(fd).startswith(
                f"A piwork window (pid {holder.pid}) is writing this session"
            )
        finally:
            os.close(fd)
    finally:
        holder.kill()
        holder.wait(10)
    mine = open_session(path)
    try:
        assert not mine.read_only and mine.acquire_lock()
        other = open_session(path)
        try:
            assert other.read_only
            assert other.notices[-1].startswith("This session is already open for writing in this piwork")
        finally:
            other.close()
    finally:
        mine.close()


def test_an_unknown_holder_says_what_it_may_be(tmp_path: Path) -> None:
    locks = tmp_path / "locks"
    locks.write_text("1: POSIX  ADVISORY  WRITE 1 00:00:1 0 EOF\n")
    fd = os.open(tmp_path, os.O_RDONLY)
    try:
        assert lock_holder_pids(fd, str(locks)) == []
    finally:
        os.close(fd)
