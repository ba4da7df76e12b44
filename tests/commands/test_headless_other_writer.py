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
from tests.support.scripted_turns import RecordedRequest

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs Linux /proc")


@pytest.fixture
def server() -> Iterator[LoopbackServer]:
    with LoopbackServer() as srv:
        yield srv


@pytest.fixture
def env(tmp_path: Path) -> Env:
    return Env(tmp_path)


def _last_id(path: Path) -> str:
    return str(json.loads(path.read_text().splitlines()[-1])["id"])


def _first_session(server: LoopbackServer, env: Env) -> Path:
    server.script(Turn([Text("first")]))
    assert env.call("-p", "one", *env.args(server, "anthropic")).returncode == 0
    (path,) = env.session_files()
    return path


def test_a_run_stops_writing_when_a_running_pi_appends_meanwhile(server: LoopbackServer, env: Env) -> None:
    path = _first_session(server, env)
    with PiLikeWriter(env.cwd) as pi:

        def pi_appends(_request: RecordedRequest) -> Turn:  # while piwork waits for the reply
            pi.append(path, user("pi1", _last_id(path), "from pi", 9))
            return Turn([Text("second")])

        server.script(pi_appends)
        result = env.call("-p", "two", "--session", str(path), *env.args(server, "anthropic"))
    assert result.returncode == 1
    assert f"Pi (pid {pi.pid}) is writing this session" in result.stderr
    assert _last_id(path) == "pi1"  # piwork's reply is not written after Pi's entry


def test_a_session_another_piwork_holds_is_refused_naming_it(server: LoopbackServer, env: Env) -> None:
    path = _first_session(server, env)
    before = path.read_bytes()
    with PiworkHolder(path) as holder:
        result = env.call("-p", "two", "--session", str(path), *env.args(server, "anthropic"))
    assert result.returncode == 1
    assert f"(pid {holder.pid}) is writing this session" in result.stderr
    assert len(server.requests) == 1 and path.read_bytes() == before
