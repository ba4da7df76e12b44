"""Round trip with the reference implementation: piwork's files open in Pi with the same context,
Pi's files open in piwork with the same context, and every line piwork writes is byte-identical
to what Pi would write for the same value.

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

from piwork.core.session.store import create_session, open_session
from tests.support.reference import MISSING_REASON, NODE, PI_DIST

pytestmark = [
    pytest.mark.oracle,
    pytest.mark.skipif(
        not (NODE.exists() and (PI_DIST / "core" / "session-manager.js").exists()),
        reason=MISSING_REASON,
    ),
]

READ_SCRIPT = """
import fs from "node:fs";
const sm = await import(process.argv[2] + "/core/session-manager.js");
const file = process.argv[3];
const s = sm.SessionManager.open(file);
const lines = fs.readFileSync(file, "utf-8").split("\\n").filter((l) => l.length > 0);
const canonical = lines.map((l) => JSON.stringify(JSON.parse(l)) === l);
const labels = {};
for (const e of s.getEntries()) { const l = s.getLabel(e.id); if (l !== undefined) labels[e.id] = l; }
console.log(JSON.stringify({
  leafId: s.getLeafId(), context: s.buildSessionContext(), canonical, labels,
  name: s.getSessionName() ?? null, count: s.getEntries().length,
}));
"""

WRITE_SCRIPT = """
const sm = await import(process.argv[2] + "/core/session-manager.js");
const s = sm.SessionManager.create(process.argv[3], process.argv[4]);
const u = (text, t) => ({ role: "user", content: text, timestamp: t });
const a = (text, t) => ({ role: "assistant", content: [{ type: "text", text }], api: "anthropic-messages",
  provider: "anthropic", model: "claude", usage: { input: 1, output: 2, cacheRead: 0, cacheWrite: 0, totalTokens: 3,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } }, stopReason: "stop", timestamp: t });
const first = s.appendMessage(u("héllo 😀", 1));
const reply = s.appendMessage(a("hi", 2));
s.appendThinkingLevelChange("high");
s.appendLabelChange(first, "start ✓");
s.appendSessionInfo("From Pi");
s.branch(reply);
s.appendCustomMessageEntry("note", "extension says", true, { k: 1 });
s.appendCompaction("summary text", first, 1234, { readFiles: ["a"], modifiedFiles: [] }, false);
s.appendMessage(u("after", 3));
console.log(JSON.stringify({ file: s.getSessionFile(), leafId: s.getLeafId(), context: s.buildSessionContext() }));
"""


def _node(tmp_path: Path, script: str, *args: str) -> Any:
    path = tmp_path / "script.mjs"
    path.write_text(script, encoding="utf-8")
    env = {**os.environ, "TZ": "UTC", "PI_CODING_AGENT_DIR": str(tmp_path / "pi-agent")}
    out = subprocess.run(
        [str(NODE), str(path), str(PI_DIST), *args], capture_output=True, text=True, env=env, timeout=60
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def _normalized(context: dict[str, Any]) -> dict[str, Any]:
    return json.loads(json.dumps(context))


def test_piwork_session_opens_in_pi_with_the_same_context(tmp_path: Path) -> None:
    session = create_session(str(tmp_path), session_dir=tmp_path / "s")
    tree = session.tree
    first = tree.append_message({"role": "user", "content": 'héllo 😀 \u2028 "q"', "timestamp": 1})
    reply = tree.append_message(
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "hi"},
                {
                    "type": "toolCall",
                    "id": "c1",
                    "name": "read",
                    "arguments": {"path": "a.py", "1": 2, "x": 1e-7},
                },
            ],
            "api": "anthropic-messages",
            "provider": "anthropic",
            "model": "claude",
            "usage": {
                "input": 1,
                "output": 2,
                "cacheRead": 0,
                "cacheWrite": 0,
                "totalTokens": 3,
                "cost": {"input": 0.5, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0.5},
            },
            "stopReason": "toolUse",
            "timestamp": 2,
        }
    )
    tree.append_message(
        {
            "role": "toolResult",
            "toolCallId": "c1",
            "toolName": "read",
            "content": [{"type": "text", "text": "x"}],
            "isError": False,
            "timestamp": 3,
        }
    )
    tree.append_model_change("openai", "gpt-4o")
    tree.set_label(first, "start")
    tree.set_name("My\nsession")
    tree.branch(reply)
    tree.append_custom_entry("ext", {"n": 1})
    tree.append_custom_message("note", [{"type": "text", "text": "extension"}], False, {"d": True})
    tree.append_compaction("so far", reply, 999, {"readFiles": ["a.py"], "modifiedFiles": []}, False)
    tree.branch_with_summary(first, "left it", {"readFiles": [], "modifiedFiles": []}, False)
    tree.append_thinking_level_change("low")
    tree.append_message({"role": "user", "content": "last", "timestamp": 4})
    session.close()
    assert session.path is not None
    pi = _node(tmp_path, READ_SCRIPT, str(session.path))
    assert all(pi["canonical"]), "a line piwork wrote differs from Pi's serialization"
    reopened = open_session(session.path, writable=False)
    assert pi["leafId"] == reopened.tree.leaf_id
    assert pi["context"] == _normalized(reopened.tree.build_context().to_json())
    assert pi["labels"] == reopened.tree.labels() and pi["name"] == reopened.tree.name == "My session"
    assert pi["count"] == len(reopened.tree)


def test_pi_session_opens_in_piwork_and_takes_appends(tmp_path: Path) -> None:
    written = _node(tmp_path, WRITE_SCRIPT, str(tmp_path), str(tmp_path / "pi-sessions"))
    path = Path(written["file"])
    with open_session(path) as session:
        assert session.tree.diagnostics == []
        assert session.tree.leaf_id == written["leafId"]
        assert _normalized(session.tree.build_context().to_json()) == written["context"]
        assert session.tree.label(session.tree.records[0].id) == "start ✓"
        session.tree.append_message({"role": "user", "content": "from piwork", "timestamp": 9})
        expected = _normalized(session.tree.build_context().to_json())
    pi = _node(tmp_path, READ_SCRIPT, str(path))
    assert all(pi["canonical"])
    assert pi["context"] == expected
