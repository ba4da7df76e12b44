"""End to end over real HTTP: ``piwork -p --mode json`` with the context governor on and off."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest

from piwork.core.session.store import open_session
from tests.commands.test_headless import Env
from tests.core.compaction.pi_reference import reference_context
from tests.support.loopback_server import LoopbackServer, Text, ToolCall, Turn, counting

ROUNDS = 12


@pytest.fixture
def env(tmp_path: Path) -> Env:
    return Env(tmp_path)


def script(server: LoopbackServer) -> None:
    """Each reply counts the request it answers, as a real provider does."""
    turns = [Turn([ToolCall("read", {"path": f"f{i}.txt"}, id=f"toolu_{i:02d}")]) for i in range(ROUNDS)]
    server.script(*map(counting, turns), counting(Turn([Text("Read them all.")])))


def write_files(cwd: Path) -> None:
    for i in range(ROUNDS):
        line = f"file {i} " + "quartz zebra violin " * 4  # about chars/4 tokens with a real tokenizer too
        (cwd / f"f{i}.txt").write_text("\n".join(f"{n:04d} {line}" for n in range(200)) + "\n")


def normalised(path: Path) -> list[dict[str, Any]]:
    """Entries without their ids, links and clocks, the governor's own state entries left out, and
    replies without the provider's counts (each counts the request it answered, which the governor
    made smaller)."""
    out = []
    for line in path.read_text().splitlines()[1:]:
        entry = json.loads(line)
        if entry.get("type") == "custom" and entry.get("customType") == "piwork.governorState":
            continue
        for key in ("id", "parentId", "timestamp"):
            entry.pop(key, None)
        message = entry.get("message")
        if isinstance(message, dict):
            message.pop("timestamp", None)
            message.pop("responseId", None)
            message.pop("usage", None)
        out.append(entry)
    return out


def run(env: Env, server: LoopbackServer, session: Path, governor: dict[str, Any]) -> list[dict[str, Any]]:
    env.settings({"retry": {"baseDelayMs": 5}, "piwork": {"contextGovernor": governor}})
    script(server)
    first = len(server.requests)
    result = env.call(
        "-p",
        "read every file",
        "--mode",
        "json",
        "--session",
        str(session),
        "--model",
        f"anthropic/{server.model}",
        "--base-url",
        server.url,
    )
    assert result.returncode == 0, result.stderr
    assert server.pending == 0
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    bodies = [r.body for r in server.requests[first:]]
    return [{"sizes": [len(json.dumps(b)) for b in bodies], "bodies": bodies}, *lines]


def without_cache_marks(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: without_cache_marks(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [without_cache_marks(v) for v in value]
    return value


def test_requests_shrink_while_the_session_file_keeps_every_original(env: Env) -> None:
    write_files(env.cwd)
    with LoopbackServer() as server:
        on = run(env, server, env.agent / "on.jsonl", {"pressureMark": 40_000})
        off = run(env, server, env.agent / "off.jsonl", {"enabled": False})

    sizes_on, sizes_off = on[0]["sizes"], off[0]["sizes"]
    assert len(sizes_on) == len(sizes_off) == ROUNDS + 1
    assert all(b > a for a, b in itertools.pairwise(sizes_off))  # without: only grows
    shrinks = [i for i in range(1, len(sizes_on)) if sizes_on[i] < sizes_on[i - 1]]
    assert shrinks, sizes_on
    assert sizes_on[-1] < sizes_off[-1] * 0.75

    events_on = on[1:]
    governor = [e for e in events_on if e["type"] == "governor"]
    assert any(e["decision"] == "projected" for e in governor)
    projected = next(e for e in governor if e["decision"] == "projected")
    assert set(projected) >= {
        "timeMs",
        "turn",
        "triggers",
        "occupancyBefore",
        "occupancyAfter",
        "savings",
        "required",
        "elided",
    }
    assert projected["elided"][0]["toolCallId"].startswith("toolu_")
    occupancy = [e for e in events_on if e["type"] == "context_occupancy"]
    billed = [e for e in events_on if e["type"] == "billed_traffic"]
    assert {e["source"] for e in occupancy} == {"estimate", "provider"}
    assert all(e["series"] == "contextOccupancy" and "cost" not in e for e in occupancy)
    assert all(e["series"] == "billedTraffic" and "source" not in e for e in billed)
    assert len(billed) == ROUNDS + 1
    assert not [e for e in off[1:] if e["type"] == "governor"]

    # between projections each request only appends to the previous one (the provider's cache holds)
    projected_calls = {e["turn"] for e in governor if e["decision"] in ("projected", "forced")}
    requests = [without_cache_marks(b["messages"]) for b in on[0]["bodies"]]
    appended = 0
    for n in range(1, len(requests)):
        if n + 1 not in projected_calls:
            assert requests[n][: len(requests[n - 1])] == requests[n - 1], n
            appended += 1
    assert appended >= ROUNDS - len(projected_calls)

    # byte for byte the same conversation on disk, apart from ids, clocks and the governor's state entry
    assert normalised(env.agent / "on.jsonl") == normalised(env.agent / "off.jsonl")
    states = [
        json.loads(line)
        for line in (env.agent / "on.jsonl").read_text().splitlines()
        if '"piwork.governorState"' in line
    ]
    assert len(states) == 1 and states[0]["data"]["toolCallIds"]

    # telemetry: metadata only, each record in its own series
    session_id = json.loads((env.agent / "on.jsonl").read_text().splitlines()[0])["id"]
    (telemetry,) = (env.agent / "piwork" / "telemetry").glob(f"*/{session_id}.jsonl")
    records = [json.loads(line) for line in telemetry.read_text().splitlines()]
    assert {r["series"] for r in records} == {"contextOccupancy", "billedTraffic", "governor"}
    assert "quartz" not in telemetry.read_text()


def test_occupancy_names_the_models_offline_tokenizer(env: Env) -> None:
    with LoopbackServer() as server:
        server.script(Turn([ToolCall("read", {"path": "a.txt"}, id="toolu_a")]), Turn([Text("alpha.")]))
        result = env.call(
            "-p",
            "read a.txt",
            "--mode",
            "json",
            "--model",
            f"anthropic/{server.model}",
            "--base-url",
            server.url,
        )
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines()]
    estimates = [e for e in events if e["type"] == "context_occupancy" and e["source"] == "estimate"]
    assert len(estimates) == 2
    assert {e["tokenizer"] for e in estimates} == {"≈ cl100k_base"}  # not chars/4: the file ships offline


@pytest.mark.oracle
def test_the_reference_reads_a_governed_session_as_the_ungoverned_one(env: Env) -> None:
    """The governor's projections live only in requests: Pi opening the file builds the same context
    as piwork does, and the same conversation as the run without the governor."""
    write_files(env.cwd)
    with LoopbackServer() as server:
        run(env, server, env.agent / "on.jsonl", {"pressureMark": 40_000})
        run(env, server, env.agent / "off.jsonl", {"enabled": False})
    on = reference_context(env.agent / "on.jsonl")
    off = reference_context(env.agent / "off.jsonl")
    ours = open_session(env.agent / "on.jsonl", writable=False).tree.build_context().to_json()
    assert on["context"] == ours
    assert without_clocks(on["context"]["messages"]) == without_clocks(off["context"]["messages"])
    tool_texts = [m["content"][0]["text"] for m in on["context"]["messages"] if m["role"] == "toolResult"]
    assert len(tool_texts) == ROUNDS and all("quartz zebra violin" in t for t in tool_texts)  # originals


def without_clocks(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Without clocks and the provider's counts (each counts the request it answered)."""
    return [{k: v for k, v in m.items() if k not in ("timestamp", "responseId", "usage")} for m in messages]


def test_a_withheld_request_says_why_on_stderr_and_exits_non_zero(env: Env) -> None:
    """A priced model whose higher tier starts at 2,000 input tokens: the prompt alone reaches it, nothing
    can be elided or compacted, so the request is never sent."""
    with LoopbackServer() as server:
        model = {
            "id": "tiered",
            "name": "Tiered",
            "contextWindow": 400_000,
            "maxTokens": 4096,
            "cost": {
                "input": 3,
                "output": 15,
                "cacheRead": 0.3,
                "cacheWrite": 3.75,
                "tiers": [
                    {"inputTokensAbove": 2000, "input": 6, "output": 22, "cacheRead": 0.6, "cacheWrite": 7}
                ],
            },
        }
        providers = {
            "loopback": {"baseUrl": server.url, "api": "anthropic-messages", "apiKey": "k", "models": [model]}
        }
        (env.agent / "models.json").write_text(json.dumps({"providers": providers}))
        result = env.call("-p", "long words " * 1_000, "--model", "loopback/tiered")
        assert result.returncode == 1
        assert "piwork: the request was not sent: " in result.stderr
        assert "pricing mark" in result.stderr
        assert server.requests == []  # nothing reached the provider
