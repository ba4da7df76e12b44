"""Head and tail truncation of 1 MB, 100 MB (many lines) and 100 MB (one line) inputs.

Targets: 100 MB in under 0.3 s each, extra memory at most 2x the input.
Prints one JSON line. Memory is measured with tracemalloc (peak Python allocations during the call).
CPython's UTF-8 encoder reserves 4 bytes per character of a 4-byte-per-character string before
shrinking, so for text with emoji the transient peak equals the str's own size.
"""

from __future__ import annotations

import json
import sys
import time
import tracemalloc
from collections.abc import Callable

from piwork.core.truncate import TruncationResult, truncate_head, truncate_tail

MB = 1024 * 1024


def _inputs() -> dict[str, str]:
    line = "the quick brown fox jumps over the lazy dög 🙂 0123456789\n"
    many = line * (100 * MB // len(line.encode()))
    return {
        "1MB_lines": line * (MB // len(line.encode())),
        "100MB_lines": many,
        "100MB_one_line": "x" * (100 * MB),
        "100MB_one_line_utf8": "é" * (50 * MB),
    }


def _measure(fn: Callable[[str], TruncationResult], text: str) -> dict[str, float]:
    # Time without tracing (best of three), then measure peak allocations in a traced run.
    elapsed = min(_timed(fn, text) for _ in range(3))
    tracemalloc.start()
    fn(text)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return {
        "seconds": round(elapsed, 4),
        # Relative to the input as Python holds it (a str of 1, 2 or 4 bytes per character)...
        "extra_memory_vs_str": round(peak / sys.getsizeof(text), 3),
        # ...and relative to its UTF-8 size.
        "extra_memory_vs_utf8": round(peak / len(text.encode("utf-8")), 3),
    }


def _timed(fn: Callable[[str], TruncationResult], text: str) -> float:
    start = time.perf_counter()
    fn(text)
    return time.perf_counter() - start


def main() -> None:
    figures: dict[str, object] = {"bench": "truncate"}
    for name, text in _inputs().items():
        figures[f"head_{name}"] = _measure(truncate_head, text)
        figures[f"tail_{name}"] = _measure(truncate_tail, text)
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
