"""The commands meet a user's broken files: each is named with its problem, left byte-identical, and the run
goes on (or stops with one clear line, never a traceback)."""

from __future__ import annotations

import contextlib
import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.commands.test_headless import Env
from tests.support.loopback_server import LoopbackServer, Text, Turn

HEADER = {
    "type": "session",
    "version": 3,
    "id": "0c5f2a7e-1111-4222-8333-444455556666",
    "timestamp": "2026-01-01T00:00:00.000Z",
    "cwd": "/",
}
MESSAGE = {
    "type": "message",
    "id": "a1b2c3d4",
    "parentId": None,
    "timestamp": "2026-01-01T00:00:01.000Z",
    "message": {"role": "user", "content": "hey", "timestamp": 1},
}


@pytest.fixture
def server() -> Any:
    with LoopbackServer() as srv:
        yield srv


@pytest.fixture
def env(tmp_path: Path) -> Env:
    return Env(tmp_path)


def test_corrupt_settings_models_and_trust_are_named_and_left_alone(server: LoopbackServer, env: Env) -> None:
    files = {
        env.agent / "settings.json": b'{"retry": {"baseDelayMs": 5}',
        env.agent / "models.json": b"\xff not json",
        env.agent / "trust.json": b"[]",
    }
    (env.cwd / ".pi").mkdir()
    (env.cwd / ".pi" / "settings.json").write_text("{}")
    for path, data in files.items():
        path.write_bytes(data)
    server.script(Turn([Text("hi")]))
    result = env.run("-p", "hello", *env.args(server, "anthropic"))
    assert (result.returncode, result.stdout) == (0, "hi\n")
    lines = result.stderr.splitlines()
    assert any(str(env.agent / "settings.json") in line and "not valid JSON" in line for line in lines)
    assert any(str(env.agent / "models.json") in line for line in lines)
    assert any("trust.json must hold a JSON object" in line for line in lines)
    assert "Traceback" not in result.stderr
    assert all(path.read_bytes() == data for path, data in files.items())


@pytest.mark.parametrize(
    ("tail", "problem"),
    [(b"garbage here\n", "not valid JSON"), (b'{"type":"message","id":"b', "incomplete")],
)
def test_session_with_a_bad_line_is_kept_and_the_user_told(
    server: LoopbackServer, env: Env, tail: bytes, problem: str
) -> None:
    path = env.home / "s.jsonl"
    original = (json.dumps(HEADER) + "\n" + json.dumps(MESSAGE) + "\n").encode() + tail
    path.write_bytes(original)
    server.script(Turn([Text("hi")]))
    result = env.call("-p", "hello", "--session", str(path), *env.args(server, "anthropic"))
    assert result.returncode == 0
    assert f"{path}: line 3: " in result.stderr and problem in result.stderr
    assert path.read_bytes().startswith(original)  # new entries are appended, nothing rewritten


def test_session_paths_that_cannot_be_used_end_with_one_clear_line(server: LoopbackServer, env: Env) -> None:
    result = env.run("-p", "hello", "--session", str(env.home), *env.args(server, "anthropic"))
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert result.stderr == (
        f"piwork: Cannot open the session file {env.home}: it is a folder, not a session file.\n"
    )
    (env.agent / "sessions").write_text("a file where the sessions folder goes")
    result = env.call("-p", "hello", *env.args(server, "anthropic"))
    assert result.returncode == 1 and result.stderr.startswith("piwork: Cannot keep the session in ")
    assert "a file stands where a folder is needed" in result.stderr
    assert (env.agent / "sessions").read_text() == "a file where the sessions folder goes"


def test_inspect_a_folder_says_so(env: Env) -> None:
    result = env.run("inspect", str(env.home))
    assert result.returncode == 1
    assert (
        result.stderr == f"piwork inspect: {env.home} is a folder; give the path of a session .jsonl file\n"
    )


def test_window_given_a_folder_as_session_says_so(env: Env) -> None:
    result = env.run("--session", str(env.home))
    assert (result.returncode, result.stderr) == (
        2,
        f"piwork: --session {env.home}: a folder, not a session file\n",
    )


def test_broken_prompt_template_and_system_file_are_named(server: LoopbackServer, env: Env) -> None:
    template = env.agent / "prompts" / "review.md"
    template.parent.mkdir()
    template.write_bytes(b"---\ndescription: [unclosed\n---\nReview \xff this")
    (env.agent / "SYSTEM.md").mkdir()
    server.script(Turn([Text("ok")]))
    result = env.call("-p", "hello", *env.args(server, "anthropic"))
    assert result.returncode == 0
    assert (
        f"piwork: warning: {template}: invalid YAML frontmatter: while parsing a flow sequence: expected ',' "
        "or ']', but got '<stream end>' (line 3, column 1); the template is skipped\n"
    ) in result.stderr
    assert result.stderr.count(f"warning: {template}:") == 1
    assert f"Could not read the system prompt file {env.agent / 'SYSTEM.md'}" in result.stderr
    assert template.read_bytes() == b"---\ndescription: [unclosed\n---\nReview \xff this"
    listing = env.run("resources").stdout
    assert (
        f"[error] review  global  {template}\n      warning: invalid YAML frontmatter: while parsing"
        in listing
    )


def test_missing_keys_say_which_variable_or_flag_to_use(env: Env) -> None:
    del env.vars["ANTHROPIC_API_KEY"]
    env.vars["PYTHON_KEYRING_BACKEND"] = "keyring.backends.fail.Keyring"  # no keyring on this machine
    result = env.run("-p", "hello")
    assert result.returncode == 1
    assert result.stderr.startswith("piwork: No model selected.") and "--model PROVIDER/ID" in result.stderr
    result = env.call("-p", "hello", "--model", "anthropic/claude-sonnet-4-5")
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert (
        result.stderr
        == "piwork: No API key for anthropic. Set ANTHROPIC_API_KEY, or store the key in the keyring.\n"
    )


@contextlib.contextmanager
def _immutable(path: Path) -> Iterator[None]:
    """``chattr +i``: even root cannot write it (the tests run as root, where file modes do not stop writes)."""
    if (
        shutil.which("chattr") is None
        or subprocess.run(["chattr", "+i", str(path)], capture_output=True).returncode != 0
    ):
        pytest.skip("chattr +i is not available here")
    try:
        yield
    finally:
        subprocess.run(["chattr", "-i", str(path)], check=True)


def test_session_that_cannot_be_written_is_refused_then_a_failed_save_fails_the_run(
    server: LoopbackServer, env: Env
) -> None:
    server.script(Turn([Text("first")]))
    assert env.call("-p", "hello", *env.args(server, "anthropic")).returncode == 0
    (path,) = env.session_files()
    before = path.read_bytes()
    with _immutable(path):
        result = env.call("-p", "again", "-c", *env.args(server, "anthropic"))
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr == (
        f"piwork: Cannot send a prompt: piwork cannot write the session file {path}, so it is open read-only: "
        "Operation not permitted\n"
    )
    assert path.read_bytes() == before
    server.script(Turn([Text("second")]))
    with _immutable(path.parent):
        result = env.call("-p", "new", *env.args(server, "anthropic"))
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr.startswith("piwork: piwork could not save to the session file (")
    assert env.session_files() == [path] and path.read_bytes() == before


def test_prompt_bytes_that_are_not_utf8_are_replaced_not_saved_as_broken_text(
    server: LoopbackServer, env: Env
) -> None:
    server.script(Turn([Text("hi")]))
    command = [
        sys.executable.encode(),
        b"-m",
        b"piwork",
        b"-p",
        b"arg \xff",
        *map(str.encode, env.args(server, "anthropic")),
    ]
    result = subprocess.run(
        command, input=b"caf\xe9 ", cwd=env.cwd, env=env.vars, capture_output=True, timeout=60
    )
    assert (result.returncode, result.stdout, result.stderr) == (0, b"hi\n", b"")
    assert env.messages()[0]["content"] == [{"type": "text", "text": "caf\ufffd arg \ufffd"}]
    assert server.requests[0].body["messages"][0]["content"][0]["text"] == "caf\ufffd arg \ufffd"


def test_a_server_that_refuses_connections_is_named(env: Env) -> None:
    with LoopbackServer() as closed:
        url, port = closed.url, closed.port
    result = env.call("-p", "hello", "--model", "anthropic/some-model", "--base-url", url)
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr == (
        f"piwork: Connection refused: nothing is listening at 127.0.0.1:{port} on this computer. Start the "
        "local model server, or check the port in the base URL.\n"
    )


def test_inspect_of_a_file_full_of_garbage_lists_the_first_problems_and_counts_the_rest(env: Env) -> None:
    path = env.home / "s.jsonl"
    path.write_bytes((json.dumps(HEADER) + "\n").encode() + b"\x00\xff not json\n" * 120)
    result = env.run("inspect", str(path))
    assert result.returncode == 0
    assert "Problems: 120\n" in result.stdout and result.stdout.count("malformed_json") == 50
    assert result.stdout.endswith("  ... and 70 more (--json lists them all)\n")
    assert len(json.loads(env.run("inspect", str(path), "--json").stdout)["diagnostics"]) == 120


def test_session_path_under_a_file_is_explained(env: Env) -> None:
    (env.home / "notes").write_text("kept")
    result = env.call("-p", "hello", "--session", str(env.home / "notes" / "s.jsonl"))
    assert (result.returncode, result.stderr) == (
        1,
        f"piwork: Cannot open the session file {env.home / 'notes' / 's.jsonl'}: "
        "a file stands where a folder is needed.\n",
    )
    assert (env.home / "notes").read_text() == "kept"


def test_refused_setting_values_are_named_on_stderr_and_left_alone(server: LoopbackServer, env: Env) -> None:
    global_file, project_file = env.agent / "settings.json", env.cwd / ".pi" / "settings.json"
    project_file.parent.mkdir()
    files = {
        global_file: b'{"retry": {"baseDelayMs": 5}, "compaction": {"enabled": "no"}, "someFutureKey": 1}',
        project_file: b'{"retry": {"maxRetries": -2}}',
    }
    for path, data in files.items():
        path.write_bytes(data)
    server.script(Turn([Text("hi")]))
    result = env.call("-p", "hello", "--approve", *env.args(server, "anthropic"))
    assert (result.returncode, result.stdout) == (0, "hi\n")
    lines = result.stderr.splitlines()
    assert (
        f'piwork: warning: {global_file}: compaction.enabled must be true or false (got "no"); using true'
        in lines
    )
    assert f"piwork: warning: {project_file}: retry.maxRetries must be at least 0 (got -2); using 3" in lines
    assert all(path.read_bytes() == data for path, data in files.items())
