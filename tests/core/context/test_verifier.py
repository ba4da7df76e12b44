"""The verifier gate on real git repositories, through the real bash tool."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import subprocess
from pathlib import Path

import pytest

from piwork.core.context.contract import TaskContract, append_contract
from piwork.core.context.verifier import (
    ReceiptStore,
    VerifierGate,
    gate_for_session,
    receipts_path,
    registered_verifiers,
    tree_digest,
)
from piwork.core.session.store import in_memory_session
from piwork.core.tools.base import ToolContext, ToolOutcome, ToolRegistry
from piwork.core.tools.bash import BashOptions, BashTool


def git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=repo,
        check=True,
        capture_output=True,
    )


class Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    (root / "app.py").write_text("print(1)\n")
    (root / ".gitignore").write_text("*.log\n")
    git(root, "add", ".")
    git(root, "commit", "-qm", "init")
    return root


class Rig:
    """A gate for ``VERIFY`` whose runs are counted outside the repo and whose exit code is set from outside."""

    def __init__(self, tmp_path: Path, repo: Path) -> None:
        self.repo = repo
        self.agent = tmp_path / "agent"
        self.outside = tmp_path / "outside"
        self.outside.mkdir()
        (self.outside / "code").write_text("0")
        self.command = f"echo ran >> {self.outside}/runs; exit $(cat {self.outside}/code)"
        self.clock = Clock()
        self.force = False
        self.gate = VerifierGate(self.agent, lambda: [self.command], lambda: self.force, self.clock)
        self.registry = ToolRegistry([BashTool(BashOptions(gate=self.gate))])

    def run(self, command: str | None = None) -> ToolOutcome:
        ctx = ToolContext(
            cwd=str(self.repo), log_dir=self.repo.parent / "logs", session_env={"PI_SESSION_ID": "s1"}
        )
        return asyncio.run(self.registry.run("c1", "bash", {"command": f"  {command or self.command} "}, ctx))

    @property
    def runs(self) -> int:
        path = self.outside / "runs"
        return len(path.read_text().splitlines()) if path.exists() else 0

    def receipts(self) -> list[dict[str, object]]:
        path = receipts_path(self.agent, str(self.repo))
        return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


@pytest.fixture
def rig(tmp_path: Path, repo: Path) -> Rig:
    return Rig(tmp_path, repo)


def test_digest_follows_tracked_untracked_and_ignored_files(repo: Path) -> None:
    first = tree_digest(str(repo))
    assert first == tree_digest(str(repo))
    (repo / "debug.log").write_text("ignored\n")
    assert tree_digest(str(repo)) == first
    (repo / "new.txt").write_text("a")
    with_new = tree_digest(str(repo))
    assert with_new != first
    (repo / "new.txt").write_text("b")
    assert tree_digest(str(repo)) not in (first, with_new)
    (repo / "new.txt").unlink()
    assert tree_digest(str(repo)) == first
    (repo / "app.py").write_text("print(2)\n")
    assert tree_digest(str(repo)) != first


def test_digest_is_exactly_the_specified_hash(repo: Path) -> None:
    (repo / "app.py").write_text("print(2)\n")
    (repo / "b.txt").write_text("bee")
    (repo / "a.txt").write_text("ay")
    head = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, check=True
    ).stdout.strip()
    diff = subprocess.run(
        ["git", "diff", "--binary", "HEAD"], cwd=repo, capture_output=True, check=True
    ).stdout
    expected = hashlib.sha256(b"piwork-tree-v1\n" + head + diff)
    for name, data in (("a.txt", b"ay"), ("b.txt", b"bee")):
        expected.update(name.encode() + b"\0" + hashlib.sha256(data).hexdigest().encode() + b"\n")
    assert tree_digest(str(repo)) == expected.hexdigest()


def test_repository_without_commits(tmp_path: Path) -> None:
    root = tmp_path / "fresh"
    root.mkdir()
    git(root, "init", "-q")
    (root / "x").write_text("1")
    digest = tree_digest(str(root))
    expected = hashlib.sha256(
        b"piwork-tree-v1\nnone" + b"x\0" + hashlib.sha256(b"1").hexdigest().encode() + b"\n"
    )
    assert digest == expected.hexdigest()


def test_pass_is_reused_on_the_same_tree(rig: Rig) -> None:
    first = rig.run()
    assert not first.is_error and rig.runs == 1
    receipts = rig.receipts()
    assert len(receipts) == 1 and receipts[0]["exitCode"] == 0 and receipts[0]["sessionId"] == "s1"
    assert receipts[0]["command"] == rig.command and receipts[0]["cwd"] == os.path.realpath(rig.repo)
    path = receipts_path(rig.agent, str(rig.repo))
    assert not str(path).startswith(str(rig.repo))
    assert path.name == hashlib.sha256(os.path.realpath(rig.repo).encode()).hexdigest()[:16] + ".jsonl"

    rig.clock.now += 3600
    second = rig.run()
    assert rig.runs == 1
    assert not second.is_error
    assert second.details == {
        "reusedReceipt": receipts[0]["id"],
        "treeDigest": receipts[0]["treeDigest"],
        "receipt": receipts[0],
    }
    text = second.content[0]["text"]
    assert "passed on this exact tree" in text and str(receipts[0]["id"]) in text
    assert str(receipts[0]["treeDigest"])[:12] in text
    assert len(rig.receipts()) == 1  # a reuse writes nothing


def test_changed_tree_runs_again(rig: Rig) -> None:
    rig.run()
    (rig.repo / "app.py").write_text("print(3)\n")
    rig.run()
    assert rig.runs == 2


def test_untracked_file_added_runs_again(rig: Rig) -> None:
    rig.run()
    (rig.repo / "notes.md").write_text("new\n")
    rig.run()
    assert rig.runs == 2
    rig.run()
    assert rig.runs == 2  # and that new tree's pass is reused


def test_failing_receipt_on_the_same_digest_blocks_reuse(rig: Rig) -> None:
    (rig.outside / "code").write_text("1")
    failed = rig.run()
    assert failed.is_error and rig.runs == 1
    assert rig.receipts()[-1]["exitCode"] == 1
    (rig.outside / "code").write_text("0")
    rig.run()  # the latest failed: real run
    assert rig.runs == 2 and rig.receipts()[-1]["exitCode"] == 0
    rig.run()  # latest passed, but this tree has a failure on record: real run
    assert rig.runs == 3


def test_old_pass_runs_again(rig: Rig) -> None:
    rig.run()
    rig.clock.now += 24 * 3600 + 1
    rig.run()
    assert rig.runs == 2


def test_force_runs_for_real(rig: Rig) -> None:
    rig.run()
    rig.gate.run_for_real_once()
    rig.run()
    assert rig.runs == 2
    rig.run()
    assert rig.runs == 2  # the per-call choice applied once
    rig.force = True  # the Task Contract's forceVerify
    rig.run()
    rig.run()
    assert rig.runs == 4


def test_run_that_changes_the_tree_vouches_for_nothing(rig: Rig) -> None:
    rig.command = f"echo ran >> {rig.outside}/runs; echo more >> app.py"
    rig.run()
    assert rig.receipts() == []
    rig.run()
    assert rig.runs == 2


def test_other_commands_and_non_git_folders_are_not_gated(rig: Rig, tmp_path: Path) -> None:
    rig.run(f"echo ran >> {rig.outside}/runs")
    rig.run(f"echo ran >> {rig.outside}/runs")
    assert rig.runs == 2 and rig.receipts() == []
    plain = tmp_path / "plain"
    plain.mkdir()
    rig.repo = plain
    rig.run()
    rig.run()
    assert rig.runs == 4


def test_damaged_receipt_lines_are_skipped(rig: Rig) -> None:
    rig.run()
    path = receipts_path(rig.agent, str(rig.repo))
    with open(path, "a") as fh:
        fh.write("{not json\n[1]\n")
    assert len(ReceiptStore(rig.agent, str(rig.repo)).all()) == 1
    rig.run()
    assert rig.runs == 1


def test_registered_verifiers_come_from_contract_and_trusted_profile(repo: Path, tmp_path: Path) -> None:
    (repo / ".pi").mkdir()
    (repo / ".pi" / "piwork-profile.json").write_text(
        json.dumps({"version": 1, "verify": ["pytest -q", "make lint"]})
    )
    session = in_memory_session(str(repo))
    assert registered_verifiers(session.tree, str(repo), trusted=False) == []
    assert registered_verifiers(session.tree, str(repo), trusted=True) == ["pytest -q", "make lint"]
    contract = TaskContract.from_json(
        {
            "title": "t",
            "goal": "g",
            "verify": "make check",
            "mode": "source-write",
            "phase": "verify",
            "forceVerify": True,
        }
    )
    append_contract(session.tree, contract)
    assert registered_verifiers(session.tree, str(repo), trusted=True) == [
        "make check",
        "pytest -q",
        "make lint",
    ]
    gate = gate_for_session(tmp_path / "agent", session.tree, str(repo), True)
    assert gate.matches(" make check ") and not gate.matches("make check --all") and gate.force()
