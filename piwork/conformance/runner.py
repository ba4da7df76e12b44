"""Load case files, run each case, compare with the golden expectation, report."""

from __future__ import annotations

import argparse
import difflib
import json
import math
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from piwork.conformance.harness import ROOT_MARK, CaseEnv, case_environment, map_strings
from piwork.conformance.ops import all_ops
from piwork.core.errors import InputRejected

OpFunction = Callable[[dict[str, Any], CaseEnv], Any]


@dataclass(frozen=True)
class CaseOutcome:
    case_id: str
    op: str
    passed: bool
    expected: Any
    actual: Any


def load_cases(path: str | Path) -> list[dict[str, Any]]:
    with open(path, encoding="utf-8") as fh:
        doc = json.load(fh)
    cases = doc["cases"] if isinstance(doc, dict) else doc
    return list(cases)


def run_case(case: dict[str, Any], ops: dict[str, OpFunction] | None = None) -> CaseOutcome:
    ops = all_ops() if ops is None else ops
    op_name = case["op"]
    expected = case.get("expect")
    fn = ops.get(op_name)
    if fn is None:
        actual: Any = {
            "error": True,
            "errorKind": "unknown-op",
            "message": f"op {op_name!r} is not implemented",
        }
        return CaseOutcome(case["id"], op_name, False, expected, actual)
    with case_environment(case.get("args") or {}) as (args, env):
        try:
            actual = normalize(fn(args, env))
        except InputRejected:
            actual = {"error": True, "errorKind": "rejected"}
        except Exception as exc:
            actual = {"error": True, "errorKind": "crash", "exception": f"{type(exc).__name__}: {exc}"}
        if env.root is not None:
            root = env.root
            actual = map_strings(actual, lambda s: s.replace(root, ROOT_MARK))
    passed = _equal_results(expected, actual)
    return CaseOutcome(case["id"], op_name, passed, expected, actual)


def normalize(value: Any) -> Any:
    """Turn an op's result into plain JSON values: non-finite numbers become null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {str(k): normalize(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [normalize(v) for v in value]
    if hasattr(value, "to_json"):
        return normalize(value.to_json())
    return value


def _equal_results(expected: Any, actual: Any) -> bool:
    if isinstance(expected, dict) and expected.get("error") is True:
        return (
            isinstance(actual, dict)
            and actual.get("error") is True
            and actual.get("errorKind") == expected.get("errorKind")
        )
    return json_equal(expected, actual)


def json_equal(a: Any, b: Any) -> bool:
    """JSON equality: objects by key set, arrays in order, 1 == 1.0, bools are not numbers."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return float(a) == float(b)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


def describe_failure(outcome: CaseOutcome) -> str:
    exp = _pretty(outcome.expected)
    act = _pretty(outcome.actual)
    diff = difflib.unified_diff(exp.splitlines(), act.splitlines(), "expected", "actual", lineterm="", n=2)
    body = "\n".join(diff)
    return f"FAIL {outcome.case_id} ({outcome.op})\n{body}\n"


def _pretty(value: Any) -> str:
    return json.dumps(value, indent=1, sort_keys=True, ensure_ascii=True)


def run_files(paths: list[str], out: TextIO = sys.stdout, quiet: bool = False) -> tuple[int, int]:
    ops = all_ops()
    passed = failed = 0
    for path in paths:
        for case in load_cases(path):
            outcome = run_case(case, ops)
            if outcome.passed:
                passed += 1
            else:
                failed += 1
                if not quiet:
                    out.write(describe_failure(outcome))
    return passed, failed


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m piwork.conformance",
        description="Run golden conformance case files against piwork's engine.",
    )
    parser.add_argument("files", nargs="+", help="case files (JSON) to evaluate")
    parser.add_argument("-q", "--quiet", action="store_true", help="print only the summary line")
    ns = parser.parse_args(argv)
    passed, failed = run_files(ns.files, quiet=ns.quiet)
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1
