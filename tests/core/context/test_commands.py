"""The /context and /fresh engine functions over real project folders and sessions."""

from __future__ import annotations

import hashlib
import json
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pytest

from piwork.core.context.bundle import BundleRequest, assemble_bundle, build_manifest, start_task
from piwork.core.context.contract import TaskContract
from piwork.core.llm.types import CostTier, Model, ModelCost
from piwork.core.resources.loader import load_resources
from piwork.core.session.store import in_memory_session
from piwork.core.settings import Settings
from piwork.core.workflows import commands
from piwork.core.workflows.intake import EXCLUDE_LINE, intake_tokens, may_need_intake, save_intake
from piwork.core.workflows.view import ContextView, view_from_parts

from .transcripts import assistant, call, lines, result, user


def model(window: int, tiers: tuple[int, ...] = ()) -> Model:
    """A priced model (3 USD per million input tokens), with its cost tiers."""
    cost = ModelCost(input=3, tiers=tuple(CostTier(above, 1, 1, 1, 1) for above in tiers))
    return Model("m", "m", "anthropic-messages", "p", "http://127.0.0.1:9", context_window=window, cost=cost)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    root = tmp_path / "repo"
    (root / ".pi").mkdir(parents=True)
    (root / "AGENTS.md").write_text("# Rules\nbe brief\n")
    body = "def login(): pass\n"
    (root / "src").mkdir()
    (root / "src" / "login.py").write_text(body)
    (root / ".pi" / "piwork-profile.json").write_text(json.dumps({"version": 1, "verify": ["pytest -q"]}))
    (root / ".pi" / "context-index.json").write_text(
        json.dumps(
            {
                "version": 1,
                "builtAt": "2026-12-01T09:00:00Z",
                "entries": [
                    {
                        "id": "auth",
                        "title": "Login",
                        "summary": "login flow",
                        "files": [
                            {"path": "src/login.py", "sha256": hashlib.sha256(body.encode()).hexdigest()}
                        ],
                    }
                ],
            }
        )
    )
    return root


def _view(root: Path, trusted: bool, the_model: Model | None = None, tree=None) -> ContextView:  # type: ignore[no-untyped-def]
    agent = root.parent / "agent"
    agent.mkdir(exist_ok=True)
    loaded = load_resources(str(root), str(agent), Settings.for_project(str(root), str(agent), trusted))
    return view_from_parts(loaded, tree, the_model)


def _filled(root: Path, tokens: int, reads: bool = False):  # type: ignore[no-untyped-def]
    """A session of about ``tokens`` tokens (chars/4): user messages the governor never elides, or
    tool reads it may."""
    session = in_memory_session(str(root))
    tree = session.tree
    tree.append_message(user("look"))
    per = 40_000
    for i in range(max(1, tokens // (per // 4))):
        if reads:
            tree.append_message(assistant(call(f"c{i}", "read", path="same.txt")))
            tree.append_message(result(f"c{i}", "read", lines(f"v{i}", per // 60)))
        else:
            tree.append_message(user("y" * per))
    tree.append_message(user("and now?"))
    return tree


@pytest.mark.parametrize(
    ("window", "tiers", "fill", "verdict"),
    [
        (1_000_000, (), 1_000, "ok"),
        (1_000_000, (), 170_000, "pressure"),
        (1_000_000, (400_000,), 250_000, "over-ceiling"),
        (1_000_000, (), 290_000, "pricing-zone"),
        (128_000, (), 130_000, "overflow"),
    ],
)
def test_preflight_verdicts(
    project: Path, window: int, tiers: tuple[int, ...], fill: int, verdict: str
) -> None:
    view = _view(project, True, model(window, tiers), _filled(project, fill))
    report = commands.preflight(view)
    assert report["verdict"] == verdict
    estimate = report["estimate"]
    assert set(estimate) == {"systemPrompt", "tools", "bundle", "messages", "projected", "plannedFiles"}
    assert set(report["marks"]) >= {"pressure", "ceiling", "pricing", "compaction"}
    assert (report["advice"] == []) == (verdict == "ok")


def test_preflight_counts_planned_files_and_a_long_prompt(project: Path) -> None:
    (project / "big.md").write_text("word " * 60_000)
    view = _view(project, True, model(200_000))
    report = commands.preflight(view, prompt="p " * 20_000, planned_files=["big.md", "nope.md"])
    assert report["estimate"]["plannedFiles"] > 60_000 // 4
    advice = " ".join(report["advice"])
    assert "intake file" in advice and "over the context cap" in advice
    assert report["files"][1]["error"]


def test_budget_keeps_occupancy_and_billing_apart(project: Path) -> None:
    session = in_memory_session(str(project))
    tree = session.tree
    tree.append_message(user("hi"))
    reply = assistant(text="hello")
    reply["usage"] = {
        "input": 900,
        "output": 100,
        "cacheRead": 5000,
        "cacheWrite": 0,
        "totalTokens": 6000,
        "cost": {"total": 0.25},
    }
    tree.append_message(reply)
    report = commands.budget(_view(project, True, model(200_000), tree))
    assert report["occupancy"] == {"tokens": 6000, "source": "provider", "tokenizer": "exact"}
    assert report["billed"] == {
        "input": 900,
        "output": 100,
        "cacheRead": 5000,
        "cacheWrite": 0,
        "cost": 0.25,
        "requests": 1,
    }
    tree.append_message(user("more"))
    report = commands.budget(_view(project, True, model(200_000), tree))
    assert report["occupancy"]["source"] == "estimate"


def test_billed_traffic_counts_the_branchs_usage_entries_and_never_the_context(project: Path) -> None:
    """A Pi 1.6 ``usage`` entry (a prompt-cache warming call) is billed on its branch, not counted as context."""
    session = in_memory_session(str(project))
    tree = session.tree
    tree.append_message(user("hi"))
    reply = assistant(text="hello")
    reply["usage"] = {"input": 900, "output": 100, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 1000,
                      "cost": {"total": 0.25}}  # fmt: skip
    reply_id = tree.append_message(reply)
    warm = {"input": 10, "output": 1, "cacheRead": 4000, "cacheWrite": 0, "totalTokens": 4011,
            "cost": {"total": 0.01}}  # fmt: skip
    tree.append_raw({"type": "usage", "id": "warm0001", "parentId": reply_id,
                     "timestamp": "2026-11-20T10:00:00.000Z", "kind": "cacheWarming", "provider": "anthropic",
                     "model": "claude-sonnet-4-5", "usage": warm})  # fmt: skip
    report = commands.budget(_view(project, True, model(200_000), tree))
    assert report["billed"] == {
        "input": 910,
        "output": 101,
        "cacheRead": 4000,
        "cacheWrite": 0,
        "cost": 0.26,
        "requests": 2,
    }
    assert report["occupancy"] == {"tokens": 1000, "source": "provider", "tokenizer": "exact"}
    tree.branch(reply_id)  # the warming call is on another branch now
    assert commands.budget(_view(project, True, model(200_000), tree))["billed"]["requests"] == 1


def test_index_commands_respect_trust(project: Path) -> None:
    untrusted = _view(project, False)
    for report in (
        commands.index_status_command(untrusted),
        commands.pack(untrusted, "login"),
        commands.rebuild(untrusted),
    ):
        assert report["ok"] is False and report["status"] == "blocked-untrusted"
    view = _view(project, True)
    status = commands.index_status_command(view)
    assert status["ok"] and status["freshEntries"] == 1 and status["fresh"]
    packed = commands.pack(view, "fix login")
    assert packed["ok"] and packed["entries"][0]["id"] == "auth" and "src/login.py" in packed["text"]
    (project / "src" / "login.py").write_text("changed\n")
    assert commands.index_status_command(view)["changedEntries"] == 1
    assert commands.pack(view, "fix login")["status"] == "stale"
    rebuilt = commands.rebuild(view)
    # the hand-written per-folder entry gives way to one entry per file of the tree
    assert rebuilt["ok"] and rebuilt["dropped"] == 1 and rebuilt["added"] == rebuilt["entries"] > 0
    assert commands.index_status_command(view)["fresh"]
    (project / ".pi" / "context-index.json").unlink()
    assert "/onboard run" in commands.index_status_command(view)["message"]


def test_manifest_command_stored_or_planned(project: Path) -> None:
    view = _view(project, False)
    report = commands.manifest_command(view)
    assert report["stored"] is False
    statuses = {e["kind"]: e["status"] for e in report["manifest"]["entries"]}
    assert statuses["contextFile"] == "included" and statuses["profile"] == "blocked-untrusted"
    session = in_memory_session(str(project))
    contract = TaskContract.from_json(
        {"title": "t", "goal": "g", "verify": "pytest -q", "mode": "source-write", "phase": "implement"}
    )
    bundle = assemble_bundle(BundleRequest(str(project), True, contract))
    start_task(session.tree, contract, bundle, build_manifest("t1", "now", "≈ chars/4", [], bundle, contract))
    report = commands.manifest_command(_view(project, True, None, session.tree))
    assert report["stored"] is True and report["manifest"]["taskId"] == "t1"
    assert report["text"].endswith("- verify: pytest -q\n")


def test_request_breakdown_adds_up_and_shows_the_governor(project: Path) -> None:
    tree = _filled(project, 20_000)
    view = _view(project, True, model(200_000), tree)
    report = commands.request_breakdown(view)
    assert sum(report["bySource"].values()) == report["total"]
    assert report["governor"]["transcriptTokens"] == report["total"]
    assert report["governor"]["decision"] == "unchanged" and report["governor"]["elidedTokens"] == 0
    # past the pressure mark, superseded re-reads of one file are elided for the next call
    tree = _filled(project, 180_000, reads=True)
    report = commands.request_breakdown(_view(project, True, model(1_000_000), tree))
    governor = report["governor"]
    assert governor["decision"] == "projected" and governor["elidedTokens"] > 100_000
    assert governor["sentTokens"] < governor["transcriptTokens"] == report["total"]
    assert "pressure" in governor["record"]["triggers"]
    assert commands.request_breakdown(_view(project, True, None, tree))["governor"] is None


def test_intake_file_is_written_and_excluded_from_git(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    text = "spec line\n" * 5000
    when = datetime(2026, 12, 1, 13, 5, 0, tzinfo=UTC)
    first = save_intake(str(tmp_path), text, lambda t: len(t) // 4, when)
    second = save_intake(str(tmp_path), "again", len, when)
    assert first.relative == ".pi/intake/20261201T130500Z.md" and second.relative.endswith("-2.md")
    assert Path(first.path).read_text() == text and first.excluded
    exclude = (tmp_path / ".git" / "info" / "exclude").read_text().splitlines()
    assert exclude.count(EXCLUDE_LINE) == 1
    status = subprocess.run(
        ["git", "status", "--porcelain"], cwd=tmp_path, capture_output=True, text=True
    ).stdout
    assert ".pi" not in status
    assert first.relative in first.reference
    plain = tmp_path.parent / "plain"
    plain.mkdir()
    assert save_intake(str(plain), "x", len).excluded is False


def test_the_intake_offer_counts_with_the_sessions_tokenizer(tmp_path: Path) -> None:
    from piwork.core.context.estimate import CHARS4
    from piwork.core.llm.tokens import Tokenizers

    tokenizers = Tokenizers(tmp_path / "agent", env={})
    tokenizers.load()
    o200k = tokenizers.counter_for("gpt-4o")
    assert o200k.info.encoding == "o200k_base"
    notes = "requirement: the parser keeps comments\n" * 1000  # 39,000 chars, exactly 8,000 o200k tokens
    assert intake_tokens(notes, CHARS4.count) == 9_750
    assert intake_tokens(notes, o200k.count) is None  # not over the limit by the model's tokenizer
    assert intake_tokens(notes * 2, o200k.count) == 16_000
    cjk = "".join(chr(0x4E00 + (i * 7919) % 20_000) for i in range(9_000))  # 27,000 bytes
    assert intake_tokens(cjk, CHARS4.count) is None
    tokens = intake_tokens(cjk, o200k.count)
    assert tokens is not None and tokens > 8_000  # short in characters, long in tokens
    # A text of at most 8,000 UTF-8 bytes can never be over the limit: it is not even counted.
    assert not may_need_intake("x" * 8_000) and not may_need_intake("é" * 4_000)
    assert may_need_intake("é" * 4_001) and may_need_intake("x" * 8_001)
    assert intake_tokens("é" * 4_000, lambda _text: 1_000_000) is None


def test_manifest_is_rechecked_against_the_current_files(project: Path) -> None:
    (project / ".pi" / "project-context.md").write_text("# Snapshot v1\n")
    session = in_memory_session(str(project))
    tree = session.tree
    contract = TaskContract.from_json(
        {"title": "t", "goal": "login", "verify": "pytest -q", "mode": "source-write", "phase": "implement"}
    )
    bundle = assemble_bundle(BundleRequest(str(project), True, contract, "login", unfamiliar=True))
    start_task(tree, contract, bundle, build_manifest("t1", "now", "≈ chars/4", [], bundle, contract))
    report = commands.manifest_command(_view(project, True, None, tree))
    assert report["stored"] and not report["changed"]

    (project / ".pi" / "project-context.md").write_text("# Snapshot v2\n")
    (project / "src" / "login.py").write_text("def login(): return 1\n")  # the index's only entry goes stale
    tree.append_message(
        assistant(call("r1", "read", path="src/app.py"), call("e1", "edit", path="src/login.py", edits=[]))
    )
    tree.append_message(result("r1", "read", "x"))
    tree.append_message(result("e1", "edit", "ok"))
    report = commands.manifest_command(_view(project, True, None, tree))
    assert report["changed"]
    rows = {
        (e["kind"], Path(e["path"]).name): (e["status"], e.get("reason", ""))
        for e in report["manifest"]["entries"]
    }
    assert rows[("snapshot", "project-context.md")][0] == "stale"
    assert rows[("index", "context-index.json")][0] == "stale"
    assert rows[("taskFile", "app.py")] == ("included", "read by the model")
    assert rows[("taskFile", "login.py")] == ("included", "changed by the model")
    assert "Snapshot v2" not in json.dumps(report["manifest"])
