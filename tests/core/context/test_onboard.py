"""/onboard run on real repositories: a deterministic index from git or a .gitignore-aware walk, a snapshot
from one model call over the loopback server (or from the index), files written atomically and never
replaced unless asked."""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path

import pytest

from piwork.core.context.index import index_status, load_index
from piwork.core.context.index_builder import build_index, folder_summaries, project_files
from piwork.core.workflows.commands import onboard_command, parse_onboard
from piwork.core.workflows.onboard import onboard, write_new_file
from piwork.core.workflows.runtime import create_runtime
from piwork.core.workflows.view import view_from_session
from tests.support.loopback_server import Failure, LoopbackServer, Text, Turn
from tests.support.runtime_options import runtime_options

SNAPSHOT = "# Project snapshot\nA tiny shop: orders and payments.\n## Layout\n- shop/: the code\n"


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def make_repo(root: Path, git: bool = True) -> Path:
    (root / "shop" / "payments").mkdir(parents=True)
    (root / "docs").mkdir()
    (root / "build").mkdir()
    (root / "README.md").write_text(
        "# Shop\n\n[![ci](badge)](x)\n\nA tiny shop that takes orders.\nIt is small.\n\nMore.\n"
    )
    (root / ".gitignore").write_text("build/\n*.log\n")
    (root / "shop" / "__init__.py").write_text('"""Orders: taking and listing them.\n\nDetails."""\n')
    (root / "shop" / "orders.py").write_text("def take(order):\n    return order\n")
    (root / "shop" / "payments" / "card.py").write_text("# Card payments through the bank API\nPAY = 1\n")
    (root / "docs" / "guide.md").write_text("How to run the shop.\n")
    (root / "docs" / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0binary")
    (root / "build" / "out.txt").write_text("built\n")
    (root / "debug.log").write_text("noise\n")
    outside = root.parent / "outside.txt"
    outside.write_text("TOP SECRET outside the project\n")
    (root / "shop" / "link.txt").symlink_to(outside)  # a link out of the project is never read
    if git:
        subprocess.run(["git", "init", "-q"], cwd=root, check=True)
        subprocess.run(
            ["git", "add", "README.md", ".gitignore", "shop", "docs/guide.md"], cwd=root, check=True
        )
        (root / "docs" / "notes.md").write_text("Untracked but not ignored.\n")
    return root


@pytest.mark.parametrize("git", [True, False])
def test_index_is_built_deterministically_from_the_repository(tmp_path: Path, git: bool) -> None:
    root = make_repo(tmp_path / "repo", git)
    listed = project_files(str(root))
    assert listed.source == ("git" if git else "walk")
    assert "build/out.txt" not in listed.paths and "debug.log" not in listed.paths  # ignored
    first, second = build_index(str(root)), build_index(str(root))
    assert [e.to_json() for e in first.entries] == [e.to_json() for e in second.entries]
    entries = {e.id: e for e in first.entries}
    # one entry per text file, each citing itself, with its folder, language, summary and symbols
    expected = [
        ".gitignore",
        "README.md",
        "docs/guide.md",
        "shop/__init__.py",
        "shop/orders.py",
        "shop/payments/card.py",
    ]
    if git:
        expected.insert(3, "docs/notes.md")
    assert list(entries) == expected
    assert all(len(e.files) == 1 and e.files[0].path == e.id for e in entries.values())
    assert entries["README.md"].summary == "A tiny shop that takes orders. It is small."
    assert entries["shop/__init__.py"].summary == "Orders: taking and listing them."
    assert entries["shop/payments/card.py"].summary == "Card payments through the bank API"
    orders = entries["shop/orders.py"].files[0]
    assert (orders.language, orders.symbols, orders.size) == ("python", ("take",), 34)
    assert entries["shop/orders.py"].extra == {"module": "shop"} and entries["shop/orders.py"].tags == (
        "python",
    )
    folders = {f.folder: f.summary for f in folder_summaries(first.entries)}
    assert folders == {
        ".": "A tiny shop that takes orders. It is small.",
        "docs": "How to run the shop.",
        "shop": "Orders: taking and listing them.",
        "shop/payments": "Card payments through the bank API",
    }
    cited = {f.path: f.sha256 for e in first.entries for f in e.files}
    assert cited["shop/orders.py"] == _sha(root / "shop" / "orders.py")
    assert "docs/logo.png" not in cited  # binary files are not cited
    assert "shop/link.txt" not in listed.paths and "SECRET" not in json.dumps(first.to_json())
    assert ("docs/notes.md" in cited) == git  # untracked but not ignored: git lists it too
    status = index_status(str(root), first)
    assert status.fresh and status.ratio == 1.0


@pytest.mark.anyio
async def test_onboard_creates_the_layers_then_keeps_them_until_refresh(
    server: LoopbackServer, tmp_path: Path
) -> None:
    root = make_repo(tmp_path / "repo")
    runtime = await create_runtime(runtime_options(tmp_path, server, cwd=str(root), trust_override=True))
    session = runtime.session
    view = view_from_session(session, runtime.resources)
    server.script(Turn([Text(SNAPSHOT)]))
    report = await onboard_command(view, session.summarizer())
    assert report["ok"] is True and report["snapshotSource"] == "model"
    assert [(f["kind"], f["status"]) for f in report["files"]] == [
        ("index", "created"),
        ("snapshot", "created"),
        ("profile", "created"),
    ]
    assert "- .pi/context-index.json: created (4 modules" in report["text"]
    request = server.requests[-1].body
    asked = request["messages"][0]["content"][0]["text"]
    assert "<repository_map" in asked and "shop/payments: Card payments" in asked and not request.get("tools")
    pi = root / ".pi"
    assert (pi / "project-context.md").read_text() == SNAPSHOT
    assert json.loads((pi / "piwork-profile.json").read_text())["version"] == 1
    loaded = load_index(str(root))
    assert loaded.index is not None and len(loaded.index.entries) == 7  # one per text file git lists
    assert not list(pi.glob("*.tmp-*"))  # atomic writes leave nothing behind

    # run again: nothing is replaced, no model call
    (pi / "piwork-profile.json").write_text('{"version": 1, "verify": ["pytest -q"]}\n')
    calls = len(server.requests)
    again = await onboard(str(root), True, session.summarizer())
    assert [f.status for f in again.files] == ["kept", "kept", "kept"] and len(server.requests) == calls
    assert (pi / "project-context.md").read_text() == SNAPSHOT

    # --refresh rebuilds the index and the snapshot; the user's profile stays
    (root / "shop" / "orders.py").write_text("def take(order):\n    return [order]\n")
    stale = index_status(str(root), load_index(str(root)).index)  # type: ignore[arg-type]
    # one edited file: one changed entry of seven, the index as a whole still fresh
    states = {e.entry.id: e.state for e in stale.entries}
    assert [k for k, v in states.items() if v != "fresh"] == ["shop/orders.py"] and stale.fresh
    server.script(Turn(failure=Failure.http(400, '{"type":"error","error":{"message":"bad"}}')))
    refreshed = await onboard(str(root), True, session.summarizer(), refresh=True)
    assert [f.status for f in refreshed.files] == ["refreshed", "refreshed", "kept"]
    assert refreshed.snapshot_source == "index" and "failed" in refreshed.notes[0]
    assert (pi / "project-context.md").read_text().startswith("# Project snapshot\n\nrepo: A tiny shop")
    assert "pytest -q" in (pi / "piwork-profile.json").read_text()
    fresh_status = index_status(str(root), load_index(str(root)).index)  # type: ignore[arg-type]
    assert fresh_status.ratio == 1.0
    runtime.store.close()


@pytest.mark.anyio
async def test_untrusted_project_is_not_onboarded(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo")
    result = await onboard(str(root), False, None)
    assert not result.ok and "not trusted" in result.message and not (root / ".pi").exists()


@pytest.mark.anyio
async def test_without_a_model_the_snapshot_comes_from_the_index(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo", git=False)
    result = await onboard(str(root), True, None)
    assert result.ok and result.snapshot_source == "index" and result.file_source == "walk"
    text = (root / ".pi" / "project-context.md").read_text()
    assert "- shop: Orders: taking and listing them." in text and "without a model" in text


def test_write_new_file_never_replaces_unless_asked(tmp_path: Path) -> None:
    target = tmp_path / ".pi" / "x.md"
    assert write_new_file(str(target), "one\n") is True
    assert write_new_file(str(target), "two\n") is False and target.read_text() == "one\n"
    assert write_new_file(str(target), "three\n", replace_existing=True) is True
    assert target.read_text() == "three\n" and [p.name for p in target.parent.iterdir()] == ["x.md"]


def test_onboard_arguments() -> None:
    assert parse_onboard("run") is False and parse_onboard(" run  --refresh ") is True
    assert parse_onboard("") is None and parse_onboard("walk") is None
