"""Every reply ends in bounded time: a silence limit for a server that goes silent and a whole-reply
deadline (setting ``retry.provider.timeoutMs``) for one that keeps dripping bytes, both counted across
the reply's retries."""

from __future__ import annotations

import time

from piwork.core.workflows.runtime import stream_options_from_settings
from tests.support.loopback_server import Failure, LoopbackServer, Text, Turn

from .test_headless import Env, env, server  # noqa: F401 (fixtures)


def test_default_limits_end_a_hung_server_within_two_minutes_and_a_drip_eventually() -> None:
    options = stream_options_from_settings({})
    assert options.idle_timeout is not None and 0 < options.idle_timeout < 120
    assert options.connect_timeout is not None and options.connect_timeout < 120
    assert options.total_timeout is not None and 0 < options.total_timeout <= 3600
    explicit = stream_options_from_settings(
        {"retry": {"provider": {"timeoutMs": 2500}}, "httpIdleTimeoutMs": 0}
    )
    assert (explicit.total_timeout, explicit.idle_timeout) == (2.5, None)
    assert stream_options_from_settings({"retry": {"provider": {"timeoutMs": 0}}}).total_timeout is None


def test_a_dripping_server_ends_at_the_configured_deadline(server: LoopbackServer, env: Env) -> None:  # noqa: F811
    env.settings({"retry": {"enabled": False, "provider": {"timeoutMs": 1500}}})
    server.script(Turn([Text(" ".join(f"w{i}" for i in range(2000)))], drip=0.1))
    started = time.monotonic()
    result = env.run("-p", "talk slowly", *env.args(server, "anthropic"))
    elapsed = time.monotonic() - started
    assert result.returncode == 1
    assert (
        "The reply took longer than 1.5 s in all (reply time limit: retry.provider.timeoutMs" in result.stderr
    )
    assert "Traceback" not in result.stderr
    assert elapsed < 30


def test_a_hung_server_ends_at_the_idle_limit(server: LoopbackServer, env: Env) -> None:  # noqa: F811
    env.settings({"retry": {"enabled": False}, "httpIdleTimeoutMs": 800})
    server.script(Turn(failure=Failure.hang()))
    started = time.monotonic()
    result = env.run("-p", "hello", *env.args(server, "openai"))
    assert result.returncode == 1 and "(silence limit: httpIdleTimeoutMs, 0.8 s per reply)" in result.stderr
    assert time.monotonic() - started < 30


def test_headers_then_silence_end_a_run_once_although_retries_are_on(
    server: LoopbackServer,  # noqa: F811
    env: Env,  # noqa: F811
) -> None:
    # Retries stay on (as by default): a server that went silent is given up at the silence limit,
    # not once per attempt.
    env.settings({"retry": {"baseDelayMs": 50}, "httpIdleTimeoutMs": 800})
    server.script(*[Turn([Text("a b c")], failure=Failure.stall(2)) for _ in range(4)])
    started = time.monotonic()
    result = env.run("-p", "hello", *env.args(server, "anthropic"))
    elapsed = time.monotonic() - started
    assert result.returncode == 1, result.stderr
    assert "(silence limit: httpIdleTimeoutMs, 0.8 s per reply)" in result.stderr
    assert "Traceback" not in result.stderr
    assert len(server.requests) == 1 and elapsed < 30
