"""edit and write refuse the project's context index however its path is spelled."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from piwork.core.context.index import index_read_answer

from .helpers import call, text

ORIGINAL = '{"version": 1, "entries": []}\n'


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / ".pi").mkdir(parents=True)
    (root / ".pi" / "context-index.json").write_text(ORIGINAL)
    (root / "src").mkdir()
    return root


SPELLINGS = [
    ".pi/context-index.json",
    "./.pi/context-index.json",
    "src/../.pi/context-index.json",
    "@.pi/context-index.json",
]


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_write_refuses_every_spelling(project: Path, spelling: str) -> None:
    out = call("write", {"path": spelling, "content": "{}"}, project)
    assert out.is_error
    assert "/onboard run" in text(out) and "context index" in text(out)
    assert (project / ".pi" / "context-index.json").read_text() == ORIGINAL


def test_absolute_path_and_edit_are_refused(project: Path) -> None:
    index = project / ".pi" / "context-index.json"
    out = call("edit", {"path": str(index), "edits": [{"oldText": "[]", "newText": "[1]"}]}, project)
    assert out.is_error and "/onboard run" in text(out)
    assert index.read_text() == ORIGINAL


def test_symlinks_to_the_index_or_its_folder_are_refused(project: Path) -> None:
    os.symlink(project / ".pi" / "context-index.json", project / "src" / "map.json")
    os.symlink(project / ".pi", project / "cfg")
    for path in ("src/map.json", "cfg/context-index.json"):
        out = call("write", {"path": path, "content": "{}"}, project)
        assert out.is_error and "/onboard run" in text(out), path
    os.link(project / ".pi" / "context-index.json", project / "hard.json")
    out = call("edit", {"path": "hard.json", "edits": [{"oldText": "[]", "newText": "[1]"}]}, project)
    assert out.is_error
    assert (project / ".pi" / "context-index.json").read_text() == ORIGINAL


def test_a_missing_index_cannot_be_created_either(tmp_path: Path) -> None:
    out = call("write", {"path": ".pi/context-index.json", "content": "{}"}, tmp_path)
    assert out.is_error
    assert not (tmp_path / ".pi" / "context-index.json").exists()


def test_other_files_in_pi_are_still_writable(project: Path) -> None:
    out = call("write", {"path": ".pi/project-context.md", "content": "# notes\n"}, project)
    assert not out.is_error
    assert (project / ".pi" / "project-context.md").read_text() == "# notes\n"


def test_read_answers_with_the_sanitised_summary(project: Path) -> None:
    import hashlib
    import json

    (project / "src" / "a.py").write_text("x = 1\n")
    digest = hashlib.sha256(b"x = 1\n").hexdigest()
    raw = {
        "version": 1,
        "builtAt": "2026-12-01T10:00:00Z",
        "secretField": "do-not-show",
        "entries": [
            {"id": "core", "title": "Core\x07 module", "files": [{"path": "src/a.py", "sha256": digest}]}
        ],
    }
    (project / ".pi" / "context-index.json").write_text(json.dumps(raw))
    out = call("read", {"path": "src/../.pi/context-index.json"}, project, context_index=index_read_answer)
    body = text(out)
    assert not out.is_error and out.details == {"contextIndex": True}
    assert "advisory map" in body and "Index fresh." in body and "- core: Core module" in body
    assert "do-not-show" not in body and "sha256" not in body and "\x07" not in body
    (project / ".pi" / "context-index.json").write_text("{broken")
    assert "/onboard run" in text(
        call("read", {"path": ".pi/context-index.json"}, project, context_index=index_read_answer)
    )


def test_read_without_the_index_look_up_never_shows_the_raw_file(project: Path) -> None:
    (project / ".pi" / "context-index.json").write_text('{"version": 1, "secretField": "do-not-show"}')
    out = call("read", {"path": ".pi/context-index.json"}, project)
    assert not out.is_error and out.details == {"contextIndex": True}
    assert "not available here" in text(out) and "do-not-show" not in text(out)
