"""Frontmatter parsing time against size: it must grow linearly (a quadratic parser takes 64x for 8x).

Run: python tests/benchmarks/bench_frontmatter.py   (prints one JSON line; target: growth ≤ 12x for 8x keys)
Thread CPU time is measured, best of several runs, so other processes on the machine do not skew it.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from piwork.core.resources.frontmatter import parse_frontmatter

SHAPES: dict[str, Callable[[int], str]] = {
    "plain keys": lambda n: "".join(f"k{i}: v\n" for i in range(n)),
    "quoted keys": lambda n: "".join(f"'k{i}': [v]\n" for i in range(n)),
    "aliases": lambda n: "a: &a x\nb:\n" + "".join("  - *a\n" for _ in range(n)),
}
SMALL, LARGE = 1000, 8000


def cpu_seconds(make: Callable[[int], str], size: int, runs: int) -> float:
    text = "---\n" + make(size) + "---\nbody"
    best = float("inf")
    for _ in range(runs):
        started = time.thread_time()
        parse_frontmatter(text)
        best = min(best, time.thread_time() - started)
    return best


def main() -> int:
    figures: dict[str, object] = {"benchmark": "frontmatter", "small_keys": SMALL, "large_keys": LARGE}
    worst = 0.0
    for name, make in SHAPES.items():
        small, large = cpu_seconds(make, SMALL, 5), cpu_seconds(make, LARGE, 3)
        growth = large / small if small else float("inf")
        worst = max(worst, growth)
        figures[name] = {"small_s": round(small, 4), "large_s": round(large, 4), "growth": round(growth, 1)}
    figures["ok"] = worst <= 12
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
