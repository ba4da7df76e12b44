"""Options for ``create_runtime`` against the loopback provider server, laid out under a test's tmp_path."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import keyring.backends.null

from piwork.core.llm import CredentialStore
from piwork.core.workflows import RuntimeOptions
from tests.support.loopback_server import LoopbackServer


def runtime_options(tmp_path: Path, server: LoopbackServer, **extra: Any) -> RuntimeOptions:
    """The project is ``tmp_path/project``, the agent dir ``tmp_path/agent`` and HOME ``tmp_path/home``
    (made here when missing); the server's model on its address, with a test key that no keyring keeps.
    ``extra`` sets or replaces any other field (``trust_override``, ``tokenizers``, ``cwd``, …)."""
    env = {"HOME": str(tmp_path / "home"), "ANTHROPIC_API_KEY": "sk-test"}
    (tmp_path / "project").mkdir(exist_ok=True)
    (tmp_path / "home").mkdir(exist_ok=True)
    fields: dict[str, Any] = {
        "cwd": str(tmp_path / "project"),
        "agent_dir": tmp_path / "agent",
        "model": f"anthropic/{server.model}",
        "base_url": server.url,
        "env": env,
        "credentials": CredentialStore(backend=keyring.backends.null.Keyring(), env=env),
    }
    fields.update(extra)
    return RuntimeOptions(**fields)
