"""Keys stay where they belong without corrupting content: what a tool returns reaches the model and the
session file as it is (a file's text is never rewritten), a key a command prints is masked in the
full-output log piwork keeps, a placeholder key like ``ollama`` is never masked, and a key piwork was given
(``--api-key``) is not handed to commands."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.loopback_server import LoopbackServer, Text, ToolCall, Turn

from .test_headless import Env, env, server  # noqa: F401 (fixtures)

PLANTED = "sk-test-planted-key-123"  # Env's ANTHROPIC_API_KEY
ONE_RUN = "sk-one-run-key-456789"


def _everything_written(env: Env) -> str:  # noqa: F811
    files = [*env.session_files(), *(env.agent / "logs").rglob("*")]
    return "".join(p.read_text(errors="replace") for p in files if p.is_file())


def test_a_printed_key_is_masked_in_the_log_but_the_result_is_left_as_printed(
    server: LoopbackServer,  # noqa: F811
    env: Env,  # noqa: F811
) -> None:
    command = 'echo "my key is $ANTHROPIC_API_KEY"; seq 1 5000; echo "again $ANTHROPIC_API_KEY"'
    server.script(Turn([ToolCall("bash", {"command": command})]), Turn([Text("done")]))
    result = env.run("-p", "show the key", *env.args(server, "anthropic"))
    assert result.returncode == 0, result.stderr
    logs = [p for p in (env.agent / "logs").rglob("*.log") if p.is_file()]
    assert logs, "the output was long enough to be logged"
    logged = "".join(p.read_text(errors="replace") for p in logs)
    assert PLANTED not in logged and "my key is ***" in logged and "again ***" in logged
    # The tool result is the command's output, unaltered, in the request and in the session.
    sent = str(server.requests[-1].body)
    assert f"again {PLANTED}" in sent
    session = "".join(p.read_text() for p in env.session_files())
    assert f"again {PLANTED}" in session


def test_a_placeholder_key_never_rewrites_what_a_tool_read(
    server: LoopbackServer,  # noqa: F811
    env: Env,  # noqa: F811
) -> None:
    source = "from ollama_client import connect  # test EMPTY lm-studio\n"
    (env.cwd / "app.py").write_text(source)
    del env.vars["ANTHROPIC_API_KEY"]
    for key in ("ollama", "EMPTY", "lm-studio", "test"):
        server.script(Turn([ToolCall("read", {"path": "app.py"})]), Turn([Text("read it")]))
        result = env.run("-p", "read app.py", "--api-key", key, "--no-session", *env.args(server, "openai"))
        assert result.returncode == 0, result.stderr
        assert server.requests[-1].headers["authorization"] == f"Bearer {key}"
        sent = json.dumps(server.requests[-1].body)
        assert json.dumps(source.rstrip("\n"))[1:-1] in sent, key
        assert "***" not in sent


def test_a_placeholder_key_is_kept_in_the_session_file(
    server: LoopbackServer,  # noqa: F811
    env: Env,  # noqa: F811
) -> None:
    (env.cwd / "app.py").write_text("import ollama_client\n")
    del env.vars["ANTHROPIC_API_KEY"]
    server.script(Turn([ToolCall("read", {"path": "app.py"})]), Turn([Text("ollama_client it is")]))
    result = env.run("-p", "read app.py", "--api-key", "ollama", *env.args(server, "openai"))
    assert result.returncode == 0, result.stderr
    session = "".join(p.read_text() for p in env.session_files())
    assert "import ollama_client" in session and "***" not in session
    assert "ollama_client it is" in result.stdout


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
