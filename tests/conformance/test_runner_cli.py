"""The conformance runner as a command: diff output, closing line, exit status."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from piwork.conformance.runner import run_case

HERE = Path(__file__).parent


def _run(*files: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "piwork.conformance", *map(str, files)],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_passing_file_exits_zero_with_summary_line() -> None:
    result = _run(HERE / "truncate.json")
    assert result.returncode == 0, result.stdout
    assert result.stdout.strip().splitlines()[-1] == "96 passed, 0 failed"


def test_failures_and_unknown_ops_are_reported_and_fail(tmp_path: Path) -> None:
    cases = {
        "suite": "mixed",
        "cases": [
            {
                "id": "truncate_line-9001",
                "op": "truncate_line",
                "args": {"line": "abc", "maxChars": 2},
                "expect": {"text": "ab... [truncated]", "wasTruncated": True},
            },
            {
                "id": "truncate_line-9002",
                "op": "truncate_line",
                "args": {"line": "abc"},
                "expect": {"text": "wrong", "wasTruncated": False},
            },
            {"id": "no_such_op-0001", "op": "no_such_op", "args": {}, "expect": {}},
        ],
    }
    path = tmp_path / "cases.json"
    path.write_text(json.dumps(cases), encoding="utf-8")
    result = _run(path)
    assert result.returncode == 1
    assert "FAIL truncate_line-9002" in result.stdout
    assert '"wrong"' in result.stdout
    assert "FAIL no_such_op-0001" in result.stdout
    assert result.stdout.strip().splitlines()[-1] == "1 passed, 2 failed"


def test_a_path_named_as_both_a_folder_and_a_file_is_a_folder() -> None:
    case = {
        "id": "context_files-9001",
        "op": "context_files",
        "args": {
            "fs": {"work/AGENTS.md": "a file?", "work/CLAUDE.md": "claude", "work/AGENTS.md/x": "inside"},
            "dirs": ["work/AGENTS.md"],
            "cwd": "$ROOT/work",
        },
        "expect": {"files": [{"path": "$ROOT/work/CLAUDE.md", "content": "claude"}]},
    }
    outcome = run_case(case)
    assert outcome.passed, outcome
