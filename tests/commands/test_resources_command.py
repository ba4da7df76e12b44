"""`piwork resources`: trust decided first, project resources only with --approve, JSON and text output."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path


def _project(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    root = tmp_path.resolve()
    home = root / "home"
    (home / ".pi/agent").mkdir(parents=True)
    skill = root / "p/.pi/skills/a/SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text("---\nname: a\ndescription: project skill\n---\nbody")
    (root / "p/AGENTS.md").write_text("ctx")
    env = {**os.environ, "HOME": str(home)}
    env.pop("PI_CODING_AGENT_DIR", None)
    return root / "p", env


def _run(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "piwork", "resources", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_headless_without_approval_is_untrusted_and_says_so(tmp_path: Path) -> None:
    project, env = _project(tmp_path)
    result = _run(["--cwd", str(project)], env)
    assert result.returncode == 0, result.stderr
    assert "untrusted" in result.stdout and "--approve" in result.stdout
    assert "[blocked-untrusted] skills" in result.stdout
    assert "[active] AGENTS.md" in result.stdout


def test_json_with_approve_and_system_prompt(tmp_path: Path) -> None:
    project, env = _project(tmp_path)
    result = _run(["--cwd", str(project), "--json", "--approve", "--system-prompt"], env)
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["trust"]["source"] == "override" and doc["trust"]["trusted"] is True
    skills = [r for r in doc["resources"] if r["kind"] == "skill"]
    assert [(r["name"], r["state"], r["scope"]) for r in skills] == [("a", "active", "project")]
    assert "<location>" + str(project / ".pi/skills/a/SKILL.md") + "</location>" in doc["systemPrompt"]
    assert "".join(p["text"] for p in doc["systemPromptParts"]) == doc["systemPrompt"]
    assert not (Path(env["HOME"]) / ".pi/agent/trust.json").exists()
