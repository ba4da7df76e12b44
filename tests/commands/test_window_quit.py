"""Quitting the real window (a subprocess, offscreen): what was appended to the session but not yet
written when the window closed is in the file once the process has ended."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

# Runs the window through ``piwork``'s own entry point; once the session is open it labels the leaf with
# the write left queued (as the tree view does, before its worker writes it), then closes the window at
# once, the way a person does.
_DRIVER = """
import runpy, sys
from PySide6.QtCore import QTimer
import piwork.gui.tabs.manager as tabs_module

controllers = []

class Recorded(tabs_module.SessionController):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        controllers.append(self)

def label_and_close():
    runtime = controllers[0].runtime if controllers else None
    if runtime is None:
        QTimer.singleShot(20, label_and_close)
        return
    store = runtime.store
    with store.writing_later():
        store.tree.set_label(store.tree.leaf_id, "kept at quit")
    assert store.writes_pending
    controllers[0].window.close()

tabs_module.SessionController = Recorded  # the tabs make each tab's controller
QTimer.singleShot(0, label_and_close)
sys.argv = ["piwork", *sys.argv[1:]]
runpy.run_module("piwork", run_name="__main__", alter_sys=True)
"""


def test_quitting_writes_what_was_still_queued_for_the_session_file(tmp_path: Path) -> None:
    project, agent = tmp_path / "project", tmp_path / "agent"
    project.mkdir()
    agent.mkdir()
    session_file = tmp_path / "session.jsonl"
    header = {"type": "session", "version": 3, "id": "0193e5b2-7c1d-7a4e-9f00-1234567890ab",
              "timestamp": "2024-12-03T14:00:00.000Z", "cwd": str(project)}  # fmt: skip
    user = {"type": "message", "id": "u1", "parentId": None, "timestamp": "2024-12-03T14:00:01.000Z",
            "message": {"role": "user", "content": "hello", "timestamp": 1733234401000}}  # fmt: skip
    reply = {"type": "message", "id": "a1", "parentId": "u1", "timestamp": "2024-12-03T14:00:02.000Z",
             "message": {"role": "assistant", "content": [{"type": "text", "text": "Hi."}],
                         "api": "openai-completions", "provider": "local", "model": "m", "usage": {},
                         "stopReason": "stop", "timestamp": 1733234402000}}  # fmt: skip
    before = [json.dumps(header), json.dumps(user), json.dumps(reply)]
    session_file.write_text("\n".join(before) + "\n")
    env = {
        **os.environ,
        "QT_QPA_PLATFORM": "offscreen",
        "HOME": str(tmp_path),
        "PI_CODING_AGENT_DIR": str(agent),
        "PIWORK_CONFIG_DIR": str(tmp_path / "cfg"),
        "PYTHON_KEYRING_BACKEND": "keyring.backends.null.Keyring",
    }
    done = subprocess.run(
        [sys.executable, "-c", _DRIVER, "--cwd", str(project), "--session", str(session_file), "--approve"],
        env=env,
        cwd=project,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    lines = session_file.read_text().splitlines()
    assert lines[: len(before)] == before
    labels = [entry for entry in map(json.loads, lines[len(before) :]) if entry["type"] == "label"]
    assert [label["label"] for label in labels] == ["kept at quit"]
