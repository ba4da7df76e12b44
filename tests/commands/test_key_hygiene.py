"""Keys stay where they belong: a command that prints a key leaves ``***`` in the session file and the
full-output log, and a key piwork was given (``--api-key``) is not handed to commands."""

from __future__ import annotations

from pathlib import Path

from tests.support.loopback_server import LoopbackServer, Text, ToolCall, Turn

from .test_headless import Env, env, server  # noqa: F401 (fixtures)

PLANTED = "sk-test-planted-key-123"  # Env's ANTHROPIC_API_KEY
ONE_RUN = "sk-one-run-key-456789"


def _everything_written(env: Env) -> str:  # noqa: F811
    files = [*env.session_files(), *(env.agent / "logs").rglob("*")]
    return "".join(p.read_text(errors="replace") for p in files if p.is_file())


def test_a_printed_key_is_masked_in_the_session_and_the_log(server: LoopbackServer, env: Env) -> None:  # noqa: F811
    command = 'echo "my key is $ANTHROPIC_API_KEY"; seq 1 5000; echo "again $ANTHROPIC_API_KEY"'
    server.script(Turn([ToolCall("bash", {"command": command})]), Turn([Text("done")]))
    result = env.run("-p", "show the key", *env.args(server, "anthropic"))
    assert result.returncode == 0, result.stderr
    written = _everything_written(env)
    assert list((env.agent / "logs").rglob("*.log")), "the output was long enough to be logged"
    assert PLANTED not in written, [
        (p, p.read_text(errors="replace").find(PLANTED))
        for p in [*env.session_files(), *(env.agent / "logs").rglob("*")]
        if p.is_file()
    ]
    assert "my key is ***" in written and "again ***" in written
    sent = str(server.requests[-1].body)
    assert PLANTED not in sent and "again ***" in sent


def test_a_key_given_to_piwork_is_not_in_the_commands_environment(
    server: LoopbackServer,  # noqa: F811
    env: Env,  # noqa: F811
    tmp_path: Path,
) -> None:
    dump = tmp_path / "env.txt"
    del env.vars["ANTHROPIC_API_KEY"]
    server.script(Turn([ToolCall("bash", {"command": f"env > {dump}"})]), Turn([Text("done")]))
    result = env.run("-p", "look", "--api-key", ONE_RUN, *env.args(server, "anthropic"))
    assert result.returncode == 0, result.stderr
    assert ONE_RUN not in dump.read_text()
