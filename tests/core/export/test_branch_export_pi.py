"""A branch exported as a session file opens in the reference implementation with the context the
branch had in piwork: every branch of a session recorded from real runs (tool calls, a branch
summary, labels) and of a hand-built session with a compaction and an abandoned branch.

Needs Node and the reference package (``$PI_ORACLE_DIR``, default ``/tmp/pi-oracle``); skipped
with a reason otherwise.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from piwork.core.export.branch_file import export_branch_jsonl
from piwork.core.session.store import open_session
from tests.support.branch_runs import record_two_branches
from tests.support.reference import MISSING_REASON, NODE, PI_DIST
from tests.support.rich_session import write_rich_session

pytestmark = [
    pytest.mark.oracle,
    pytest.mark.skipif(
        not (NODE.exists() and (PI_DIST / "core" / "session-manager.js").exists()),
        reason=MISSING_REASON,
    ),
]

# Opens each file given with the reference's session manager and prints what it built.
OPEN_SCRIPT = """
const sm = await import(process.argv[2] + "/core/session-manager.js");
const out = [];
for (const file of process.argv.slice(3)) {
  const s = sm.SessionManager.open(file);
  const labels = {};
  for (const e of s.getEntries()) { const l = s.getLabel(e.id); if (l !== undefined) labels[e.id] = l; }
  out.push({ leafId: s.getLeafId(), context: s.buildSessionContext(), labels, count: s.getEntries().length });
}
console.log(JSON.stringify(out));
"""


def _open_in_reference(tmp_path: Path, files: list[Path]) -> list[dict[str, Any]]:
    script = tmp_path / "open.mjs"
    script.write_text(OPEN_SCRIPT, encoding="utf-8")
    env = {**os.environ, "TZ": "UTC", "PI_CODING_AGENT_DIR": str(tmp_path / "pi-agent")}
    out = subprocess.run(
        [str(NODE), str(script), str(PI_DIST), *map(str, files)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    result: list[dict[str, Any]] = json.loads(out.stdout)
    return result


def _exports(source: Path, leaves: list[str], folder: Path) -> list[tuple[str, Path]]:
    folder.mkdir(exist_ok=True)
    return [(leaf, export_branch_jsonl(source, folder / f"{leaf}.jsonl", leaf)) for leaf in leaves]


def _expected(source: Path, leaf: str) -> tuple[dict[str, Any], dict[str, str]]:
    """piwork's context of ``source`` at ``leaf`` and the labels set on that path."""
    with open_session(source, writable=False) as session:
        tree = session.tree
        context = json.loads(json.dumps(tree.build_context(leaf).to_json()))
        on_path = {record.id for record in tree.path(leaf)}
        labels = {k: v for k, v in tree.labels().items() if k in on_path}
    return context, labels


def _check(tmp_path: Path, source: Path, leaves: list[str]) -> None:
    exported = _exports(source, leaves, tmp_path / "exported")
    seen = _open_in_reference(tmp_path, [path for _leaf, path in exported])
    for (leaf, path), pi in zip(exported, seen, strict=True):
        context, labels = _expected(source, leaf)
        assert pi["context"]["messages"], f"empty context for branch {leaf}"
        assert pi["context"] == context, f"branch {leaf}: the reference built another context"
        assert pi["labels"] == labels
        with open_session(path, writable=False) as reopened:  # and piwork reads its own file alike
            assert json.loads(json.dumps(reopened.tree.build_context().to_json())) == context
            assert pi["leafId"] == reopened.tree.leaf_id
            assert pi["count"] == len(reopened.tree)


def test_each_branch_of_a_recorded_session_opens_in_the_reference_with_its_context(
    tmp_path: Path,
) -> None:
    (tmp_path / "run").mkdir()
    recorded = record_two_branches(tmp_path / "run")
    ids = recorded.ids
    with open_session(recorded.path) as session:  # a label on the shared part and one on branch A
        session.tree.set_label(ids["fork"], "fork point")
        session.tree.set_label(ids["edit_result"], "edited")
    _check(tmp_path, recorded.path, [ids["tip_b"], ids["tip_a"], ids["summary"], ids["fork"]])


def test_branches_past_a_compaction_open_in_the_reference_with_their_context(tmp_path: Path) -> None:
    source = write_rich_session(tmp_path / "rich.jsonl")
    with open_session(source, writable=False) as session:
        tree = session.tree
        children = {r.parent_id for r in tree.records}
        tips = [r.id for r in tree.records if r.id not in children and r.type != "label"]
    assert len(tips) >= 2
    _check(tmp_path, source, tips)
