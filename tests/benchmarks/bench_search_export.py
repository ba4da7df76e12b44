"""Session search over 1,000 sessions (~1 GB) and export of a 100k-entry session. Prints one JSON line.

Search: 1,000 branched sessions of ~1 MB each are written to a temp dir; 25 of them hold a rare word on
an abandoned branch. ``rare_first_s`` / ``rare_all_s``: time to the first session with hits and to the
end of the search for that word (files newest first, as the window searches); ``common_*`` the same for
a word in every line of every file (each matching line is parsed, 50 hits kept per session). The files
are read from the page cache (just written), as on a second search. Targets: first result < 0.5 s,
whole search < 3 s.

Export: a 100k-entry (~127 MB) session as an HTML page (``html_s``) and its deepest branch as a new
session file (``jsonl_s``). Target < 5 s each.
"""

from __future__ import annotations

import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from piwork.core.export.branch_file import export_branch_jsonl  # noqa: E402
from piwork.core.export.html_export import export_html  # noqa: E402
from piwork.core.session.search import newest_first, search_sessions  # noqa: E402
from tests.benchmarks.session_fixture import write_large_session  # noqa: E402

SESSIONS = 1000
ENTRIES_PER_SESSION = 1000
PLANTED = 25
RARE = "xylophone"


def _plant(path: Path, n: int) -> None:
    """Append an abandoned branch holding the rare word, then move the leaf back to the main chain."""
    lines = path.read_text(encoding="utf-8").splitlines()
    last = json.loads(lines[-1])
    base = {"type": "message", "timestamp": last["timestamp"]}
    side = {
        **base,
        "id": f"plant{n:04d}",
        "parentId": json.loads(lines[5])["id"],
        "message": {"role": "user", "content": f"try the {RARE} trick on run {n}", "timestamp": 1},
    }
    back = {
        **base,
        "id": f"back{n:04d}",
        "parentId": last["id"],
        "message": {"role": "user", "content": "carry on", "timestamp": 2},
    }
    with open(path, "a", encoding="utf-8") as out:
        out.write(json.dumps(side) + "\n" + json.dumps(back) + "\n")


def _search(files: list[Path], query: str) -> dict[str, float]:
    start = time.perf_counter()
    first = None
    sessions = hits = 0
    for result in search_sessions(newest_first(files), query):
        if first is None:
            first = time.perf_counter() - start
        sessions += 1
        hits += len(result.hits)
    return {
        "first_s": round(first or 0.0, 3),
        "all_s": round(time.perf_counter() - start, 3),
        "sessions": sessions,
        "hits": hits,
    }


def bench_search(folder: Path) -> dict[str, object]:
    t0 = time.perf_counter()
    files = []
    rng = random.Random(5)
    planted = set(rng.sample(range(SESSIONS), PLANTED))
    for n in range(SESSIONS):
        path = folder / f"s{n:04d}.jsonl"
        write_large_session(path, entries=ENTRIES_PER_SESSION, branches=2, seed=n)
        if n in planted:
            _plant(path, n)
        os.utime(path, (1_700_000_000 + n, 1_700_000_000 + n))
        files.append(path)
    size = sum(f.stat().st_size for f in files)
    generated = time.perf_counter() - t0
    rare = min((_search(files, RARE) for _ in range(3)), key=lambda r: r["all_s"])
    common = _search(files, "gamma")
    return {
        "sessions": SESSIONS,
        "size_mb": round(size / 1e6),
        "generate_s": round(generated, 1),
        **{f"rare_{k}": v for k, v in rare.items()},
        **{f"common_{k}": v for k, v in common.items()},
        "target": "first < 0.5 s, all < 3 s",
    }


def bench_export(folder: Path) -> dict[str, object]:
    path = folder / "big.jsonl"
    info = write_large_session(path, entries=100_000)
    t0 = time.perf_counter()
    page = export_html(path, folder / "big.html")
    t1 = time.perf_counter()
    branch = export_branch_jsonl(path, folder / "branch.jsonl", info["deepest_leaf"])
    t2 = time.perf_counter()
    return {
        "export_entries": 100_000,
        "session_mb": round(path.stat().st_size / 1e6),
        "html_s": round(t1 - t0, 2),
        "html_mb": round(page.stat().st_size / 1e6),
        "jsonl_s": round(t2 - t1, 2),
        "jsonl_entries": info["deepest_depth"],
        "branch_mb": round(branch.stat().st_size / 1e6),
        "export_target": "< 5 s",
    }


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="piwork-bench-search-") as tmp:
        figures = bench_search(Path(tmp))
    with tempfile.TemporaryDirectory(prefix="piwork-bench-export-") as tmp:
        figures.update(bench_export(Path(tmp)))
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
