from __future__ import annotations

from pathlib import Path

import pytest

from piwork.core.context.bundle import (
    BUNDLE_CUSTOM_TYPE,
    BundleRequest,
    assemble_bundle,
    build_manifest,
    start_task,
)
from piwork.core.context.contract import TaskContract, latest_contract
from piwork.core.context.manifest import latest_manifest
from piwork.core.resources.loader import load_resources
from piwork.core.session.context import build_session_context
from piwork.core.session.listing import session_info as session_info_of
from piwork.core.session.store import create_session, open_session
from piwork.core.session.tree import SessionTree
from piwork.core.settings import Settings
from piwork.core.workflows.fresh import SUMMARY_CUSTOM_TYPE, FreshError, start_fresh


@pytest.fixture
def setup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    root = tmp_path / "repo"
    (root / ".pi").mkdir(parents=True)
    (root / ".pi" / "project-context.md").write_text("# Snapshot\n")
    agent = tmp_path / "agent"
    agent.mkdir()
    resources = load_resources(str(root), str(agent), Settings.for_project(str(root), str(agent), True))
    old = create_session(str(root), tmp_path / "sessions")
    return root, agent, resources, old


def _summary(tree: SessionTree, contract: TaskContract) -> str:
    users = [m for m in tree.build_context().messages if m.get("role") == "user"]
    return f"Goal: {contract.goal}\nUser requests: {len(users)}"


def _task(old, root: Path) -> TaskContract:  # type: ignore[no-untyped-def]
    contract = TaskContract.from_json(
        {
            "title": "API",
            "goal": "add the orders endpoint",
            "verify": "pytest -q",
            "mode": "source-write",
            "phase": "implement",
        }
    )
    bundle = assemble_bundle(BundleRequest(str(root), True, contract))
    start_task(old.tree, contract, bundle, build_manifest("t", "now", "x", [], bundle, contract))
    old.tree.append_message({"role": "user", "content": "go", "timestamp": 1})
    return contract


@pytest.mark.parametrize(
    ("kind", "mode", "phase", "title"),
    [
        ("task", "source-write", "implement", "API"),
        ("scout", "read-only", "scout", "API"),
        ("be-to-fe", "source-write", "plan", "Frontend: API"),
    ],
)
def test_fresh_session_is_seeded_and_written(
    setup, tmp_path: Path, kind: str, mode: str, phase: str, title: str
) -> None:  # type: ignore[no-untyped-def]
    root, agent, resources, old = setup
    _task(old, root)
    before = len(old.tree.entries())
    result = start_fresh(
        kind, old.tree, resources, _summary, tmp_path / "sessions", agent, "/old/session.jsonl"
    )
    assert result.path is not None and Path(result.path).exists()
    assert len(old.tree.entries()) == before  # the old session is not touched
    reopened = open_session(result.path)
    header = reopened.tree.header or {}
    assert header.get("parentSession") == "/old/session.jsonl"
    entries = reopened.tree.entries()
    kinds = [(e["type"], e.get("customType")) for e in entries]
    assert kinds == [
        ("custom_message", SUMMARY_CUSTOM_TYPE),
        ("session_info", None),
        ("custom", "piwork.taskContract"),
        ("custom", "piwork.manifest"),
        ("custom_message", BUNDLE_CUSTOM_TYPE),
    ]
    assert "add the orders endpoint" in entries[0]["content"][0]["text"]
    listed = session_info_of(Path(result.path))
    assert listed is not None and listed.name == f"/fresh {kind}: {title}"
    contract = latest_contract(reopened.tree)
    assert contract is not None and (contract.mode, contract.phase, contract.title) == (mode, phase, title)
    assert contract.extra["freshKind"] == kind
    assert latest_manifest(reopened.tree) is not None
    messages = build_session_context(entries)["messages"]
    assert [m["customType"] for m in messages] == [SUMMARY_CUSTOM_TYPE, BUNDLE_CUSTOM_TYPE]
    reopened.close()
    result.session.close()


def test_fresh_without_a_task_or_with_a_bad_kind(setup, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    _root, agent, resources, old = setup
    with pytest.raises(FreshError, match="no Task Contract"):
        start_fresh("task", old.tree, resources, _summary, tmp_path / "s", agent)
    with pytest.raises(FreshError, match="use one of"):
        start_fresh("later", old.tree, resources, _summary, tmp_path / "s", agent)
    assert not (tmp_path / "s").exists() or not list((tmp_path / "s").iterdir())


def test_handoff_summary_is_deterministic_and_complete(setup) -> None:  # type: ignore[no-untyped-def]
    from piwork.core.workflows.fresh import handoff_summary

    root, _agent, _resources, old = setup
    contract = _task(old, root)
    tree = old.tree

    def assistant(*blocks: dict[str, object], text: str = "") -> None:
        content = ([{"type": "text", "text": text}] if text else []) + list(blocks)
        tree.append_message(
            {
                "role": "assistant",
                "content": content,
                "api": "x",
                "provider": "x",
                "model": "x",
                "usage": {},
                "stopReason": "toolUse" if blocks else "stop",
                "timestamp": 2,
            }
        )

    def result(call_id: str, name: str, text: str, error: bool = False) -> None:
        tree.append_message(
            {
                "role": "toolResult",
                "toolCallId": call_id,
                "toolName": name,
                "content": [{"type": "text", "text": text}],
                "isError": error,
                "timestamp": 3,
            }
        )

    assistant({"type": "toolCall", "id": "r1", "name": "read", "arguments": {"path": "api.py"}})
    result("r1", "read", "code")
    assistant({"type": "toolCall", "id": "e1", "name": "edit", "arguments": {"path": "api.py", "edits": []}})
    result("e1", "edit", "ok")
    assistant({"type": "toolCall", "id": "b1", "name": "bash", "arguments": {"command": "pytest -q"}})
    result("b1", "bash", "\n".join(f"line {i}" for i in range(100)) + "\nFAILED test_orders", error=True)
    assistant({"type": "toolCall", "id": "b2", "name": "bash", "arguments": {"command": "make lint"}})
    result("b2", "bash", "lint broke", error=True)
    assistant({"type": "toolCall", "id": "b3", "name": "bash", "arguments": {"command": "make lint"}})
    result("b3", "bash", "clean")
    assistant(text="Next: fix the orders test fixture.")
    text = handoff_summary(tree, contract, verifiers=["pytest -q"])
    assert text == handoff_summary(tree, contract, verifiers=["pytest -q"])
    assert "Goal: add the orders endpoint" in text and "- go" in text
    assert "<modified-files>\napi.py" in text
    assert "- `pytest -q`: failed" in text
    assert "FAILED test_orders" in text and "line 59" not in text and "line 61" in text  # last 40 lines
    assert "lint broke" not in text  # fixed by a later successful run
    assert "Next: fix the orders test fixture." in text


def test_fresh_keeps_the_task_pack_of_an_unfamiliar_task(setup, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    import hashlib
    import json

    root, agent, _, old = setup
    body = "def orders(): pass\n"
    (root / "orders.py").write_text(body)
    digest = hashlib.sha256(body.encode()).hexdigest()
    index = {
        "version": 1,
        "builtAt": "2026-12-01T09:00:00Z",
        "entries": [
            {
                "id": "orders",
                "title": "Orders endpoint",
                "summary": "orders",
                "files": [{"path": "orders.py", "sha256": digest}],
            }
        ],
    }
    (root / ".pi" / "context-index.json").write_text(json.dumps(index))
    resources = load_resources(str(root), str(agent), Settings.for_project(str(root), str(agent), True))
    contract = TaskContract.from_json(
        {
            "title": "API",
            "goal": "add the orders endpoint",
            "verify": "pytest -q",
            "mode": "source-write",
            "phase": "implement",
            "unfamiliar": True,
        }
    )
    bundle = assemble_bundle(BundleRequest(str(root), True, contract, contract.goal, unfamiliar=True))
    assert 'kind="pack"' in (bundle.text or "")
    start_task(old.tree, contract, bundle, build_manifest("t", "now", "x", [], bundle, contract))
    old.tree.append_message({"role": "user", "content": "go", "timestamp": 1})
    result = start_fresh("task", old.tree, resources, _summary, tmp_path / "sessions", agent)
    entries = result.session.tree.entries()
    seeded = next(e for e in entries if e.get("customType") == BUNDLE_CUSTOM_TYPE)
    assert 'kind="pack"' in seeded["content"][0]["text"]
    result.session.close()
