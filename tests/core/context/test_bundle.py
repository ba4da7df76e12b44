from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from piwork.core.context.bundle import (
    BUNDLE_CUSTOM_TYPE,
    BundleRequest,
    assemble_bundle,
    build_manifest,
    context_file_entries,
    start_task,
)
from piwork.core.context.caps import cap_context_files
from piwork.core.context.contract import (
    CONTRACT_CUSTOM_TYPE,
    ContractError,
    TaskContract,
    allowed_tools,
    blocked_tool_reason,
    latest_contract,
    verify_commands,
)
from piwork.core.context.manifest import latest_manifest
from piwork.core.resources.context_files import ContextFile
from piwork.core.resources.loader import LoaderOptions, load_resources
from piwork.core.session.context import build_session_context
from piwork.core.session.store import in_memory_session
from piwork.core.settings import Settings

ALL = ["read", "bash", "edit", "write", "grep", "find", "ls"]


def _contract(**kw: object) -> TaskContract:
    data = {
        "title": "Fix login",
        "goal": "Users can log in again",
        "acceptance": ["login test passes"],
        "verify": "pytest -q",
        "mode": "source-write",
        "phase": "implement",
        "startedAt": "2026-12-01T10:00:00.000Z",
    }
    data.update(kw)
    return TaskContract.from_json(data)


def _project(root: Path, big_snapshot: bool = False) -> None:
    pi = root / ".pi"
    (pi / "memory").mkdir(parents=True)
    (root / "docs").mkdir()
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text("print('hi')\n")
    (root / "docs" / "architecture.md").write_text("# Architecture\nlayers\n")
    (pi / "piwork-profile.json").write_text(
        json.dumps(
            {
                "version": 1,
                "verify": ["pytest -q", "ruff check ."],
                "required": ["docs/architecture.md", "docs/gone.md", "../outside.md"],
                "memory": {"enabled": True},
            }
        )
    )
    snapshot = "".join(f"line {i}\n" for i in range(2500)) if big_snapshot else "# Snapshot\nsmall\n"
    (pi / "project-context.md").write_text(snapshot)
    (pi / "memory" / "memory_summary.md").write_text("remember: tests are slow\n")
    body = "def login(): pass\n"
    (root / "src" / "login.py").write_text(body)
    (pi / "context-index.json").write_text(
        json.dumps(
            {
                "version": 1,
                "builtAt": "2026-12-01T09:00:00Z",
                "entries": [
                    {
                        "id": "auth",
                        "title": "Login and sessions",
                        "summary": "login flow",
                        "files": [
                            {"path": "src/login.py", "sha256": hashlib.sha256(body.encode()).hexdigest()}
                        ],
                    }
                ],
            }
        )
    )
    (root.parent / "outside.md").write_text("secret\n")


def test_contract_tool_rules() -> None:
    assert allowed_tools(_contract(mode="read-only"), ALL) == ["read", "grep", "find", "ls"]
    assert allowed_tools(_contract(verify=None), ALL) == ["read", "bash", "grep", "find", "ls"]
    assert allowed_tools(_contract(verify="  "), ALL) == ["read", "bash", "grep", "find", "ls"]
    assert allowed_tools(_contract(), ALL) == ALL
    assert allowed_tools(None, ALL) == ALL
    assert "read-only" in (blocked_tool_reason(_contract(mode="read-only"), "bash") or "")
    assert "verify" in (blocked_tool_reason(_contract(verify=None), "edit") or "")
    assert blocked_tool_reason(_contract(), "edit") is None
    with pytest.raises(ContractError):
        _contract(mode="write-everything")
    with pytest.raises(ContractError):
        _contract(phase="ship")


def test_contract_round_trip_keeps_unknown_keys() -> None:
    contract = _contract(forceVerify=True, origin="gui")
    data = contract.to_json()
    assert data["forceVerify"] is True and data["origin"] == "gui"
    assert TaskContract.from_json(data) == contract
    assert contract.with_phase("verify").phase == "verify"


def test_trusted_bundle_layers_in_order_with_statuses(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    _project(root)
    contract = _contract()
    bundle = assemble_bundle(
        BundleRequest(
            str(root), True, contract, "fix the login flow", unfamiliar=True, planned_files=["src/app.py"]
        )
    )
    assert bundle.text is not None
    kinds = [p.kind for p in bundle.parts]
    assert kinds == ["profile", "pack", "index", "snapshot", "memory", "required"]
    text = bundle.text
    assert text.index("<task_contract>") < text.index('kind="profile"') < text.index('kind="pack"')
    assert '<context_layer kind="required" path="docs/architecture.md">\n# Architecture' in text
    assert "secret" not in text
    statuses = {(e.kind, Path(e.path).name): (e.status, e.reason) for e in bundle.entries}
    assert statuses[("required", "gone.md")] == ("missing", "not found")
    assert statuses[("required", "outside.md")] == ("omitted", "outside the project folder")
    assert statuses[("taskFile", "app.py")][0] == "planned"
    assert all(e.tokens > 0 for e in bundle.entries if e.status == "included")
    assert verify_commands(contract, bundle.profile) == ["pytest -q", "ruff check ."]


def test_untrusted_project_loads_nothing_of_layers_2_to_7(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    _project(root)
    bundle = assemble_bundle(BundleRequest(str(root), False, _contract(), "login", unfamiliar=True))
    assert bundle.parts == [] and bundle.profile is None and bundle.index is None
    assert bundle.text is not None and "<context_layer" not in bundle.text  # the contract alone
    assert {e.kind: e.status for e in bundle.entries} == {
        "profile": "blocked-untrusted",
        "pack": "blocked-untrusted",
        "index": "blocked-untrusted",
        "snapshot": "blocked-untrusted",
        "memory": "blocked-untrusted",
    }
    (root / ".pi" / "project-context.md").unlink()
    bundle = assemble_bundle(BundleRequest(str(root), False))
    assert {e.kind: e.status for e in bundle.entries}["snapshot"] == "missing"
    assert bundle.text is None


def test_over_cap_file_is_cut_with_a_marker(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    _project(root, big_snapshot=True)
    bundle = assemble_bundle(BundleRequest(str(root), True))
    snap = next(e for e in bundle.entries if e.kind == "snapshot")
    assert snap.status == "over-cap" and "2500 lines" in (snap.reason or "")
    part = next(p for p in bundle.parts if p.kind == "snapshot")
    assert "line 1999\n" in part.text and "line 2000\n" not in part.text
    assert "[piwork: .pi/project-context.md has 2500 lines" in part.text and "offset 2001" in part.text


def test_stale_index_gives_no_pack_and_no_index_part(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    _project(root)
    (root / "src" / "login.py").write_text("changed\n")
    bundle = assemble_bundle(BundleRequest(str(root), True, None, "login", unfamiliar=True))
    statuses = {e.kind: e.status for e in bundle.entries}
    assert statuses["index"] == "stale" and statuses["pack"] == "stale"
    assert not any(p.kind in ("index", "pack") for p in bundle.parts)


def test_memory_off_and_pack_not_wanted(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    _project(root)
    profile = root / ".pi" / "piwork-profile.json"
    profile.write_text(json.dumps({"version": 1, "memory": {"enabled": False}}))
    bundle = assemble_bundle(BundleRequest(str(root), True))
    statuses = {e.kind: (e.status, e.reason) for e in bundle.entries}
    assert statuses["memory"] == ("omitted", "memory is off in the profile")
    assert "pack" not in statuses


def test_broken_profile_is_a_diagnostic_not_a_crash(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    (root / ".pi").mkdir(parents=True)
    (root / ".pi" / "piwork-profile.json").write_text("{nope")
    bundle = assemble_bundle(BundleRequest(str(root), True))
    assert bundle.text is None
    row = next(e for e in bundle.entries if e.kind == "profile")
    assert row.status == "omitted" and "not valid JSON" in (row.reason or "")
    assert bundle.diagnostics and bundle.diagnostics[0].type == "error"


def test_layer_one_is_whole_but_flagged_and_cap_can_be_enforced(tmp_path: Path) -> None:
    big = "x\n" * 3000
    files = [ContextFile("/r/AGENTS.md", big), ContextFile("/r/sub/AGENTS.md", "short\n")]
    rows = context_file_entries(files, len)
    assert [r.status for r in rows] == ["over-cap", "included"]
    assert rows[0].tokens == len(big) and "injected whole" in (rows[0].reason or "")
    capped = cap_context_files(files)
    assert capped[0].content.count("x\n") == 2000 and "[piwork:" in capped[0].content
    assert capped[1].content == "short\n"

    home, agent, root = tmp_path / "home", tmp_path / "agent", tmp_path / "proj"
    for folder in (home, agent, root):
        folder.mkdir()
    (root / "AGENTS.md").write_text(big)
    settings = Settings.for_project(str(root), str(agent), False)
    loaded = load_resources(str(root), str(agent), settings, home=str(home))
    assert loaded.context_files[-1].content == big
    (agent / "settings.json").write_text(json.dumps({"piwork": {"contextFiles": {"enforceHardCap": True}}}))
    settings = Settings.for_project(str(root), str(agent), False)
    loaded = load_resources(str(root), str(agent), settings, home=str(home))
    assert loaded.context_files[-1].content == big  # the resources alone know no cap
    capped_options = LoaderOptions(context_file_cap=cap_context_files)
    loaded = load_resources(str(root), str(agent), settings, capped_options, home=str(home))
    assert loaded.context_files[-1].content.count("x\n") == 2000


def test_start_task_appends_contract_manifest_and_one_bundle_before_the_prompt(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    _project(root)
    session = in_memory_session(str(root))
    tree = session.tree
    contract = _contract()
    bundle = assemble_bundle(BundleRequest(str(root), True, contract, "login", unfamiliar=True))
    manifest = build_manifest("t1", "2026-12-01T10:00:00.000Z", "≈ chars/4", [], bundle, contract, 100, 50)
    start_task(tree, contract, bundle, manifest)
    tree.append_message({"role": "user", "content": "go", "timestamp": 1})
    entries = tree.entries()
    types = [(e["type"], e.get("customType")) for e in entries]
    assert types == [
        ("custom", CONTRACT_CUSTOM_TYPE),
        ("custom", "piwork.manifest"),
        ("custom_message", BUNDLE_CUSTOM_TYPE),
        ("message", None),
    ]
    bundle_entry = entries[2]
    assert bundle_entry["display"] is True and bundle_entry["content"][0]["text"] == bundle.text
    assert [row["kind"] for row in bundle_entry["details"]["layers"]][:2] == ["profile", "pack"]
    messages = build_session_context(entries)["messages"]
    assert [m["role"] for m in messages] == ["custom", "user"]
    assert latest_contract(tree) == contract
    stored = latest_manifest(tree)
    assert stored is not None and stored.totals.bundle == bundle.tokens and stored.verify == "pytest -q"
    dumped = json.dumps(entries[1])
    assert "Architecture" not in dumped and "remember" not in dumped  # metadata only


def test_contract_from_task_text() -> None:
    from piwork.core.workflows.tasks import contract_from_text

    c = contract_from_text("fix the parser", ["pytest -q", "ruff check ."])
    assert (c.mode, c.phase, c.verify, c.goal, c.title) == (
        "source-write",
        "implement",
        "pytest -q",
        "fix the parser",
        "fix the parser",
    )
    c = contract_from_text("read-only map the modules", ["pytest -q"])
    assert (c.mode, c.phase, c.verify, c.goal) == ("read-only", "scout", None, "map the modules")
    assert contract_from_text("x", (), "read-only").mode == "read-only"
    assert contract_from_text("y" * 80).title.endswith("…")
    with pytest.raises(ContractError):
        contract_from_text("source-write   ")
