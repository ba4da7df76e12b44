"""``piwork -p --session FILE`` when another process writes FILE: refused with who it is, before any request,
the file untouched (a Pi appending to it, found in /proc; another piwork holding its writer lock)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.commands.test_headless import Env
from tests.core.session.helpers import user
from tests.support.loopback_server import LoopbackServer, Text, Turn
from tests.support.pi_like_writer import PiLikeWriter
from tests.support.piwork_holder import PiworkHolder

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs Linux /proc")


@pytest.fixture
def server() -> Iterator[LoopbackServer]:
    with LoopbackServer() as srv:
        yield srv


@pytest.fixture
def env(tmp_path: Path) -> Env:
    return Env(tmp_path)


def _first_session(server: LoopbackServer, env: Env) -> Path:
    server.script(Turn([Text("first")]))
    assert env.call("-p", "one", *env.args(server, "anthropic")).returncode == 0
    (path,) = env.session_files()
    return path


def test_a_session_a_running_pi_writes_is_refused_naming_it(server: LoopbackServer, env: Env) -> None:
    path = _first_session(server, env)
    with PiLikeWriter(env.cwd) as pi:
        last = path.read_text().splitlines()[-1]
        pi.append(path, user("pi1", json.loads(last)["id"], "from pi", 9))
        before = path.read_bytes()
        result = env.call("-p", "two", "--session", str(path), *env.args(server, "anthropic"))
    assert result.returncode == 1
    assert f"Pi (pid {pi.pid})" in result.stderr and "read-only" in result.stderr
    assert len(server.requests) == 1 and path.read_bytes() == before


def test_a_session_another_piwork_holds_is_refused_naming_it(server: LoopbackServer, env: Env) -> None:
    path = _first_session(server, env)
    before = path.read_bytes()
    with PiworkHolder(path) as holder:
        result = env.call("-p", "two", "--session", str(path), *env.args(server, "anthropic"))
    assert result.returncode == 1
    assert f"(pid {holder.pid}) is writing this session" in result.stderr
    assert len(server.requests) == 1 and path.read_bytes() == before
