from __future__ import annotations

import json
from pathlib import Path

import pytest

from piwork.core.resources.loader import load_resources
from piwork.core.resources.profile import load_profile
from piwork.core.resources.trust import has_trust_resources, trust_resources
from piwork.core.settings import Settings


def _write(root: Path, text: str) -> Path:
    path = root / ".pi" / "piwork-profile.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_valid_profile(tmp_path: Path) -> None:
    _write(
        tmp_path,
        json.dumps(
            {
                "version": 1,
                "verify": ["pytest -q", " npm test "],
                "required": ["docs/architecture.md"],
                "memory": {"enabled": True},
                "defaultTaskMode": "read-only",
            }
        ),
    )
    result = load_profile(str(tmp_path))
    assert result.diagnostics == ()
    assert result.profile is not None
    assert result.profile.verify == ("pytest -q", "npm test")
    assert result.profile.required == ("docs/architecture.md",)
    assert result.profile.memory_enabled and result.profile.default_task_mode == "read-only"


def test_absent_profile_is_not_a_problem(tmp_path: Path) -> None:
    result = load_profile(str(tmp_path))
    assert not result.exists and result.profile is None and result.diagnostics == ()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{not json", "not valid JSON"),
        ("[1, 2]", "must be a JSON object"),
        ('{"version": 2}', "unsupported profile version 2"),
        ("", "not valid JSON"),
    ],
)
def test_unusable_profile_gives_an_error_diagnostic(tmp_path: Path, text: str, message: str) -> None:
    path = _write(tmp_path, text)
    result = load_profile(str(tmp_path))
    assert result.exists and result.profile is None
    assert [d.type for d in result.diagnostics] == ["error"]
    assert message in result.diagnostics[0].message and result.diagnostics[0].path == str(path)


def test_bad_fields_are_reported_and_replaced_by_defaults(tmp_path: Path) -> None:
    _write(
        tmp_path,
        json.dumps(
            {
                "version": 1,
                "verify": "pytest",
                "required": ["ok.md", 3, ""],
                "memory": True,
                "defaultTaskMode": "yolo",
            }
        ),
    )
    result = load_profile(str(tmp_path))
    assert result.profile is not None
    assert result.profile.verify == () and result.profile.required == ("ok.md",)
    assert not result.profile.memory_enabled and result.profile.default_task_mode == "source-write"
    messages = " | ".join(d.message for d in result.diagnostics)
    assert "verify must be a list" in messages and "required: entries" in messages
    assert "memory must be an object" in messages and "defaultTaskMode" in messages
    assert all(d.type == "warning" for d in result.diagnostics)


def test_profile_needs_trust_and_is_listed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    root = tmp_path / "repo"
    path = _write(root, "{broken")
    assert not has_trust_resources(str(root))  # Pi's own list does not know it
    assert has_trust_resources(str(root), include_piwork=True)
    assert [(r.path, r.kind) for r in trust_resources(str(root))] == [(str(path), "profile")]
    agent = tmp_path / "agent"
    agent.mkdir()

    untrusted = load_resources(str(root), str(agent), Settings.for_project(str(root), str(agent), False))
    row = next(r for r in untrusted.rows if r.kind == "profile")
    assert (row.state, row.trust_gated, row.diagnostics) == ("blocked-untrusted", True, ())

    trusted = load_resources(str(root), str(agent), Settings.for_project(str(root), str(agent), True))
    row = next(r for r in trusted.rows if r.kind == "profile")
    assert row.state == "error" and "not valid JSON" in row.diagnostics[0].message

    path.write_text('{"version": 1, "verify": ["pytest -q"]}')
    (root / ".pi" / "project-context.md").write_text("# snapshot\n")
    trusted = load_resources(str(root), str(agent), Settings.for_project(str(root), str(agent), True))
    rows = [(r.kind, r.name, r.state) for r in trusted.rows if r.kind in ("profile", "project-context")]
    assert rows == [
        ("profile", "piwork-profile.json", "active"),
        ("project-context", "project-context.md", "active"),
    ]
