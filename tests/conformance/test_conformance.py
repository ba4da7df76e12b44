"""Every golden case in tests/conformance/*.json must pass (see expected_failures.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from piwork.conformance.runner import describe_failure, load_cases, run_case

from .expected_failures import EXPECTED_FAILING_OPS

HERE = Path(__file__).parent
CASE_FILES = sorted(HERE.glob("*.json"))


def _all_cases() -> list[Any]:
    params = []
    for path in CASE_FILES:
        for case in load_cases(path):
            marks = []
            if case["op"] in EXPECTED_FAILING_OPS:
                marks.append(pytest.mark.xfail(reason=f"op {case['op']} not implemented yet", strict=True))
            params.append(pytest.param(case, id=f"{path.stem}:{case['id']}", marks=marks))
    return params


def test_case_files_present() -> None:
    assert {p.stem for p in CASE_FILES} >= {
        "truncate",
        "session",
        "compaction",
        "branch",
        "resources",
        "trust",
        "frontmatter",
    }


@pytest.mark.parametrize("case", _all_cases())
def test_golden_case(case: dict[str, Any]) -> None:
    outcome = run_case(case)
    assert outcome.passed, describe_failure(outcome)
