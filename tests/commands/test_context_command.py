"""`piwork context`: manifest, marks, next request by source and the governor's call, as text and JSON."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from piwork.core.context.bundle import (
    BundleRequest,
    assemble_bundle,
    build_manifest,
    context_file_entries,
    start_task,
)
from piwork.core.context.contract import TaskContract
from piwork.core.resources.context_files import ContextFile
from piwork.core.session.store import create_session

MODEL = "anthropic/claude-sonnet-4-5"


def _project(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    root = tmp_path.resolve()
    home = root / "home"
    (home / ".pi/agent").mkdir(parents=True)
    project = root / "p"
    (project / ".pi").mkdir(parents=True)
    (project / "AGENTS.md").write_text("# Rules\n")
    (project / ".pi/piwork-profile.json").write_text(json.dumps({"version": 1, "verify": ["pytest -q"]}))
    (project / ".pi/project-context.md").write_text("# Snapshot\nsmall\n")
    env = {**os.environ, "HOME": str(home)}
    env.pop("PI_CODING_AGENT_DIR", None)
    return project, env


def _run(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "piwork", "context", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _session(project: Path) -> tuple[Path, str]:
    session = create_session(str(project), project.parent / "sessions")
    tree = session.tree
    contract = TaskContract.from_json(
        {
            "title": "Fix",
            "goal": "fix it",
            "verify": "pytest -q",
            "mode": "source-write",
            "phase": "implement",
        }
    )
    bundle = assemble_bundle(BundleRequest(str(project), True, contract))
    rows = context_file_entries([ContextFile(str(project / "AGENTS.md"), "# Rules\n")], len)
    start_task(
        tree,
        contract,
        bundle,
        build_manifest("task-1", "2026-12-01T10:00:00.000Z", "≈ chars/4", rows, bundle, contract),
    )
    first = tree.append_message({"role": "user", "content": "fix it", "timestamp": 1})
    tree.append_message(
        {
            "role": "assistant",
            "content": [{"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "a.py"}}],
            "api": "anthropic-messages",
            "provider": "anthropic",
            "model": "claude-sonnet-4-5",
            "usage": {"input": 1200, "output": 30, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 1230},
            "stopReason": "toolUse",
            "timestamp": 2,
        }
    )
    tree.append_message(
        {
            "role": "toolResult",
            "toolCallId": "c1",
            "toolName": "read",
            "content": [{"type": "text", "text": "x = 1\n" * 50}],
            "isError": False,
            "timestamp": 3,
        }
    )
    session.close()
    assert session.path is not None
    return session.path, first


def test_untrusted_overview_blocks_layers_2_to_7(tmp_path: Path) -> None:
    project, env = _project(tmp_path)
    done = _run(["--cwd", str(project), "--model", MODEL], env)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "Project trust: untrusted" in out
    assert "- profile: .pi/piwork-profile.json (blocked-untrusted: the project is not trusted)" in out
    assert "- snapshot: .pi/project-context.md (blocked-untrusted" in out
    assert "Marks: pressure 128,531 · ceiling 165,254" in out  # a 200K window since Pi 1.6
    assert "Next request by source" in out and "tool_schema" in out
    assert "Governor, next call: unchanged" in out
    assert "# Snapshot" not in out
    # the system prompt part by part: the context file on its own line, the parts adding up
    listed = out.split("System prompt by part:\n", 1)[1].split("\n\n", 1)[0].splitlines()
    rows = {line.split(None, 1)[1]: int(line.split(None, 1)[0].replace(",", "")) for line in listed}
    assert str(project / "AGENTS.md") in rows and rows[str(project / "AGENTS.md")] > 0
    assert "system prompt: role" in rows and "system prompt: cwd" in rows
    by_source = out.split("tokens:\n", 1)[1]
    system_rows = [
        line.split() for line in by_source.splitlines() if line.split()[:1] in (["system"], ["context_file"])
    ]
    assert sum(rows.values()) == sum(int(r[1].replace(",", "")) for r in system_rows)


def test_json_with_a_session_branch(tmp_path: Path) -> None:
    project, env = _project(tmp_path)
    path, first = _session(project)
    done = _run(["--cwd", str(project), "--session", str(path), "--json", "--approve"], env)
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["model"] == MODEL  # the model the session ran on
    assert doc["manifest"]["stored"] is True and doc["manifest"]["manifest"]["taskId"] == "task-1"
    assert doc["manifest"]["text"].startswith("Context manifest\n- context: AGENTS.md\n- profile:")
    request = doc["request"]
    assert sum(request["bySource"].values()) == request["total"]
    assert request["bySource"]["custom"] > 0 and request["bySource"]["tool_result"] > 0  # bundle, read
    assert (
        doc["marks"]["pressure"] == 128_531 and doc["marks"]["compaction"] == doc["marks"]["window"] - 16_384
    )
    assert doc["occupancy"]["source"] == "estimate"  # a tool result follows the last response
    assert request["governor"]["transcriptTokens"] == request["total"]

    at_first = _run(
        ["--cwd", str(project), "--session", str(path), "--leaf", first, "--json", "--approve"], env
    )
    doc = json.loads(at_first.stdout)
    assert "tool_result" not in doc["request"]["bySource"]


def test_subcommands(tmp_path: Path) -> None:
    project, env = _project(tmp_path)
    done = _run(
        ["--cwd", str(project), "--approve", "--model", MODEL, "--json", "preflight", "AGENTS.md"], env
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["verdict"] == "ok" and report["estimate"]["plannedFiles"] > 0
    done = _run(["--cwd", str(project), "--approve", "index-status"], env)
    assert done.returncode == 1 and "/onboard run" in done.stdout
    done = _run(["--cwd", str(project), "--approve", "manifest"], env)
    assert done.returncode == 0 and done.stdout.startswith("Context manifest\n")
    assert "- verify: pytest -q" in done.stdout


def test_bad_arguments_say_what_is_wrong(tmp_path: Path) -> None:
    project, env = _project(tmp_path)
    path, _first = _session(project)
    cases = [
        (["--cwd", str(project / "nope")], "is not a folder"),
        (["--cwd", str(project), "--session", str(project / "none.jsonl")], "not found"),
        (["--cwd", str(project), "--session", str(path), "--leaf", "zzz"], "no entry zzz"),
        (["--cwd", str(project), "--model", "nobody/nothing"], "unknown model"),
        (["--cwd", str(project), "pack"], "pack needs a task"),
    ]
    for args, message in cases:
        done = _run(args, env)
        assert done.returncode == 2, (args, done.stdout, done.stderr)
        assert message in done.stderr and "Traceback" not in done.stderr


def test_onboard_creates_the_layers_with_one_model_call(tmp_path: Path) -> None:
    from tests.core.context.test_onboard import SNAPSHOT, make_repo
    from tests.support.loopback_server import LoopbackServer, Text, Turn

    root = tmp_path.resolve()
    home = root / "home"
    agent = home / ".pi" / "agent"
    agent.mkdir(parents=True)
    project = make_repo(root / "shop-repo")
    env = {**os.environ, "HOME": str(home), "PYTHON_KEYRING_BACKEND": "keyring.backends.null.Keyring"}
    env.pop("PI_CODING_AGENT_DIR", None)
    with LoopbackServer() as server:
        model = {"id": "loopback-model", "name": "Loopback", "contextWindow": 64_000, "maxTokens": 4096}
        providers = {
            "loopback": {"baseUrl": server.url, "api": "anthropic-messages", "apiKey": "k", "models": [model]}
        }
        (agent / "models.json").write_text(json.dumps({"providers": providers}))
        server.script(Turn([Text(SNAPSHOT)]))
        untrusted = _run(
            ["--cwd", str(project), "--no-approve", "--model", "loopback/loopback-model", "onboard"], env
        )
        assert untrusted.returncode == 1 and "not trusted" in untrusted.stdout
        assert not (project / ".pi").exists() and not server.requests
        done = _run(
            ["--cwd", str(project), "--approve", "--model", "loopback/loopback-model", "onboard"], env
        )
        assert done.returncode == 0, done.stderr
        assert "- .pi/project-context.md: created (summarised by the model)" in done.stdout
        assert (
            "- .pi/context-index.json: created (4 modules" in done.stdout and "listed by git" in done.stdout
        )
        assert len(server.requests) == 1
        again = _run(["--cwd", str(project), "--approve", "--json", "onboard"], env)
        doc = json.loads(again.stdout)
        assert [f["status"] for f in doc["files"]] == ["kept", "kept", "kept"] and len(server.requests) == 1
    assert (project / ".pi" / "project-context.md").read_text() == SNAPSHOT
    status = _run(["--cwd", str(project), "--approve", "index-status"], env)
    assert status.returncode == 0 and "freshEntries 7" in status.stdout.replace(":", "")  # one per file


def test_overview_shows_what_is_excluded_for_the_task(tmp_path: Path) -> None:
    from piwork.core.context.exclusions import exclude_parts, exclusion_targets
    from piwork.core.context.manifest import latest_manifest
    from piwork.core.session.store import open_session

    project, env = _project(tmp_path)
    path, _first = _session(project)
    plain = json.loads(
        _run(["--cwd", str(project), "--session", str(path), "--json", "--approve"], env).stdout
    )
    with open_session(path) as session:
        manifest = latest_manifest(session.tree)
        assert manifest is not None
        targets = exclusion_targets(manifest, ["snapshot"], str(project))
        exclude_parts(session.tree, manifest, targets, str(project))
    done = _run(["--cwd", str(project), "--session", str(path), "--approve"], env)
    assert done.returncode == 0, done.stderr
    assert "- snapshot: .pi/project-context.md (omitted: excluded for this task)\n" in done.stdout
    assert "Excluded for this task: .pi/project-context.md (/context include brings them back" in done.stdout
    assert "  L5 snapshot: omitted, 0 tokens - excluded for this task\n" in done.stdout
    doc = json.loads(_run(["--cwd", str(project), "--session", str(path), "--json", "--approve"], env).stdout)
    assert [p["shown"] for p in doc["manifest"]["excluded"]] == [".pi/project-context.md"]
    snapshot = next(e for e in plain["manifest"]["manifest"]["entries"] if e["kind"] == "snapshot")
    totals, before = doc["manifest"]["manifest"]["totals"], plain["manifest"]["manifest"]["totals"]
    assert snapshot["tokens"] > 0 and totals["bundle"] == before["bundle"] - snapshot["tokens"]
    # the next request holds the marker instead of the snapshot (here a longer text than the tiny file)
    assert doc["request"]["bySource"]["custom"] != plain["request"]["bySource"]["custom"]
    assert doc["request"]["total"] == sum(doc["request"]["bySource"].values())


def test_edits_lists_what_the_model_no_longer_sees(tmp_path: Path) -> None:
    project, env = _project(tmp_path)
    session = create_session(str(project), project.parent / "sessions")
    tree = session.tree
    u1 = tree.append_message({"role": "user", "content": "read the log", "timestamp": 1})
    a1 = tree.append_message(
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "Here is the whole log"}],
            "api": "anthropic-messages",
            "provider": "anthropic",
            "model": "claude-sonnet-4-5",
            "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2},
            "stopReason": "stop",
            "timestamp": 2,
        }
    )
    tree.append_context_edit(a1, None)
    tree.append_context_edit(u1, "read the last lines of the log")
    session.close()
    assert session.path is not None
    done = _run(["--cwd", str(project), "--session", str(session.path), "edits"], env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == "Context edits on this branch (2):"
    assert f"  {u1} (user) by " in done.stdout
    assert "replaced - the model sees: read the last lines of the log" in done.stdout
    assert (
        f"{a1} (assistant)" in done.stdout
        and "left out of the model's context - Here is the whole log" in done.stdout
    )
    as_json = _run(["--cwd", str(project), "--session", str(session.path), "--json", "edits"], env)
    edits = json.loads(as_json.stdout)["contextEdits"]
    assert [(e["targetId"], e["action"]) for e in edits] == [(u1, "replace"), (a1, "leave-out")]
    assert edits[0]["replacement"] == {"content": "read the last lines of the log"}


def test_search_finds_files_and_symbols_in_the_index(tmp_path: Path) -> None:
    project, env = _project(tmp_path)
    done = _run(["--cwd", str(project), "--approve", "search", "login"], env)
    assert done.returncode == 1 and "/onboard run" in done.stdout  # no index yet
    (project / "auth.py").write_text("def login(user):\n    return user\n")
    onboarded = _run(["--cwd", str(project), "--approve", "onboard"], env)
    assert onboarded.returncode == 0, onboarded.stderr + onboarded.stdout
    done = _run(["--cwd", str(project), "--approve", "--json", "search", "login"], env)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert [r["path"] for r in report["results"]] == ["auth.py"]
    assert report["results"][0]["fresh"] is True
