"""Hostile inputs and faults: nothing is lost, nothing hangs, nothing gets in, and nothing ends in a traceback.

Each section drives the real engine (and the headless commands in this process) with broken or
malicious input: corrupt sessions and configuration files, FIFOs, devices and sparse files met by the
tools, write targets that must keep their inode, symlinked project folders, logs that run out of space,
keys split across output chunks, a server that drips. Random cases come from a fixed seed, so a failure
reproduces; every case is small so the whole module stays within seconds. The matching regression
tests live beside the code they cover (tools/test_special_files.py, tools/test_log_space.py,
agent/test_full_disk.py, commands/test_headless_termination.py, commands/test_request_deadlines.py,
commands/test_key_hygiene.py, resources/test_loader_security.py).
"""

from __future__ import annotations

import asyncio
import errno
import io
import json
import os
import random
import time
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any, BinaryIO, cast

import pytest

from piwork.commands import headless
from piwork.commands import inspect as inspect_command
from piwork.core.errors import PiworkError
from piwork.core.resources.frontmatter import FrontmatterError, parse_frontmatter
from piwork.core.session.store import open_session
from tests.core.tools.helpers import call, text
from tests.support.loopback_server import LoopbackServer, Text, Turn

SEED = 20260101
HEADER = {
    "type": "session",
    "version": 3,
    "id": "0c5f2a7e-1111-4222-8333-444455556666",
    "timestamp": "2026-01-01T00:00:00.000Z",
    "cwd": "/",
}


def _entry(**fields: Any) -> str:
    base: dict[str, Any] = {
        "type": "message",
        "id": "a1b2c3d4",
        "parentId": None,
        "timestamp": "2026-01-01T00:00:01.000Z",
        "message": {"role": "user", "content": "hey", "timestamp": 1},
    }
    if fields.get("id", "a1b2c3d4") != "a1b2c3d4":
        base["parentId"] = "a1b2c3d4"  # on the path to the leaf, so the context meets it
    base.update(fields)
    return json.dumps(base)


HOSTILE_LINES = {
    "empty object": "{}",
    "message missing": json.dumps({"type": "message", "id": "x1", "parentId": None}),
    "message null": _entry(id="x2", message=None),
    "message a string": _entry(id="x3", message="hi"),
    "role missing": _entry(id="x4", message={"content": "x"}),
    "role a number": _entry(id="x5", message={"role": 5, "content": "x"}),
    "content an object": _entry(id="x6", message={"role": "assistant", "content": {"a": 1}}),
    "null blocks": _entry(
        id="x7", message={"role": "assistant", "content": [1, None, "x", {"type": "toolCall"}]}
    ),
    "bad tool call": _entry(
        id="x8",
        message={
            "role": "assistant",
            "stopReason": "toolUse",
            "content": [
                {"type": "toolCall", "id": 5, "name": None, "arguments": "x"},
                {"type": "text", "text": 5},
            ],
        },
    ),
    "usage not numbers": _entry(
        id="x9", message={"role": "assistant", "content": [], "usage": {"input": "x", "cost": 5}}
    ),
    "id a number": _entry(id=5),
    "id a list": _entry(id=[1]),
    "parent an object": _entry(id="y1", parentId={"x": 1}),
    "label of nothing": json.dumps(
        {"type": "label", "id": "l1", "parentId": None, "targetId": 5, "label": 7}
    ),
    "compaction of strange types": json.dumps(
        {
            "type": "compaction",
            "id": "c1",
            "parentId": None,
            "summary": 5,
            "firstKeptEntryId": 3,
            "tokensBefore": "x",
        }
    ),
    "deep array": "[" * 100_000 + "]" * 100_000,
    "deep object": '{"type":"message","id":"d","parentId":null,"message":'
    + '{"a":' * 50_000
    + "1"
    + "}" * 50_000
    + "}",
    "deep but readable arguments": '{"type":"message","id":"da","parentId":null,"timestamp":"x","message":'
    '{"role":"assistant","stopReason":"toolUse","content":[{"type":"toolCall","id":"t","name":"read","arguments":{"x":'
    + "[" * 900
    + "]" * 900
    + "}}]}}",
    "lone surrogates": '{"type":"message","id":"\\udc00","parentId":null,"timestamp":"x",'
    '"message":{"role":"user","content":"\\ud800 lone"}}',
}


def _session_text(line: str) -> str:
    try:
        hostile_id = json.loads(line).get("id")
    except (ValueError, RecursionError, AttributeError):
        hostile_id = None
    parent = hostile_id if isinstance(hostile_id, str) else "a1b2c3d4"
    return "\n".join([json.dumps(HEADER), _entry(), line, _entry(id="zz", parentId=parent)]) + "\n"


class Workspace:
    """An agent folder, a project and the environment a headless run reads, in one temp dir."""

    def __init__(self, root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        self.agent = root / "agent"
        self.cwd = root / "project"
        self.agent.mkdir()
        self.cwd.mkdir()
        (self.agent / "settings.json").write_text('{"retry": {"enabled": false}}')
        for key in [k for k in os.environ if k.endswith("_API_KEY")]:
            monkeypatch.delenv(key)
        monkeypatch.setenv("PI_CODING_AGENT_DIR", str(self.agent))
        monkeypatch.setenv("HOME", str(root))
        monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.null.Keyring")
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-hostile-test-key")
        monkeypatch.chdir(self.cwd)

    def prompt(self, server: LoopbackServer, *args: str) -> tuple[int, str, str]:
        server.script(Turn([Text("ok")]))
        out, err = io.StringIO(), io.StringIO()
        code = headless.main(
            ["-p", "hi", *args, "--model", f"anthropic/{server.model}", "--base-url", server.url],
            io.StringIO(""),
            out,
            err,
        )
        return code, out.getvalue(), err.getvalue()


@pytest.fixture
def server() -> Iterator[LoopbackServer]:
    with LoopbackServer() as srv:
        yield srv


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Workspace:
    return Workspace(tmp_path, monkeypatch)


# -- sessions ----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(HOSTILE_LINES))
def test_hostile_session_lines_are_survived_by_every_command(
    name: str, workspace: Workspace, server: LoopbackServer, capsys: pytest.CaptureFixture[str]
) -> None:
    path = workspace.cwd / "s.jsonl"
    original = _session_text(HOSTILE_LINES[name]).encode("utf-8", "surrogatepass")
    path.write_bytes(original)
    assert inspect_command.main([str(path)]) == 0
    capsys.readouterr()
    assert inspect_command.main([str(path), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["entries"]["total"] >= 2
    code, out, err = workspace.prompt(server, "--session", str(path))
    assert (code, out) == (0, "ok\n"), err
    assert path.read_bytes().startswith(original)  # appended to, never rewritten
    sent = server.requests[-1].body["messages"]
    assert all(isinstance(m["content"], (str, list)) for m in sent)


def test_random_session_corruption_never_raises() -> None:
    rng = random.Random(SEED)
    pieces = [
        *HOSTILE_LINES.values(),
        _entry(id="ok1"),
        '{"type":"message"',
        "\ufeff{}",
        "null",
        "[]",
        "\x00\xff",
    ]
    values: list[Any] = [None, 5, "x", [], {}, [None], {"role": None}, 1e308, -1, True]
    started = time.monotonic()
    for case in range(200):
        lines = [json.dumps(HEADER)]
        for _ in range(rng.randint(1, 8)):
            if rng.random() < 0.5:
                lines.append(rng.choice(pieces))
            else:
                fields = {k: rng.choice(values) for k in rng.sample(["id", "parentId", "message", "type"], 2)}
                lines.append(_entry(**fields))
        data = "\n".join(lines).encode("utf-8", "surrogatepass")
        cut = rng.randint(len(data) // 2, len(data))
        path = Path(f"/tmp/piwork-hostile-{os.getpid()}-{case}.jsonl")
        path.write_bytes(data[:cut])
        try:
            session = open_session(path, writable=False)
            session.tree.build_context()
            for record in session.tree.records:
                session.tree.details(record)
        except PiworkError:
            pass  # a clear, user-facing refusal (e.g. no header left) is fine
        finally:
            path.unlink()
    assert time.monotonic() - started < 60


# -- configuration files ---------------------------------------------------------------------

DEEP_OBJECT = '{"a":' * 100_000 + "1" + "}" * 100_000
READABLY_DEEP = '{"a":' * 900 + "1" + "}" * 900
CONFIGS: dict[str, tuple[str, str]] = {
    "settings nested too deeply": ("agent/settings.json", DEEP_OBJECT),
    "settings nested deep but readable": ("agent/settings.json", READABLY_DEEP),
    "settings of the wrong types": (
        "agent/settings.json",
        '{"retry": {"enabled": "no", "maxRetries": "x", "provider": 5}, "compaction": [], '
        '"httpIdleTimeoutMs": "x", "logs": 5, "skills": 5, "packages": "x"}',
    ),
    "project settings nested too deeply": ("project/.pi/settings.json", DEEP_OBJECT),
    "models nested too deeply": ("agent/models.json", DEEP_OBJECT),
    "models nested deep but readable": ("agent/models.json", '{"providers": {"x": ' + READABLY_DEEP + "}}"),
    "models with lone surrogates": (
        "agent/models.json",
        '{"providers": {"\\ud800": {"baseUrl": "http://x\\udc00", "api": "openai-completions", '
        '"models": [{"id": "\\ud800"}]}}}',
    ),
    "trust nested too deeply": ("agent/trust.json", DEEP_OBJECT),
    "skill with a recursive alias": (
        "project/.pi/skills/s/SKILL.md",
        "---\na: &a [*a]\ndescription: x\n---\nbody",
    ),
    "skill with a recursive mapping alias": (
        "project/.agents/skills/s/SKILL.md",
        "---\na: &a\n  b: *a\ndescription: x\n---\nbody",
    ),
    "skill with a recursive alias as key": (
        "project/.pi/skills/s/SKILL.md",
        "---\n? &a [*a]\n: 1\ndescription: x\n---\n",
    ),
    "skill nested too deeply": (
        "project/.pi/skills/s/SKILL.md",
        "---\na: " + "[" * 50_000 + "]" * 50_000 + "\n---\n",
    ),
    "skill with deep block nesting": (
        "project/.pi/skills/s/SKILL.md",
        "---\n" + "".join(" " * i + f"k{i}:\n" for i in range(3000)) + "---\n",
    ),
    "prompt with alias bombs": (
        "agent/prompts/p.md",
        "---\na: &a [x,x,x,x,x,x,x,x,x]\n"
        + "".join(
            f"{chr(98 + i)}: &{chr(98 + i)} [" + ",".join([f"*{chr(97 + i)}"] * 9) + "]\n" for i in range(9)
        )
        + "description: x\n---\nbody",
    ),
}


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_hostile_configuration_files_are_named_not_fatal(
    name: str, workspace: Workspace, server: LoopbackServer
) -> None:
    relative, content = CONFIGS[name]
    path = workspace.agent.parent / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    data = content.encode("utf-8", "surrogatepass")
    path.write_bytes(data)
    started = time.monotonic()
    code, out, err = workspace.prompt(server, "--approve")
    assert (code, out) == (0, "ok\n"), err
    assert "Traceback" not in err
    assert time.monotonic() - started < 20
    assert path.read_bytes() == data  # never rewritten or reset


def test_frontmatter_refuses_cycles_and_depth_with_its_own_error() -> None:
    for source in ("a: &a [*a]", "a: &a\n  b: *a", "? &a [*a]\n: 1", "a: " + "[" * 5000 + "]" * 5000):
        with pytest.raises(FrontmatterError):
            parse_frontmatter(f"---\n{source}\n---\nbody")


@pytest.mark.parametrize(
    "make",
    [
        lambda n: "".join(f"k{i}: v\n" for i in range(n)),
        lambda n: "".join(f"'k{i}': [v]\n" for i in range(n)),
        lambda n: "a: &a x\nb:\n" + "".join("  - *a\n" for _ in range(n)),
    ],
    ids=["plain keys", "quoted keys", "aliases"],
)
def test_large_frontmatter_is_read_whole(make: Callable[[int], str]) -> None:
    """Thousands of keys or aliases parse to the right value (how the time grows with size is measured
    by tests/benchmarks/bench_frontmatter.py, not here)."""
    data = parse_frontmatter("---\n" + make(4000) + "---\nbody").data
    assert len(data) == 4000 or len(data["b"]) == 4000


# -- files the tools meet --------------------------------------------------------------------


def test_random_special_files_never_hang_a_tool(tmp_path: Path) -> None:
    rng = random.Random(SEED)
    os.mkfifo(tmp_path / "pipe")
    (tmp_path / "dir").mkdir()
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    with open(tmp_path / "sparse", "wb") as handle:
        handle.truncate(8 * 1024**3)
    names = ["pipe", "dir", "dangling", "sparse"]
    started = time.monotonic()
    for _ in range(30):
        name = rng.choice(names)
        tool = rng.choice(["read", "edit"])
        args: dict[str, Any] = {"path": name}
        if tool == "edit":
            args["edits"] = [{"oldText": "a", "newText": "b"}]
        else:
            args["offset"] = rng.choice([None, 1, 5, 10**9])
        outcome = call(tool, {k: v for k, v in args.items() if v is not None}, tmp_path)
        assert outcome.is_error, text(outcome)
    assert time.monotonic() - started < 60
    assert (tmp_path / "pipe").exists() and not (tmp_path / "nowhere").exists()


def test_random_write_targets_keep_their_inode(tmp_path: Path) -> None:
    rng = random.Random(SEED)
    real = tmp_path / "real.txt"
    real.write_text("original")
    (tmp_path / "link.txt").symlink_to(real)
    (tmp_path / "chain.txt").symlink_to(tmp_path / "link.txt")
    os.mkfifo(tmp_path / "pipe")
    inodes = {
        name: os.lstat(tmp_path / name).st_ino for name in ("real.txt", "link.txt", "chain.txt", "pipe")
    }
    for _ in range(40):
        name = rng.choice([*inodes, "new.txt", "sub/new.txt"])
        content = "".join(rng.choice("ab\n\u00e9\U0001f600") for _ in range(rng.randint(0, 200)))
        outcome = call("write", {"path": name, "content": content}, tmp_path)
        if name == "pipe":
            assert outcome.is_error and "no process reads" in text(outcome)
        else:
            assert not outcome.is_error, text(outcome)
            assert (tmp_path / name).read_text() == content
    assert {name: os.lstat(tmp_path / name).st_ino for name in inodes} == inodes
    assert (tmp_path / "link.txt").is_symlink() and (tmp_path / "chain.txt").is_symlink()


# -- trust and symlinked folders -------------------------------------------------------------


def test_random_symlinked_cwds_never_load_from_the_links_parents(tmp_path: Path) -> None:
    from piwork.core.resources.loader import LoaderOptions, load_project
    from piwork.core.resources.trust import TrustResolver
    from piwork.core.resources.trust_store import TrustStore

    rng = random.Random(SEED)
    root = tmp_path.resolve()
    agent = root / "home" / ".pi" / "agent"
    agent.mkdir(parents=True)
    real = root / "real" / "project"
    real.mkdir(parents=True)
    for case in range(12):
        depth = rng.randint(1, 4)
        parents = [root / f"case{case}"]
        for level in range(depth):
            parents.append(parents[-1] / f"d{level}")
        parents[-1].mkdir(parents=True)
        planted = rng.choice(parents)
        skill = planted / ".agents" / "skills" / f"evil-{case}" / "SKILL.md"
        skill.parent.mkdir(parents=True)
        skill.write_text(f"---\nname: evil-{case}\ndescription: planted\n---\nbody")
        link = parents[-1] / "link"
        link.symlink_to(real)
        spelled = rng.choice([str(link), f"{link}/.", f"{link}/../link", f"{parents[-1]}/./link"])
        resolver = TrustResolver(TrustStore(agent))
        loaded = asyncio.run(
            load_project(spelled, str(agent), resolver, LoaderOptions(), home=str(root / "home"))
        )
        assert not [s.name for s in loaded.skills if s.name.startswith("evil")], spelled
        assert all(str(real) in f.path or f.path.startswith(str(agent)) for f in loaded.context_files)


# -- output logs without space ---------------------------------------------------------------


class _FullAt:
    """A log handle whose write fails with ENOSPC, as the OS reports it, once ``room`` bytes are used."""

    def __init__(self, path: Path, room: int) -> None:
        self.handle = open(path, "wb")  # noqa: SIM115 (closed by close())
        self.left = room

    def write(self, data: bytes) -> int:
        if len(data) > self.left:
            raise OSError(errno.ENOSPC, "No space left on device")
        self.left -= len(data)
        return self.handle.write(data)

    def flush(self) -> None:
        self.handle.flush()

    def close(self) -> None:
        self.handle.close()


def _full_at(path: Path, room: int) -> tuple[str, BinaryIO]:
    return str(path), cast(BinaryIO, _FullAt(path, room))


def test_random_disk_full_points_never_break_the_output(tmp_path: Path) -> None:
    from piwork.core.output import OutputAccumulator

    rng = random.Random(SEED)
    for case in range(25):
        room = rng.randint(0, 400_000)
        path = tmp_path / f"log-{case}"

        output = OutputAccumulator(partial(_full_at, path, room))
        lines = rng.randint(1, 30_000)
        blob = b"".join(b"row %d\n" % i for i in range(lines))
        at = 0
        while at < len(blob):
            step = rng.randint(1, 70_000)
            output.append(blob[at : at + step])
            at += step
        output.finish()
        snap = output.snapshot(persist_if_truncated=True)
        output.close()
        assert snap.content.rstrip("\n").endswith(f"row {lines - 1}")
        if snap.full_output_path is not None:
            assert path.read_bytes() == blob
        else:
            assert not snap.truncation.truncated or snap.log_problem is not None
            assert not path.exists()


# -- keys in output --------------------------------------------------------------------------


def test_keys_split_at_random_points_never_reach_a_log() -> None:
    from piwork.core.redaction import StreamRedactor

    rng = random.Random(SEED)
    keys = ["sk-ant-" + "".join(rng.choice("abcdef0123456789") for _ in range(40)), "sk-short1"]
    for _ in range(200):
        pieces = [
            rng.choice([*keys, "text ", "\n", "sk-", "sk-ant-", "é"]) for _ in range(rng.randint(1, 30))
        ]
        stream = "".join(pieces).encode()
        redactor = StreamRedactor(keys)
        written = b""
        at = 0
        while at < len(stream):
            step = rng.randint(1, 20)
            written += redactor.feed(stream[at : at + step])
            at += step
        written += redactor.finish()
        expected = "".join(pieces).replace(keys[0], "***")  # "sk-short1" is too short to be a secret
        assert written == expected.encode()
        assert keys[0].encode() not in written


# -- network deadlines -----------------------------------------------------------------------


def test_a_dripping_server_ends_at_a_seeded_deadline(workspace: Workspace, server: LoopbackServer) -> None:
    rng = random.Random(SEED)
    deadline_ms = rng.choice([600, 900, 1200])
    (workspace.agent / "settings.json").write_text(
        json.dumps({"retry": {"enabled": False, "provider": {"timeoutMs": deadline_ms}}})
    )
    server.script(Turn([Text(" ".join(f"w{i}" for i in range(5000)))], drip=rng.choice([0.05, 0.1])))
    started = time.monotonic()
    out, err = io.StringIO(), io.StringIO()
    code = headless.main(
        ["-p", "drip", "--model", f"anthropic/{server.model}", "--base-url", server.url],
        io.StringIO(""),
        out,
        err,
    )
    assert (
        code == 1
        and f"The reply took longer than {deadline_ms / 1000:g} s in all (reply time limit" in err.getvalue()
    )
    assert time.monotonic() - started < 20
