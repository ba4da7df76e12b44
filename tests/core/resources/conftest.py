"""A throwaway home and agent dir per test, and a small helper to plant files."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest


@dataclass
class Tree:
    root: Path
    home: Path
    agent: Path

    def write(self, rel: str, text: str = "") -> Path:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return path

    def mkdir(self, rel: str) -> Path:
        path = self.root / rel
        path.mkdir(parents=True, exist_ok=True)
        return path


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Tree:
    root = tmp_path.resolve()
    home = root / "home"
    agent = home / ".pi" / "agent"
    agent.mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("PI_CODING_AGENT_DIR", raising=False)
    return Tree(root, home, agent)


def skill_text(name: str, description: str = "does things", extra: str = "") -> str:
    return f"---\nname: {name}\ndescription: {description}\n{extra}---\nBody of {name}.\n"
