"""``piwork -p`` options that Pi 1.6 has: the tool set (--tools, --no-tools, --exclude-tools), @FILE
arguments and --session-id, against the loopback provider server."""

from __future__ import annotations

import base64
import io
import json
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from tests.commands.test_headless import Env
from tests.support.loopback_server import LoopbackServer, Text, Turn


@pytest.fixture
def server() -> Any:
    with LoopbackServer() as srv:
        yield srv


@pytest.fixture
def env(tmp_path: Path) -> Env:
    return Env(tmp_path)


def _tool_names(server: LoopbackServer) -> list[str]:
    return [tool["name"] for tool in server.requests[-1].body.get("tools", [])]


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ((), ["read", "bash", "edit", "write"]),
        (("--tools", "read,grep, ls"), ["read", "grep", "ls"]),
        (("-t", "+grep,-bash"), ["read", "edit", "write", "grep"]),
        (("--tools", "*"), ["read", "bash", "edit", "write", "grep", "find", "ls"]),
        (("--no-tools",), []),
        (("-nt",), []),
        (("--exclude-tools", "bash,w*"), ["read", "edit"]),
        (("--tools", "read,grep", "-xt", "grep"), ["read"]),
    ],
)
def test_tool_options_choose_the_tools_sent(
    server: LoopbackServer, env: Env, options: tuple[str, ...], expected: list[str]
) -> None:
    server.script(Turn([Text("ok")]))
    result = env.call("-p", "hi", "--no-session", *env.args(server, "anthropic"), *options)
    assert result.returncode == 0, result.stderr
    assert _tool_names(server) == expected


def test_default_tools_setting_is_the_base_the_options_change(server: LoopbackServer, env: Env) -> None:
    env.settings({"defaultTools": ["read", "grep"]})
    server.script(Turn([Text("ok")]), Turn([Text("ok")]))
    assert env.call("-p", "hi", "--no-session", *env.args(server, "anthropic")).returncode == 0
    assert _tool_names(server) == ["read", "grep"]
    assert env.call("-p", "hi", "--no-session", "-t", "+ls", *env.args(server, "anthropic")).returncode == 0
    assert _tool_names(server) == ["read", "grep", "ls"]


def _system_messages(env: Env) -> list[dict[str, Any]]:
    return [m for m in env.messages() if m["role"] == "system"]


def test_a_session_reopens_with_the_tools_it_ran_with(server: LoopbackServer, env: Env) -> None:
    """A run with its own tool list declares it in the session (a Pi 1.6 system message: the tools as
    the model sees them, no prompt text); continuing without a list restores it, a list of changes
    applies to it, a list of names replaces it and the change is declared again."""
    server.script(*[Turn([Text("ok")]) for _ in range(4)])
    args = env.args(server, "anthropic")
    assert env.call("-p", "one", "--tools", "read,ls", *args).returncode == 0
    (declared,) = _system_messages(env)
    assert declared["content"] == "" and "sections" not in declared
    assert [t["name"] for t in declared["toolsAdded"]] == ["read", "ls"]
    assert declared["toolsAdded"][0]["parameters"] == server.requests[0].body["tools"][0]["input_schema"]
    assert env.call("-p", "two", "--continue", *args).returncode == 0
    assert _tool_names(server) == ["read", "ls"]
    assert env.call("-p", "three", "--continue", "--tools", "+grep", *args).returncode == 0
    assert _tool_names(server) == ["read", "grep", "ls"]
    assert env.call("-p", "four", "--continue", "--tools", "bash", *args).returncode == 0
    assert _tool_names(server) == ["bash"]
    changes = _system_messages(env)[1:]
    assert [[t["name"] for t in m.get("toolsAdded", [])] for m in changes] == [["grep"], ["bash"]]
    assert [[t["name"] for t in m.get("toolsRemoved", [])] for m in changes] == [[], ["read", "ls", "grep"]]


def test_the_default_tool_set_is_not_declared(server: LoopbackServer, env: Env) -> None:
    """Both programs start a session that declares nothing with the defaultTools selection: no entry."""
    env.settings({"defaultTools": ["read", "grep"]})
    server.script(Turn([Text("ok")]), Turn([Text("ok")]))
    assert env.call("-p", "one", *env.args(server, "anthropic")).returncode == 0
    assert env.call("-p", "two", "--continue", *env.args(server, "anthropic")).returncode == 0
    assert _system_messages(env) == [] and _tool_names(server) == ["read", "grep"]


def test_a_tool_list_mixing_names_and_changes_is_refused(server: LoopbackServer, env: Env) -> None:
    result = env.call("-p", "hi", "--tools", "read,+grep", *env.args(server, "anthropic"))
    assert result.returncode == 2 and "--tools" in result.stderr and "mixed" in result.stderr
    assert server.requests == []
    both = env.call("-p", "hi", "--tools", "read", "--no-tools", *env.args(server, "anthropic"))
    assert both.returncode == 2


def _png(width: int, height: int) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (width, height), (200, 10, 10)).save(out, "PNG")
    return out.getvalue()


def test_file_arguments_inline_text_and_attach_images(server: LoopbackServer, env: Env) -> None:
    (env.cwd / "notes.md").write_bytes("\ufeffline one\nline two".encode())
    (env.cwd / "shot.png").write_bytes(_png(3000, 1500))
    (env.cwd / "empty.txt").write_text("")
    server.script(Turn([Text("seen")]), Turn([Text("and then")]))
    result = env.call(
        "-p", "What is in them?", "@notes.md", "@shot.png", "@empty.txt", "second prompt",
        *env.args(server, "anthropic"),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    first = server.requests[0].body["messages"][0]["content"]
    notes, shot = env.cwd / "notes.md", env.cwd / "shot.png"
    assert first[0]["text"] == (
        f'<file name="{notes}">\nline one\nline two\n</file>\n'
        f'<file name="{shot}">[Image: original 3000x1500, displayed at 2000x1000. '
        "Multiply coordinates by 1.50 to map to original image.]</file>\n"
        "What is in them?"
    )
    image = env.messages()[0]["content"][1]  # attached (this loopback model reads text only: not sent)
    assert image["type"] == "image" and image["mimeType"] == "image/png"
    assert Image.open(io.BytesIO(base64.b64decode(image["data"]))).size == (2000, 1000)
    second = server.requests[1].body["messages"][2]["content"]
    assert second == [{"type": "text", "text": "second prompt", "cache_control": {"type": "ephemeral"}}]


def test_file_arguments_alone_make_the_prompt_and_a_missing_one_stops_the_run(
    server: LoopbackServer, env: Env
) -> None:
    server.script(Turn([Text("ok")]))
    (env.cwd / "task.md").write_text("do it")
    result = env.call("--no-session", "-p", "@task.md", *env.args(server, "anthropic"))
    assert result.returncode == 0, result.stderr
    assert server.requests[0].body["messages"][0]["content"][0]["text"].startswith('<file name="')
    missing = env.call("-p", "x", "@nope.md", *env.args(server, "anthropic"))
    assert missing.returncode == 1 and f"File not found: {env.cwd / 'nope.md'}" in missing.stderr
    assert len(server.requests) == 1


def test_session_id_creates_then_continues_that_session(server: LoopbackServer, env: Env) -> None:
    server.script(Turn([Text("first")]), Turn([Text("second")]))
    created = env.call("-p", "one", "--session-id", "my-task.1", *env.args(server, "anthropic"))
    assert created.returncode == 0, created.stderr
    assert "my-task.1" in created.stderr  # told that a new session gets the id
    (path,) = env.session_files()
    header = json.loads(path.read_text().splitlines()[0])
    assert header["id"] == "my-task.1"
    again = env.call("-p", "two", "--session-id", "my-task.1", *env.args(server, "anthropic"))
    assert again.returncode == 0, again.stderr and "warning" not in again.stderr
    assert env.session_files() == [path]
    texts = [m["content"][0]["text"] for m in server.requests[1].body["messages"] if m["role"] == "user"]
    assert texts[0] == "one"


def test_session_id_names_a_session_kept_only_in_memory(server: LoopbackServer, env: Env) -> None:
    """With --no-session the id still names the run's session (json mode's header says it, as does the
    prompt-cache key where one is sent); no file is written."""
    server.script(Turn([Text("ok")]))
    args = ("-p", "one", "--no-session", "--session-id", "scratch-7", "--mode", "json")
    result = env.call(*args, *env.args(server, "anthropic"))
    assert result.returncode == 0, result.stderr
    header = json.loads(result.stdout.splitlines()[0])
    assert header["type"] == "session" and header["id"] == "scratch-7"
    assert env.session_files() == []


@pytest.mark.parametrize("bad", ["-x", "a b", "x/../y", "end-"])
def test_an_unsafe_session_id_is_refused(server: LoopbackServer, env: Env, bad: str) -> None:
    result = env.call("-p", "one", f"--session-id={bad}", *env.args(server, "anthropic"))
    assert result.returncode == 1 and "session id" in result.stderr
    assert env.session_files() == [] and server.requests == []


def test_a_key_command_runs_only_for_the_provider_in_use(server: LoopbackServer, env: Env) -> None:
    ran = env.cwd.parent
    providers = {
        name: {
            "baseUrl": server.url,
            "api": "anthropic-messages",
            "apiKey": f"!touch {ran / (name + '.ran')} && echo key-{name}",
            "models": [{"id": f"{name}-model"}],
        }
        for name in ("first", "second")
    }
    (env.agent / "models.json").write_text(json.dumps({"providers": providers}))
    server.script(Turn([Text("ok")]), Turn([Text("ok")]))
    result = env.call("-p", "hi", "--no-session", "--model", "second/second-model")
    assert result.returncode == 0, result.stderr
    assert server.requests[-1].headers["x-api-key"] == "key-second"
    assert (ran / "second.ran").exists() and not (ran / "first.ran").exists()
    (ran / "second.ran").unlink()
    del env.vars["ANTHROPIC_API_KEY"]  # the default model is then one of these two
    chosen = env.call("-p", "hi", "--no-session")  # the default choice does not run the commands either
    assert chosen.returncode == 0, chosen.stderr
    used = server.requests[-1].headers["x-api-key"].removeprefix("key-")
    assert sorted(p.name for p in ran.glob("*.ran")) == [f"{used}.ran"]
