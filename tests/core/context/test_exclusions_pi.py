"""A session with a part excluded for its task opens in the reference implementation with the same context
as piwork's transcript: the exclusion is a state-only entry, which Pi skips, and its line is written as Pi
writes lines. Needs Node and the reference package (``$PI_ORACLE_DIR``); skipped otherwise."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from piwork.core.context.bundle import BundleRequest, assemble_bundle, build_manifest, start_task
from piwork.core.context.contract import TaskContract
from piwork.core.context.exclusions import EXCLUSIONS_CUSTOM_TYPE, exclude_parts, exclusion_targets
from piwork.core.context.manifest import latest_manifest
from piwork.core.session.store import create_session, open_session
from tests.support.reference import MISSING_REASON, NODE, PI_DIST

pytestmark = [
    pytest.mark.oracle,
    pytest.mark.skipif(
        not (NODE.exists() and (PI_DIST / "core" / "session-manager.js").exists()), reason=MISSING_REASON
    ),
]

READ_SCRIPT = """
import fs from "node:fs";
const sm = await import(process.argv[2] + "/core/session-manager.js");
const file = process.argv[3];
const s = sm.SessionManager.open(file);
const lines = fs.readFileSync(file, "utf-8").split("\\n").filter((l) => l.length > 0);
console.log(JSON.stringify({
  context: s.buildSessionContext(), leafId: s.getLeafId(),
  canonical: lines.map((l) => JSON.stringify(JSON.parse(l)) === l),
}));
"""


def _pi(tmp_path: Path, file: Path) -> Any:
    script = tmp_path / "read.mjs"
    script.write_text(READ_SCRIPT, encoding="utf-8")
    env = {**os.environ, "TZ": "UTC", "PI_CODING_AGENT_DIR": str(tmp_path / "pi-agent")}
    done = subprocess.run(
        [str(NODE), str(script), str(PI_DIST), str(file)], capture_output=True, text=True, env=env, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_pi_opens_a_session_with_an_exclusion_with_the_transcript_context(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    (root / ".pi").mkdir(parents=True)
    (root / ".pi" / "project-context.md").write_text("# Snapshot\nA tiny app.\n")
    session = create_session(str(root), tmp_path / "sessions")
    tree = session.tree
    contract = TaskContract.from_json({"title": "T", "goal": "look", "mode": "read-only", "phase": "scout"})
    bundle = assemble_bundle(BundleRequest(str(root), True, contract))
    start_task(
        tree,
        contract,
        bundle,
        build_manifest("task-1", "2026-12-01T10:00:00.000Z", "chars/4", [], bundle, contract),
    )
    tree.append_message({"role": "user", "content": "where?", "timestamp": 1})
    tree.append_message(
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "here"}],
            "api": "anthropic-messages",
            "provider": "anthropic",
            "model": "claude",
            "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2},
            "stopReason": "stop",
            "timestamp": 2,
        }
    )
    manifest = latest_manifest(tree)
    assert manifest is not None
    exclude_parts(tree, manifest, exclusion_targets(manifest, ["snapshot"], str(root)), str(root))
    tree.append_message({"role": "user", "content": "and then?", "timestamp": 3})
    session.close()
    assert session.path is not None

    pi = _pi(tmp_path, session.path)
    assert all(pi["canonical"])
    reopened = open_session(session.path, writable=False)
    context = json.loads(json.dumps(reopened.tree.build_context().to_json()))
    assert pi["context"] == context and pi["leafId"] == reopened.tree.leaf_id
    assert [m["role"] for m in pi["context"]["messages"]] == ["custom", "user", "assistant", "user"]
    assert "A tiny app." in pi["context"]["messages"][0]["content"][0]["text"]  # Pi sends the whole bundle
    assert any(e.get("customType") == EXCLUSIONS_CUSTOM_TYPE for e in reopened.tree.entries())
