"""``piwork -p`` and the keyring: a key stored in the keyring comes before the environment's, and a run whose
key comes from the environment asks the keyring only until it is known to hold none (then never loads keyring).

Real processes sharing a real, file-based keyring backend (``tests/support/file_keyring.py``) with this test,
which stores and removes keys as the window does (a ``CredentialStore`` with the agent folder's record)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from piwork.core.llm.credentials import CredentialStore
from piwork.core.llm.key_record import KeyRecord, record_path
from tests.commands.test_headless_imports import _REPORT_MODULES
from tests.support.file_keyring import BACKEND, FILE_ENV, FileKeyring
from tests.support.loopback_server import LoopbackServer, Text, Turn

ROOT = Path(__file__).resolve().parents[2]


class Run:
    def __init__(self, tmp_path: Path, server: LoopbackServer) -> None:
        self.tmp, self.server = tmp_path, server
        self.agent, self.project = tmp_path / "agent", tmp_path / "project"
        for folder in (tmp_path / "home", self.agent, self.project):
            folder.mkdir()
        self.keyring = FileKeyring(tmp_path / "keyring.json")
        self.env = {
            **{k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")},
            "HOME": str(tmp_path / "home"),
            "PI_CODING_AGENT_DIR": str(self.agent),
            "PYTHON_KEYRING_BACKEND": BACKEND,
            FILE_ENV: str(self.keyring.path),
            "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
            "ANTHROPIC_API_KEY": "sk-ant-from-environment",
        }

    def __call__(self) -> tuple[str, list[str]]:
        """One ``-p`` run: the key its request carried, and the modules it loaded."""
        self.server.script(Turn([Text("Fine.")]))
        report = self.tmp / "modules.json"
        command = [sys.executable, "-c", _REPORT_MODULES, str(report), "-p", "How are you?", "--no-session"]
        command += ["--model", f"anthropic/{self.server.model}", "--base-url", self.server.url]
        done = subprocess.run(
            command, cwd=self.project, env=self.env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
            timeout=60,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == "Fine."
        return self.server.requests[-1].headers["x-api-key"], json.loads(report.read_text())

    def window_store(self) -> CredentialStore:
        """The store a window keeps keys with (its own environment: another setup of the same keyring)."""
        return CredentialStore(self.keyring, env={}, record=KeyRecord(record_path(self.agent)))


@pytest.fixture
def run(tmp_path: Path) -> Iterator[Run]:
    with LoopbackServer() as server:
        yield Run(tmp_path, server)


def test_the_keyring_is_asked_until_it_is_known_to_hold_no_key_and_a_stored_key_comes_first(run: Run) -> None:
    key, modules = run()
    assert key == "sk-ant-from-environment"
    assert "keyring" in modules  # no record yet: asked first, and only about the model's provider
    assert run.keyring.asked() == ["__piwork_probe__", "anthropic"]
    asked = run.keyring.calls()

    key, modules = run()
    assert key == "sk-ant-from-environment"
    assert run.keyring.calls() == asked and "keyring" not in modules  # known to hold none: not asked

    run.window_store().store_key("anthropic", "sk-ant-stored-in-keyring")
    key, modules = run()
    assert key == "sk-ant-stored-in-keyring"  # the stored key comes before the environment's
    assert "keyring" in modules

    run.window_store().delete_key("anthropic")
    key, _ = run()
    assert key == "sk-ant-from-environment"
