"""Continuing each other's sessions with the reference CLI (Pi 1.6): the same file, continued by Pi and by
piwork, makes both send the same conversation.

The files hold what Pi 1.6 adds to a session (``context_edit`` entries that leave out or replace what the
model sees, ``usage`` entries, system messages, a compaction carrying ``systemMessage``), or are written by
piwork's engine with its own context edits, or are 0.85-era files without any of it. Each program gets its
own copy in its own project's session folder and runs ``-p ... --continue`` against one loopback server;
the request bodies are compared as in ``test_cli_parity`` (the system prompt text is each program's own).

Skips with the reason when the reference implementation is not installed (``PI_ORACLE_DIR``).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from piwork.core.session.format import default_session_dir, serialize, session_file_name
from piwork.core.session.store import create_session
from tests.commands.test_cli_parity import MODEL, Run, Side, _anthropic_models, _assert_same, _both
from tests.support import LoopbackServer, Text, Turn, Usage
from tests.support.reference import MISSING_REASON, NODE, PI_DIST, reference_installed

pytestmark = [
    pytest.mark.oracle,
    pytest.mark.skipif(not reference_installed(PI_DIST / "bundle" / "cli.js"), reason=MISSING_REASON),
]

BASE_MS = 1_764_000_000_000
CONTINUE = ["-p", "and now?", "--continue", "--provider", "anthropic", "--model", MODEL, "--thinking", "off"]


@pytest.fixture
def server() -> Any:
    with LoopbackServer(MODEL) as srv:
        yield srv


def _stamp(n: int) -> str:
    return f"2025-11-24T16:00:{n:02d}.000Z"


def _usage(total: int) -> dict[str, Any]:
    cost = {"input": 0.001, "output": 0.002, "cacheRead": 0, "cacheWrite": 0, "total": 0.003}
    return {
        "input": total - 10,
        "output": 10,
        "cacheRead": 0,
        "cacheWrite": 0,
        "totalTokens": total,
        "cost": cost,
    }


def _assistant(content: list[dict[str, Any]], n: int, stop: str = "stop", **extra: Any) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": content,
        "api": "anthropic-messages",
        "provider": "anthropic",
        "model": MODEL,
        "usage": _usage(100 + n),
        "stopReason": stop,
        "timestamp": BASE_MS + n * 1000,
        **extra,
    }


def _chain(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Entries in file order, each the child of the one before (ids e01, e02, ...)."""
    out: list[dict[str, Any]] = []
    for n, fields in enumerate(items, start=1):
        entry = {"type": fields.pop("type"), "id": f"e{n:02d}", "parentId": out[-1]["id"] if out else None}
        entry["timestamp"] = _stamp(n)
        entry.update(fields)
        out.append(entry)
    return out


def _message(message: dict[str, Any]) -> dict[str, Any]:
    return {"type": "message", "message": message}


def pi16_additions(recorded: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What a Pi 1.6 session goes on to hold after the entries Pi ``recorded`` (its own system message
    among them): a failed overflow attempt left out, a usage entry, a tool result replaced by a short
    text, a compaction carrying the system message, and new optional message fields."""
    system = next(
        e["message"] for e in recorded if e["type"] == "message" and e["message"]["role"] == "system"
    )
    read = {"type": "toolCall", "id": "toolu_1", "name": "read", "arguments": {"path": "notes.txt"}}
    items = [
        _message(
            {
                "role": "user",
                "content": [{"type": "text", "text": "read the notes"}],
                "timestamp": BASE_MS + 6000,
            }
        ),
        _message(_assistant([{"type": "text", "text": "Reading."}, read], 7, "toolUse", thinkingLevel="off")),
        _message(
            {
                "role": "toolResult",
                "toolCallId": "toolu_1",
                "toolName": "read",
                "content": [{"type": "text", "text": "alpha\nbeta\n" * 50}],
                "isError": False,
                "timestamp": BASE_MS + 8000,
                "durationMs": 3,
            }
        ),
        _message(
            _assistant([], 9, "error", errorMessage="prompt is too long: 210000 tokens > 200000 maximum")
        ),
        {"type": "context_edit", "targetId": "x04", "replacement": None},
        {
            "type": "usage",
            "kind": "cacheWarming",
            "provider": "anthropic",
            "model": MODEL,
            "usage": _usage(50),
            "note": "prompt cache kept warm",
        },
        {
            "type": "context_edit",
            "targetId": "x03",
            "replacement": {"content": [{"type": "text", "text": "(notes: two lines)"}]},
        },
        {
            "type": "compaction",
            "summary": "## Goal\nAnswer questions about the notes.",
            "firstKeptEntryId": "x01",
            "tokensBefore": 900,
            "details": {"readFiles": ["notes.txt"], "modifiedFiles": []},
            "fromHook": False,
            "systemMessage": {**system, "timestamp": BASE_MS + 13000},
        },
        _message(
            _assistant([{"type": "text", "text": "The notes have two lines."}], 14, cost_from_provider=True)
        ),
    ]
    out: list[dict[str, Any]] = []
    parent = recorded[-1]["id"]
    for n, fields in enumerate(items, start=1):
        entry = {"type": fields.pop("type"), "id": f"x{n:02d}", "parentId": parent, "timestamp": _stamp(n)}
        entry.update(fields)
        out.append(entry)
        parent = entry["id"]
    return out


def pi085_session() -> list[dict[str, Any]]:
    """A 0.85-era file: messages, state changes, a compaction, a branch summary, a label."""
    return _chain(
        [
            {"type": "model_change", "provider": "anthropic", "modelId": MODEL},
            _message({"role": "user", "content": "old question " * 30, "timestamp": BASE_MS + 2000}),
            _message(_assistant([{"type": "text", "text": "old answer " * 30}], 3)),
            _message({"role": "user", "content": "second", "timestamp": BASE_MS + 4000}),
            _message(_assistant([{"type": "text", "text": "second answer"}], 5)),
            {
                "type": "compaction",
                "summary": "## Goal\nOld work.",
                "firstKeptEntryId": "e04",
                "tokensBefore": 400,
                "details": {"readFiles": [], "modifiedFiles": []},
                "fromHook": False,
            },
            {"type": "label", "targetId": "e04", "label": "kept"},
            _message({"role": "user", "content": "after the compaction", "timestamp": BASE_MS + 8000}),
            _message(_assistant([{"type": "text", "text": "noted"}], 9)),
        ]
    )


def _place(side: Side, entries: list[dict[str, Any]]) -> Path:
    """A copy of ``entries`` as the newest session file of ``side``'s project."""
    header = {"type": "session", "version": 3, "id": "019ab000-0000-7000-8000-000000000001"}
    header.update(timestamp=_stamp(0), cwd=str(side.project))
    folder = default_session_dir(str(side.project), side.agent)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / session_file_name(header["timestamp"], header["id"])
    path.write_text("".join(serialize(v) for v in [header, *entries]), encoding="utf-8")
    return path


def _fix_cost_flag(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``cost.totalFromProvider`` as Pi 1.6 writes it (the builder's keyword marks where)."""
    for entry in entries:
        message = entry.get("message")
        if isinstance(message, dict) and message.pop("cost_from_provider", False):
            message["usage"]["cost"]["totalFromProvider"] = True
    return entries


def _continue_both(server: LoopbackServer, tmp_path: Path, entries: list[dict[str, Any]]) -> dict[str, Run]:
    pi, mine = _both(tmp_path, server, _anthropic_models(server))
    runs: dict[str, Run] = {}
    for side in (pi, mine):
        _place(side, json.loads(json.dumps(entries)))
        server.script(Turn([Text("Here is more.")], usage=Usage(input=300, output=5)))
        runs[side.name] = side.run(*CONTINUE)
    return runs


def _texts(body: dict[str, Any]) -> list[tuple[str, str]]:
    out = []
    for message in body["messages"]:
        content = message["content"]
        text = content if isinstance(content, str) else " ".join(b.get("text", b["type"]) for b in content)
        out.append((message["role"], text[:30]))
    return out


def test_a_pi16_session_continues_with_the_conversation_pi_sends(
    server: LoopbackServer, tmp_path: Path
) -> None:
    pi, mine = _both(tmp_path, server, _anthropic_models(server))
    server.script(Turn([Text("Hello there.")], usage=Usage(input=200, output=5)))
    pi.run("-p", "hello", "--provider", "anthropic", "--model", MODEL, "--thinking", "off")
    recorded = pi.entries()  # Pi's own start: its system message, state changes, the first turn
    assert any(e["type"] == "message" and e["message"]["role"] == "system" for e in recorded)
    entries = _fix_cost_flag([*recorded, *pi16_additions(recorded)])
    for old in pi.agent.rglob("*.jsonl"):
        old.unlink()
    runs: dict[str, Run] = {}
    for side in (pi, mine):
        _place(side, json.loads(json.dumps(entries)))
        server.script(Turn([Text("Here is more.")], usage=Usage(input=300, output=5)))
        runs[side.name] = side.run(*CONTINUE)
    _assert_same(runs["pi"], runs["piwork"])
    sent = _texts(runs["piwork"].bodies[0])
    assert sent[0][1].startswith("The conversation history")  # the compaction summary leads
    body = json.dumps(runs["piwork"].bodies[0])
    assert "(notes: two lines)" in body and "alpha\\nbeta" not in body  # the tool result as replaced
    assert len(sent) == 6  # the left-out attempt stays out, the usage entry is no message


def test_a_0_85_session_continues_as_before(server: LoopbackServer, tmp_path: Path) -> None:
    runs = _continue_both(server, tmp_path, pi085_session())
    _assert_same(runs["pi"], runs["piwork"])
    assert [role for role, _ in _texts(runs["piwork"].bodies[0])] == [
        "user",
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
    ]


def test_pi_continues_a_session_with_piworks_context_edits(server: LoopbackServer, tmp_path: Path) -> None:
    """The file is written by piwork's engine (messages, then its own context edits), then continued by both."""
    source = tmp_path / "piwork-written"
    session = create_session(str(source), source / "sessions")
    tree = session.tree
    tree.append_model_change("anthropic", MODEL)
    first = tree.append_message({"role": "user", "content": "a long question " * 30, "timestamp": BASE_MS})
    answer = tree.append_message(_assistant([{"type": "text", "text": "a rambling answer " * 30}], 2))
    tree.append_message({"role": "user", "content": "shorter one", "timestamp": BASE_MS + 3000})
    tree.append_message(_assistant([{"type": "text", "text": "short answer"}], 4))
    tree.append_context_edit(answer, None)
    tree.append_context_edit(first, "a question")
    session.close()
    assert session.path is not None
    entries = [json.loads(line) for line in session.path.read_text(encoding="utf-8").splitlines()[1:]]
    runs = _continue_both(server, tmp_path, entries)
    _assert_same(runs["pi"], runs["piwork"])
    assert _texts(runs["pi"].bodies[0])[:3] == [
        ("user", "a question"),
        ("user", "shorter one"),
        ("assistant", "short answer"),
    ]


CONTEXT_SCRIPT = """
const sm = await import(process.argv[2] + "/core/session-manager.js");
const s = sm.SessionManager.open(process.argv[3]);
console.log(JSON.stringify(s.buildSessionContext()));
"""


def test_pi_reads_piworks_edits_and_restores_as_piwork_does(tmp_path: Path) -> None:
    """Leave out, replace and restore written by piwork give Pi's session manager piwork's context."""
    session = create_session(str(tmp_path), tmp_path / "sessions")
    tree = session.tree
    tree.append_message({"role": "user", "content": "q", "timestamp": BASE_MS})
    reply = tree.append_message(_assistant([{"type": "text", "text": "long"}], 1))
    result_call = {"type": "toolCall", "id": "t1", "name": "read", "arguments": {"path": "x"}}
    tree.append_message(_assistant([result_call], 2, "toolUse"))
    result = tree.append_message(
        {"role": "toolResult", "toolCallId": "t1", "toolName": "read", "content": [{"type": "text", "text": "big"}],
         "isError": False, "timestamp": BASE_MS + 3000}
    )  # fmt: skip
    tree.append_context_edit(reply, None)
    tree.append_context_edit(result, "small")
    tree.restore_context_edit(reply)
    session.close()
    assert session.path is not None
    script = tmp_path / "context.mjs"
    script.write_text(CONTEXT_SCRIPT, encoding="utf-8")
    done = subprocess.run(
        [str(NODE), str(script), str(PI_DIST), str(session.path)],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PI_CODING_AGENT_DIR": str(tmp_path / "pi-agent")},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    from piwork.core.session.store import open_session

    with open_session(session.path, writable=False) as again:
        ours = json.loads(json.dumps(again.tree.build_context().to_json()))
    assert json.loads(done.stdout) == ours
    assert ours["messages"][1]["content"] == [{"type": "text", "text": "long"}]
    assert ours["messages"][3]["content"] == [{"type": "text", "text": "small"}]


@pytest.mark.parametrize("author", ["pi", "piwork"])
def test_a_session_continues_with_the_tools_it_declares(
    server: LoopbackServer, tmp_path: Path, author: str
) -> None:
    """A session run with ``--tools read,ls`` by either program declares that set in a system message;
    both programs continue it (no tool option) with those tools and send the same request."""
    sides = dict(zip(("pi", "piwork"), _both(tmp_path, server, _anthropic_models(server)), strict=True))
    server.script(Turn([Text("Hello there.")], usage=Usage(input=200, output=5)))
    sides[author].run("-p", "hello", "--provider", "anthropic", "--model", MODEL, "--thinking", "off",
                      "--tools", "read,ls")  # fmt: skip
    recorded = sides[author].entries()
    for old in sides[author].agent.rglob("*.jsonl"):
        old.unlink()
    runs: dict[str, Run] = {}
    for name, side in sides.items():
        _place(side, json.loads(json.dumps(recorded)))
        server.script(Turn([Text("Here is more.")], usage=Usage(input=300, output=5)))
        runs[name] = side.run(*CONTINUE)
    _assert_same(runs["pi"], runs["piwork"])
    assert [tool["name"] for tool in runs["piwork"].bodies[0]["tools"]] == ["read", "ls"]
