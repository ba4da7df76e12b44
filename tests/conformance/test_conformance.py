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


def test_every_shipped_deviation_is_paired_with_the_reference_and_differs_from_it() -> None:
    """shipped.json pins piwork's deviations: each shipped case names its reason, and its twin in the
    reference mode (same args, expectation from the reference implementation) expects something else."""
    cases = load_cases(HERE / "shipped.json")
    shipped = [c for c in cases if c["args"].get("mode") == "shipped"]
    assert shipped
    for case in shipped:
        assert "§" in case.get("note", ""), f"{case['id']} does not say which spec section it follows"
        twins = [
            c
            for c in cases
            if c["args"].get("mode") == "reference"
            and c["op"] == case["op"]
            and {k: v for k, v in c["args"].items() if k != "mode"}
            == {k: v for k, v in case["args"].items() if k != "mode"}
        ]
        assert len(twins) == 1 and twins[0]["expect"] != case["expect"], case["id"]
