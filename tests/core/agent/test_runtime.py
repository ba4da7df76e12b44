"""create_runtime: trust before resources, skills and templates expanded, model chosen, state recorded."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
from pathlib import Path
from typing import Any

import pytest

from piwork.core.agent.events import ErrorNotice
from piwork.core.agent.session import ReadOnlySession
from piwork.core.llm.credentials import CredentialStore
from piwork.core.workflows.runtime import SetupError, create_runtime
from tests.support.blocking_keyring import BlockingKeyring
from tests.support.loopback_server import LoopbackServer, Text, ToolCall, Turn
from tests.support.runtime_options import runtime_options

pytestmark = pytest.mark.anyio


@pytest.fixture
def server() -> Any:
    with LoopbackServer() as srv:
        yield srv


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / ".pi" / "prompts").mkdir(parents=True)
    (root / "AGENTS.md").write_text("Always answer in haiku.\n")
    (root / ".pi" / "prompts" / "proj.md").write_text("Project template $1\n")
    skill = tmp_path / "agent" / "skills" / "greet"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: greet\ndescription: Say hello nicely.\n---\nSay hello.\n")
    (tmp_path / "agent" / "prompts").mkdir(parents=True)
    (tmp_path / "agent" / "prompts" / "fix.md").write_text("Fix the bug in $1 carefully.\n")
    (tmp_path / "home").mkdir()
    return root


async def test_skill_and_template_expansion_and_system_prompt(
    server: LoopbackServer, tmp_path: Path, project: Path
) -> None:
    runtime = await create_runtime(runtime_options(tmp_path, server, trust_override=False))
    server.script(Turn([Text("one")]), Turn([Text("two")]), Turn([Text("three")]))
    await runtime.session.prompt("/skill:greet the team")
    await runtime.session.prompt("/fix parser.py")
    await runtime.session.prompt("/proj x")  # project template: untrusted, so not expanded
    sent = [r.body["messages"][-1]["content"][0]["text"] for r in server.requests]
    assert (
        sent[0].startswith('<skill name="greet"')
        and sent[0].endswith("\n\nthe team")
        and "Say hello." in sent[0]
    )
    assert sent[1].strip() == "Fix the bug in parser.py carefully."
    assert sent[2] == "/proj x"
    system = server.requests[0].body["system"][0]["text"]
    assert "Always answer in haiku." in system and "greet" in system
    assert not runtime.resources.project_trusted
    runtime.store.close()


@pytest.mark.parametrize("enabled", [True, False])
async def test_enable_skill_commands_decides_the_offer_not_the_expansion(
    server: LoopbackServer, tmp_path: Path, project: Path, enabled: bool
) -> None:
    (tmp_path / "agent" / "settings.json").write_text(json.dumps({"enableSkillCommands": enabled}))
    runtime = await create_runtime(runtime_options(tmp_path, server, trust_override=False))
    resources = runtime.resources
    assert [s.name for s in resources.skills] == ["greet"]
    assert [s.name for s in resources.skill_commands] == (["greet"] if enabled else [])
    server.script(Turn([Text("hi")]))
    await runtime.session.prompt("/skill:greet the team")  # typed by hand: expands either way, as in Pi
    sent = server.requests[0].body["messages"][-1]["content"][0]["text"]
    assert sent.startswith('<skill name="greet"') and sent.endswith("\n\nthe team")
    runtime.store.close()


async def test_new_session_records_model_and_thinking_like_pi(
    server: LoopbackServer, tmp_path: Path, project: Path
) -> None:
    runtime = await create_runtime(runtime_options(tmp_path, server))
    server.script(Turn([Text("hi")]))
    await runtime.session.prompt("hello")
    assert runtime.store.path is not None
    entries = [json.loads(line) for line in runtime.store.path.read_text().splitlines()[1:]]
    assert [e["type"] for e in entries[:2]] == ["model_change", "thinking_level_change"]
    assert entries[0]["modelId"] == server.model and entries[1]["thinkingLevel"] == "off"
    runtime.store.close()
    resumed = await create_runtime(runtime_options(tmp_path, server, model=None, continue_recent=True))
    assert resumed.session.model is not None and resumed.session.model.id == server.model
    assert [m["role"] for m in resumed.session.messages] == ["user", "assistant"]
    resumed.store.close()


async def test_setup_errors_are_clear(server: LoopbackServer, tmp_path: Path, project: Path) -> None:
    with pytest.raises(SetupError, match="does not exist"):
        await create_runtime(runtime_options(tmp_path, server, cwd=str(tmp_path / "missing")))
    with pytest.raises(SetupError, match="Unknown model anthropic/nope"):
        await create_runtime(runtime_options(tmp_path, server, model="anthropic/nope", base_url=None))


async def test_thinking_level_reaches_the_request_and_the_file(
    server: LoopbackServer, tmp_path: Path, project: Path
) -> None:
    runtime = await create_runtime(
        runtime_options(tmp_path, server, model="anthropic/claude-sonnet-4-5", thinking="high")
    )
    assert runtime.session.thinking_level == "high"
    server.script(Turn([Text("thought")]))
    await runtime.session.prompt("think")
    body = server.requests[0].body
    assert body["model"] == "claude-sonnet-4-5" and body["thinking"]["type"] in ("enabled", "adaptive")
    assert runtime.store.path is not None
    entries = [json.loads(line) for line in runtime.store.path.read_text().splitlines()[1:]]
    assert {"type": "thinking_level_change", "thinkingLevel": "high"}.items() <= entries[1].items()
    runtime.store.close()


async def test_logs_size_cap_from_settings_reaches_the_bash_tool(
    server: LoopbackServer, tmp_path: Path, project: Path
) -> None:
    (tmp_path / "agent" / "settings.json").write_text(json.dumps({"logs": {"maxTotalMB": 0.05}}))
    old = tmp_path / "agent" / "logs" / "older-session" / "bash-old.log"
    old.parent.mkdir(parents=True)
    old.write_bytes(b"x" * 40_000)
    os.utime(old, (1_000_000, 1_000_000))
    runtime = await create_runtime(runtime_options(tmp_path, server))
    server.script(Turn([ToolCall("bash", {"command": "seq 1 30000"})]), Turn([Text("done")]))
    await runtime.session.prompt("count")
    assert runtime.store.path is not None
    kept = list((tmp_path / "agent" / "logs").rglob("*.log"))
    # the new full-output log (about 170 kB of output) stops at the cap, and the older log goes
    assert not old.exists() and len(kept) == 1 and kept[0].stat().st_size == int(0.05 * 1024 * 1024)
    runtime.store.close()


async def test_session_held_by_another_piwork_opens_read_only_and_says_why(
    server: LoopbackServer, tmp_path: Path, project: Path
) -> None:
    first = await create_runtime(runtime_options(tmp_path, server))
    server.script(Turn([Text("hi")]))
    await first.session.prompt("hello")
    assert first.store.path is not None
    before = first.store.path.read_bytes()
    second = await create_runtime(
        runtime_options(
            tmp_path, server, session_file=str(first.store.path), model="anthropic/claude-sonnet-4-5"
        )
    )
    assert second.store.read_only and second.notices
    assert "read-only" in second.notices[0]
    assert second.session.read_only_reason == second.notices[0]
    with pytest.raises(ReadOnlySession, match=r"Cannot send a prompt: .*read-only"):
        await second.session.prompt("are you there?")
    with pytest.raises(ReadOnlySession):
        await second.session.compact()
    second.session.set_thinking_level("high")  # looked at, not written: changes stay in memory
    assert second.session.thinking_level == "high"
    assert len(server.requests) == 1 and first.store.path.read_bytes() == before
    second.store.close()
    first.store.close()


async def test_later_session_notices_reach_subscribers(
    server: LoopbackServer, tmp_path: Path, project: Path
) -> None:
    runtime = await create_runtime(runtime_options(tmp_path, server))
    server.script(Turn([Text("one")]), Turn([Text("two")]))
    await runtime.session.prompt("first")
    notices: list[str] = []
    runtime.session.subscribe(lambda e: notices.append(e.message) if isinstance(e, ErrorNotice) else None)
    assert runtime.store.path is not None
    with runtime.store.path.open("a") as handle:  # another program appends to the file
        handle.write(json.dumps({"type": "label", "id": "ext1", "parentId": None, "timestamp": "x"}) + "\n")
    await runtime.session.prompt("second")
    assert any("changed by another program" in text for text in notices)
    runtime.store.close()


async def test_bad_context_governor_settings_are_reported_and_defaults_used(
    server: LoopbackServer, tmp_path: Path, project: Path
) -> None:
    settings = {"piwork": {"contextGovernor": {"minSavings": "lots", "enabled": False}}}
    (tmp_path / "agent" / "settings.json").write_text(json.dumps(settings))
    runtime = await create_runtime(runtime_options(tmp_path, server))
    settings_file = tmp_path / "agent" / "settings.json"
    assert (
        f'{settings_file}: piwork.contextGovernor.minSavings must be a whole number (got "lots"); using 8000'
        in runtime.file_warnings()
    )
    assert runtime.session.governance.governor.settings.enabled is False
    runtime.store.close()


async def test_the_keyring_is_asked_off_the_event_loop_and_the_session_uses_its_key(
    server: LoopbackServer, tmp_path: Path, project: Path
) -> None:
    """A keyring that waits (an unlock prompt) never holds up the event loop a window shares."""
    env = {"HOME": str(tmp_path / "home")}
    backend = BlockingKeyring({"anthropic": "sk-from-keyring"})
    credentials = CredentialStore(backend, env=env)
    opts = runtime_options(tmp_path, server, trust_override=False, env=env, credentials=credentials)

    async def unlock_once_asked() -> None:
        await asyncio.to_thread(backend.asked.wait, 10)  # the loop runs this while the keyring waits
        backend.open()

    unlocking = asyncio.ensure_future(unlock_once_asked())
    runtime = await create_runtime(opts)
    await unlocking
    server.script(Turn([Text("hello")]))
    asked = backend.waiting
    await runtime.session.prompt("hi")
    assert server.requests[0].headers["x-api-key"] == "sk-from-keyring"
    assert backend.waiting == asked  # the request's key came from memory
    assert backend.callers and backend.calls_on_gui_thread == []
    runtime.store.close()


async def test_default_tools_setting_chooses_the_tools_a_session_starts_with(
    server: LoopbackServer, tmp_path: Path, project: Path
) -> None:
    (tmp_path / "agent" / "settings.json").write_text(
        json.dumps({"defaultTools": ["read", "grep", "tool_search"]})
    )
    (project / ".pi" / "settings.json").write_text(json.dumps({"defaultTools": ["-grep", "+ls"]}))
    runtime = await create_runtime(runtime_options(tmp_path, server, trust_override=True))
    assert runtime.session.tool_names() == ["read", "ls"]
    server.script(Turn([Text("ok")]))
    await runtime.session.prompt("hi")
    assert [tool["name"] for tool in server.requests[-1].body["tools"]] == ["read", "ls"]
    untrusted = await create_runtime(runtime_options(tmp_path, server, trust_override=False))
    assert untrusted.session.tool_names() == ["read", "grep"]


async def test_opening_a_session_never_writes_until_something_is_done(
    server: LoopbackServer, tmp_path: Path, project: Path
) -> None:
    from tests.core.session.helpers import HEADER, assistant, user, write_session

    path = write_session(
        tmp_path / "old.jsonl",
        [user("u1", None, "hello", 1), assistant("a1", "u1", "hi", 2)],  # no thinking level recorded
        {**HEADER, "cwd": str(project)},
    )
    original = path.read_bytes()
    runtime = await create_runtime(runtime_options(tmp_path, server, session_file=str(path)))
    runtime.session.session_stats()
    runtime.session.context_usage()
    assert path.read_bytes() == original  # Pi's thinking_level_change waits for the first append
    server.script(Turn([Text("again")]))
    await runtime.session.prompt("more")
    runtime.store.close()
    data = path.read_bytes()
    assert data.startswith(original)
    added = [json.loads(line) for line in data[len(original) :].splitlines()]
    assert [e["type"] for e in added] == ["thinking_level_change", "message", "message"]
    assert added[0]["parentId"] == "a1" and added[1]["parentId"] == added[0]["id"]


async def test_a_resume_at_another_thinking_level_records_it_with_the_prompt(
    server: LoopbackServer, tmp_path: Path, project: Path
) -> None:
    """As Pi 1.6: the branch said medium, the run goes at high, so the prompt writes high first; a resume
    at the recorded level writes nothing more."""
    model = "anthropic/claude-sonnet-4-5"
    first = await create_runtime(runtime_options(tmp_path, server, model=model, thinking="medium"))
    server.script(Turn([Text("hi")]))
    await first.session.prompt("hello")
    assert first.store.path is not None
    path = first.store.path
    first.store.close()

    def added_since(before: bytes) -> list[dict[str, Any]]:
        data = path.read_bytes()
        assert data.startswith(before)
        return [json.loads(line) for line in data[len(before) :].splitlines()]

    before = path.read_bytes()
    again = await create_runtime(
        runtime_options(tmp_path, server, model=model, thinking="high", continue_recent=True)
    )
    server.script(Turn([Text("again")]))
    await again.session.prompt("more")
    again.store.close()
    added = added_since(before)
    assert [e["type"] for e in added] == ["thinking_level_change", "message", "message"]
    assert added[0]["thinkingLevel"] == "high" and added[1]["message"]["role"] == "user"

    before = path.read_bytes()
    same = await create_runtime(runtime_options(tmp_path, server, model=model, continue_recent=True))
    assert same.session.thinking_level == "high"
    server.script(Turn([Text("once more")]))
    await same.session.prompt("and more")
    same.store.close()
    assert [e["type"] for e in added_since(before)] == ["message", "message"]


@pytest.mark.parametrize(
    ("setting", "env", "ttl"),
    [(None, {}, None), (None, {"PI_CACHE_RETENTION": "long"}, "1h"), ("long", {}, "1h"),
     ("short", {"PI_CACHE_RETENTION": "long"}, None)],
)  # fmt: skip
async def test_cache_retention_from_settings_or_the_environment_reaches_the_request(
    server: LoopbackServer,
    tmp_path: Path,
    project: Path,
    setting: str | None,
    env: dict[str, str],
    ttl: str | None,
) -> None:
    agent = tmp_path / "agent"
    agent.mkdir(exist_ok=True)
    if setting is not None:
        (agent / "settings.json").write_text(json.dumps({"piwork": {"cacheRetention": setting}}))
    options = runtime_options(tmp_path, server)
    options = dataclasses.replace(options, env={**options.env, **env})
    runtime = await create_runtime(options)
    server.script(Turn([Text("hi")]))
    await runtime.session.prompt("hello")
    runtime.store.close()
    marker = server.requests[0].body["system"][-1]["cache_control"]
    assert marker == ({"type": "ephemeral", "ttl": ttl} if ttl else {"type": "ephemeral"})


async def test_totals_counted_at_open_or_when_asked_are_the_same(
    server: LoopbackServer, tmp_path: Path, project: Path
) -> None:
    """A runtime asked to count the file's totals while opening, and one that counts them only when asked
    (a ``-p`` run, a window): both give what a fresh count of every entry gives, also after a reply."""
    from piwork.core.agent.stats import session_stats
    from tests.core.session.helpers import HEADER, assistant, user, write_session

    entries = [user("u1", None, "hello", 1), assistant("a1", "u1", "hi", 2), user("u2", "u1", "side", 3)]
    path = write_session(tmp_path / "old.jsonl", entries, {**HEADER, "cwd": str(project)})
    for at_open in (True, False):
        runtime = await create_runtime(
            runtime_options(tmp_path, server, session_file=str(path), count_stats_at_open=at_open)
        )
        tree = runtime.store.tree
        assert runtime.session.session_stats() == session_stats(tree.entries())
        server.script(Turn([Text("again")]))
        await runtime.session.prompt("more")
        stats = runtime.session.session_stats()
        assert stats == session_stats(tree.entries())
        assert (stats.user_messages, stats.assistant_messages) == (3 + (not at_open), 2 + (not at_open))
        runtime.store.close()


async def test_a_long_branch_gives_its_last_messages_before_the_whole_context_is_built(
    server: LoopbackServer, tmp_path: Path, project: Path
) -> None:
    """``preview`` is given the leaf's last messages (about ``preview_messages``, from a prompt on) once
    the file is read: the context's own last messages. Not for a short branch, nor when a compaction
    among them or a context edit on the branch changes what they stand for."""
    from tests.core.session.helpers import HEADER, assistant, user, write_session

    entries: list[dict[str, Any]] = []
    parent = None
    for i in range(60):
        entries += [user(f"u{i}", parent, f"prompt {i}", i), assistant(f"a{i}", f"u{i}", f"answer {i}", i)]
        parent = f"a{i}"
    seen: list[list[dict[str, Any]]] = []

    async def preview(messages: list[dict[str, Any]]) -> None:
        seen.append(messages)

    async def opened(name: str, lines: list[dict[str, Any]], count: int) -> list[dict[str, Any]]:
        seen.clear()
        path = write_session(tmp_path / name, lines, {**HEADER, "cwd": str(project)})
        runtime = await create_runtime(
            runtime_options(tmp_path, server, session_file=str(path), preview=preview, preview_messages=count)
        )
        runtime.store.close()
        return runtime.session.messages

    messages = await opened("long.jsonl", entries, 20)
    [tail] = seen
    assert 20 <= len(tail) < 24 and tail[0] == {**tail[0], "role": "user"}
    assert messages[-len(tail) :] == tail
    assert tail[-1]["content"] == [{"type": "text", "text": "answer 59"}]
    await opened("short.jsonl", entries, 70)  # fewer than twice as many entries
    assert seen == []
    compaction = {
        "type": "compaction",
        "id": "c1",
        "parentId": "a55",
        "timestamp": "2024-12-03T14:01:00.000Z",
        "summary": "what came before",
        "firstKeptEntryId": "u50",
        "tokensBefore": 1000,
    }
    moved = [*entries[:112], compaction, {**entries[112], "parentId": "c1"}, *entries[113:]]
    await opened("compacted.jsonl", moved, 20)
    assert seen == []
    edit = {
        "type": "context_edit",
        "id": "e1",
        "parentId": "a59",
        "timestamp": "2024-12-03T14:02:00.000Z",
        "targetId": "a10",
        "replacement": None,
    }
    await opened("edited.jsonl", [*entries, edit], 20)
    assert seen == []


async def test_a_long_file_gives_its_last_messages_from_its_end_before_it_is_read(
    server: LoopbackServer, tmp_path: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A session file longer than what ``file_end_tail`` reads gives the preview from its last lines, before
    the file is indexed: the same messages as the context's last ones. Lines there that are not entries,
    or a branch that goes on before them, give none from there (the indexed file gives them instead)."""
    import piwork.core.workflows.runtime as runtime_module
    from tests.core.session.helpers import HEADER, assistant, user, write_session

    entries: list[dict[str, Any]] = []
    parent = None
    for i in range(200):
        entries += [
            user(f"u{i}", parent, f"prompt {i} " + "x" * 200, i),
            assistant(f"a{i}", f"u{i}", f"answer {i}", i),
        ]
        parent = f"a{i}"
    side = user("side", "a150", "a side branch", 300)  # written late, off the branch
    path = write_session(
        tmp_path / "long.jsonl", [*entries[:-2], side, *entries[-2:]], {**HEADER, "cwd": str(project)}
    )
    monkeypatch.setattr(runtime_module, "FILE_END_BYTES", 20_000)
    order: list[str] = []
    open_store = runtime_module._open_store

    def opening(*args: Any) -> Any:
        order.append("open")
        return open_store(*args)

    monkeypatch.setattr(runtime_module, "_open_store", opening)
    seen: list[list[dict[str, Any]]] = []

    async def preview(messages: list[dict[str, Any]]) -> None:
        order.append("preview")
        seen.append(messages)

    runtime = await create_runtime(
        runtime_options(tmp_path, server, session_file=str(path), preview=preview, preview_messages=20)
    )
    runtime.store.close()
    assert order == ["preview", "open"]
    [tail] = seen
    assert 20 <= len(tail) < 24 and tail[0]["role"] == "user"
    assert runtime.session.messages[-len(tail) :] == tail
    assert runtime_module.file_end_tail(str(path), 200) is None  # the branch goes on before those lines
    broken = tmp_path / "broken.jsonl"
    broken.write_bytes(path.read_bytes() + b"not an entry\n")
    assert runtime_module.file_end_tail(str(broken), 20) is None


def test_the_file_end_read_never_waits_on_a_fifo_nor_takes_a_torn_or_undecodable_end(tmp_path: Path) -> None:
    import threading

    from piwork.core.workflows import runtime as runtime_module

    fifo = tmp_path / "named-pipe.jsonl"
    os.mkfifo(fifo)  # no writer: a plain open for reading would wait for one for ever
    answers: list[object] = []
    reader = threading.Thread(
        target=lambda: answers.append(runtime_module.file_end_tail(str(fifo), 20)), daemon=True
    )
    reader.start()
    reader.join(timeout=10)
    assert answers == [None]

    entry = {"type": "message", "id": "e", "parentId": None, "message": {"role": "user", "content": "x"}}
    body = (json.dumps(entry) + "\n").encode()
    filler = b'{"type":"custom","id":"f%d","parentId":null}\n'
    big = b"".join(filler % i for i in range((runtime_module.FILE_END_BYTES // len(filler)) + 10)) + body
    torn = tmp_path / "torn.jsonl"
    torn.write_bytes(big + b'{"type":"message","id":"g","parentId":"e","mess')  # a write cut short
    assert runtime_module.file_end_tail(str(torn), 20) is None
    undecodable = tmp_path / "undecodable.jsonl"
    undecodable.write_bytes(big + b'{"type":"message","id":"\xff\xfe","parentId":"e"}\n')
    assert runtime_module.file_end_tail(str(undecodable), 20) is None
