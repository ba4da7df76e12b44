"""``piwork -p`` as a real subprocess against the loopback provider server."""

from __future__ import annotations

import io
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from piwork.commands import headless
from piwork.core.session.store import open_session
from tests.support.loopback_server import Failure, LoopbackServer, Text, ToolCall, Turn
from tests.support.reference import MISSING_REASON, NODE, PI_DIST

OVERLOADED = '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}'


@pytest.fixture
def server() -> Any:
    with LoopbackServer() as srv:
        yield srv


class Env:
    def __init__(self, tmp_path: Path) -> None:
        self.home = tmp_path / "home"
        self.agent = tmp_path / "agent"
        self.cwd = tmp_path / "project"
        for folder in (self.home, self.agent, self.cwd):
            folder.mkdir()
        (self.cwd / "a.txt").write_text("alpha\n")
        (self.cwd / "b.txt").write_text("beta\n")
        self.vars = {
            **{k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")},
            "HOME": str(self.home),
            "PI_CODING_AGENT_DIR": str(self.agent),
            "PYTHON_KEYRING_BACKEND": "keyring.backends.null.Keyring",
            "ANTHROPIC_API_KEY": "sk-test-planted-key-123",
            "PYTHONUNBUFFERED": "1",
        }
        self.settings({"retry": {"baseDelayMs": 5}})

    def settings(self, data: dict[str, Any]) -> None:
        (self.agent / "settings.json").write_text(json.dumps(data))

    def args(self, server: LoopbackServer, protocol: str) -> list[str]:
        if protocol == "anthropic":
            return ["--model", f"anthropic/{server.model}", "--base-url", server.url]
        return ["--provider", "loopback", "--model", server.model, "--base-url", server.openai_url]

    def run(
        self, *args: str, stdin: str | None = None, timeout: float = 60
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "piwork", *args],
            cwd=self.cwd,
            env=self.vars,
            input=stdin,
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=None if stdin is not None else subprocess.DEVNULL,
        )

    def call(self, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
        """The same command in this process (faster; the subprocess tests cover start-up and signals)."""
        out, err = io.StringIO(), io.StringIO()
        with pytest.MonkeyPatch.context() as patch:
            for key in [k for k in os.environ if k.endswith("_API_KEY")]:
                patch.delenv(key)
            for key, value in self.vars.items():
                patch.setenv(key, value)
            patch.chdir(self.cwd)
            code = headless.main(list(args), io.StringIO(stdin), out, err)
        return subprocess.CompletedProcess(args, code, out.getvalue(), err.getvalue())

    def popen(self, *args: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [sys.executable, "-m", "piwork", *args],
            cwd=self.cwd,
            env=self.vars,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def session_files(self) -> list[Path]:
        return sorted((self.agent / "sessions").rglob("*.jsonl"))

    def messages(self) -> list[dict[str, Any]]:
        (path,) = self.session_files()
        lines = path.read_text().splitlines()
        return [e["message"] for e in map(json.loads, lines[1:]) if e["type"] == "message"]


@pytest.fixture
def env(tmp_path: Path) -> Env:
    return Env(tmp_path)


def two_reads() -> list[Turn]:
    return [
        Turn(
            [Text("Reading both."), ToolCall("read", {"path": "a.txt"}), ToolCall("read", {"path": "b.txt"})]
        ),
        Turn([Text("The files say alpha and beta.")]),
    ]


@pytest.mark.parametrize("protocol", ["anthropic", "openai"])
def test_two_tool_calls_text_mode(server: LoopbackServer, env: Env, protocol: str) -> None:
    server.script(*two_reads())
    result = env.run("-p", "what do the files say?", *env.args(server, protocol))
    assert result.returncode == 0, result.stderr
    assert result.stdout == "The files say alpha and beta.\n"
    messages = env.messages()
    assert [m["role"] for m in messages] == ["user", "assistant", "toolResult", "toolResult", "assistant"]
    assert "alpha" in messages[2]["content"][0]["text"] and "beta" in messages[3]["content"][0]["text"]
    text = env.session_files()[0].read_text()
    assert "sk-test-planted-key-123" not in text + result.stdout + result.stderr
    if protocol == "anthropic":
        assert server.requests[0].headers["x-api-key"] == "sk-test-planted-key-123"


@pytest.mark.parametrize("protocol", ["anthropic", "openai"])
def test_json_mode_prints_one_event_per_line(server: LoopbackServer, env: Env, protocol: str) -> None:
    server.script(*two_reads())
    result = env.run("-p", "read them", "--mode", "json", *env.args(server, protocol))
    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert lines[0]["type"] == "session" and lines[0]["version"] == 3
    types = [line["type"] for line in lines[1:]]
    assert types[0] == "agent_start" and types[-1] == "agent_settled"
    for kind in (
        "turn_start",
        "message_update",
        "tool_execution_start",
        "tool_execution_end",
        "turn_end",
        "agent_end",
    ):
        assert kind in types
    update = next(line for line in lines if line["type"] == "message_update")
    assert "assistantMessageEvent" in update and "partial" not in update["assistantMessageEvent"]
    end = next(line for line in lines if line["type"] == "tool_execution_end")
    assert end["toolCallId"] and end["isError"] is False
    assert "sk-test-planted-key-123" not in result.stdout


def test_prompt_from_stdin_and_no_session(server: LoopbackServer, env: Env) -> None:
    server.script(Turn([Text("from stdin")]))
    result = env.call("-p", "-", "--no-session", *env.args(server, "anthropic"), stdin="question on stdin\n")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "from stdin\n"
    assert server.requests[0].body["messages"][0]["content"][0]["text"] == "question on stdin\n"
    assert env.session_files() == []


def test_session_and_continue(server: LoopbackServer, env: Env) -> None:
    server.script(Turn([Text("first")]), Turn([Text("second")]))
    assert env.call("-p", "one", *env.args(server, "anthropic")).returncode == 0
    result = env.call("-p", "two", "--continue", *env.args(server, "anthropic"))
    assert result.returncode == 0, result.stderr
    assert [m["role"] for m in env.messages()] == ["user", "assistant", "user", "assistant"]
    assert len(server.requests[1].body["messages"]) == 3


@pytest.mark.parametrize("protocol", ["anthropic", "openai"])
def test_transient_failures_are_retried(server: LoopbackServer, env: Env, protocol: str) -> None:
    server.script(
        Turn(failure=Failure.http(529, OVERLOADED)),
        Turn([Text("partial answer " * 5)], failure=Failure.cut(3)),
        Turn([Text("x")], failure=Failure.error_event(2, OVERLOADED)),
        Turn([Text("made it")]),
    )
    result = env.call("-p", "hello", "--mode", "json", *env.args(server, protocol))
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines()[1:]]
    assert [e["attempt"] for e in events if e["type"] == "auto_retry_start"] == [1, 2, 3]
    assert any(e["type"] == "auto_retry_end" and e["success"] for e in events)
    stops = [m.get("stopReason") for m in env.messages() if m["role"] == "assistant"]
    assert stops == ["error", "error", "error", "stop"]


@pytest.mark.parametrize(
    ("failure", "expected"),
    [
        (
            Failure.http(
                401, '{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}'
            ),
            "401",
        ),
        (
            Failure.http(400, '{"type":"error","error":{"type":"invalid_request_error","message":"bad"}}'),
            "400",
        ),
        (Failure.malformed(2), ""),
    ],
)
def test_failures_end_with_a_clear_error(
    server: LoopbackServer, env: Env, failure: Failure, expected: str
) -> None:
    server.script(*[Turn([Text("hello there")], failure=failure) for _ in range(4)])
    result = env.call("-p", "hello", *env.args(server, "anthropic"))
    assert result.returncode == 1
    assert result.stderr.startswith("piwork: ") and expected in result.stderr
    assert result.stdout == ""
    assert env.messages()[-1]["stopReason"] == "error"


def test_hung_server_times_out(server: LoopbackServer, env: Env) -> None:
    env.settings({"retry": {"enabled": False}, "httpIdleTimeoutMs": 300})
    server.script(Turn(failure=Failure.hang()))
    start = time.monotonic()
    result = env.call("-p", "hello", *env.args(server, "anthropic"))
    assert result.returncode == 1 and "No data from the server" in result.stderr
    assert "silence limit: httpIdleTimeoutMs, 0.3 s per reply" in result.stderr  # which limit ended it
    assert time.monotonic() - start < 15


def test_unreachable_base_url_fails_fast(env: Env) -> None:
    with LoopbackServer() as closed:
        url = closed.url
    start = time.monotonic()
    result = env.call("-p", "hello", "--model", "anthropic/some-model", "--base-url", url)
    assert result.returncode == 1
    assert "Connection refused: nothing is listening at 127.0.0.1:" in result.stderr  # said at once
    assert time.monotonic() - start < 10


def test_unknown_model_and_missing_prompt(env: Env) -> None:
    result = env.call("-p", "hello", "--model", "anthropic/no-such-model")
    assert result.returncode == 1 and "Unknown model anthropic/no-such-model" in result.stderr
    assert env.call("--mode", "text").returncode == 2


def _interrupt_after(proc: subprocess.Popen[str], event_type: str, delta: str | None = None) -> None:
    """Read JSON event lines until ``event_type`` (with that provider ``delta`` type) shows up, then SIGINT."""
    assert proc.stdout is not None
    for line in proc.stdout:
        event = json.loads(line)
        if event.get("type") == event_type and (
            delta is None or event.get("assistantMessageEvent", {}).get("type") == delta
        ):
            proc.send_signal(signal.SIGINT)
            return
    raise AssertionError(f"no {event_type} event before the end of output")


def test_interrupt_mid_stream_keeps_an_aborted_message(server: LoopbackServer, env: Env) -> None:
    server.script(Turn([Text(" ".join(f"w{i}" for i in range(400)))], drip=0.02))
    proc = env.popen("-p", "talk", "--mode", "json", *env.args(server, "anthropic"))
    _interrupt_after(proc, "message_update", "text_delta")
    _, err = proc.communicate(timeout=20)
    assert proc.returncode == 130, err
    last = env.messages()[-1]
    assert last["role"] == "assistant" and last["stopReason"] == "aborted"
    assert last["content"][0]["text"].startswith("w0")


def test_interrupt_mid_tool_records_every_result(server: LoopbackServer, env: Env) -> None:
    server.script(Turn([ToolCall("bash", {"command": "sleep 30"}), ToolCall("read", {"path": "a.txt"})]))
    proc = env.popen("-p", "run it", "--mode", "json", *env.args(server, "anthropic"))
    _interrupt_after(proc, "tool_execution_start")
    _, err = proc.communicate(timeout=20)
    assert proc.returncode == 130, err
    messages = env.messages()
    assert [m["role"] for m in messages] == ["user", "assistant", "toolResult", "toolResult"]
    assert messages[2]["isError"] and "abort" in json.dumps(messages[2]["content"]).lower()


@pytest.mark.skipif(not (NODE.exists() and PI_DIST.exists()), reason=MISSING_REASON)
def test_session_file_builds_the_same_context_in_the_reference(
    server: LoopbackServer, env: Env, tmp_path: Path
) -> None:
    server.script(*two_reads(), Turn([Text("again")]))
    assert env.run("-p", "read them", *env.args(server, "anthropic")).returncode == 0
    assert (
        env.run(
            "-p", "and again", "--continue", "--thinking", "high", *env.args(server, "anthropic")
        ).returncode
        == 0
    )
    (path,) = env.session_files()
    script = tmp_path / "context.mjs"
    script.write_text(
        f'const sm = await import("{(PI_DIST / "core/session-manager.js").as_uri()}");\n'
        f"const s = sm.SessionManager.open({json.dumps(str(path))});\n"
        "process.stdout.write(JSON.stringify(s.buildSessionContext()));\n"
    )
    node = subprocess.run([str(NODE), str(script)], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert node.returncode == 0, node.stderr
    reference = json.loads(node.stdout)
    ours = open_session(path, writable=False).tree.build_context()
    assert reference["messages"] == json.loads(json.dumps(ours.messages))
    assert reference["thinkingLevel"] == ours.thinking_level == "off"  # the custom model cannot think
    assert reference["model"] == {"provider": "anthropic", "modelId": server.model} == ours.model
    assert shutil.which("node") or NODE.exists()


def test_piped_stdin_goes_before_the_prompt_text(server: LoopbackServer, env: Env) -> None:
    server.script(Turn([Text("ok")]))
    result = env.call(
        "--mode",
        "text",
        "-p",
        " and summarize",
        "--no-session",
        *env.args(server, "anthropic"),
        stdin="file contents",
    )
    assert result.returncode == 0, result.stderr
    assert server.requests[0].body["messages"][0]["content"][0]["text"] == "file contents and summarize"


def test_session_held_by_another_piwork_is_refused_with_the_reason(server: LoopbackServer, env: Env) -> None:
    server.script(Turn([Text("first")]))
    assert env.call("-p", "one", *env.args(server, "anthropic")).returncode == 0
    (path,) = env.session_files()
    before = path.read_bytes()
    with open_session(path):  # another piwork holds the writer lock
        result = env.call("-p", "two", "--session", str(path), *env.args(server, "anthropic"))
    assert result.returncode == 1
    assert "Cannot send a prompt" in result.stderr and "read-only" in result.stderr
    assert len(server.requests) == 1 and path.read_bytes() == before
