"""Log viewer search over a 1 GiB full-output log (real log lines, written in tmp and deleted after).

Run: python tests/benchmarks/bench_log_search.py   (prints one JSON line)

Figures per query kind (`plain`: literal, case-sensitive; `plain_nocase`: literal, "Match case" off;
`regex`: an ASCII pattern), searched with the line index complete (its snapshot maps offsets to lines):
`<kind>_mb_s` (file size / time to the full count), `<kind>_first_match_s` (time until the batch
holding the first match arrives), `<kind>_total_s` and `<kind>_matches`. `index_s` is the time to build
the line index that the viewer builds anyway when a file opens; `unindexed_mb_s` is the plain search
without any index snapshot (it counts newlines itself). `view_open_s` and `view_search_s` time the
log viewer itself (shown, offscreen): opening until every line is indexed, and a plain query until its
full count is shown.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import threading
import time
from array import array
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # run as a script from anywhere

from PySide6.QtCore import QEventLoop
from PySide6.QtWidgets import QApplication

from piwork.gui.logs.full_output_view import FullOutputView
from piwork.gui.logs.line_index import LineIndex
from piwork.gui.logs.search import compile_search, search_file_lines

SIZE = 1 << 30
CHUNK = 1 << 22
RARE_EVERY = 37  # one chunk in this many holds the rare line


def write_log(path: Path) -> int:
    lines = [
        f"2026-11-29T12:{i % 60:02d}:{i % 59:02d}Z \x1b[32mINFO\x1b[0m worker-{i % 8} "
        f"GET /api/items/{i * 7919 % 100_000} status=200 in {i % 97}ms\n"
        for i in range(60_000)
    ]
    block = "".join(lines).encode()[:CHUNK]
    block = block[: block.rfind(b"\n") + 1]
    rare = block[:-200] + b"FATAL disk quota exceeded on /var/tmp\n"
    rare = rare + b"x" * (len(block) - len(rare) - 1) + b"\n"
    written = 0
    with open(path, "wb") as handle:
        index = 0
        while written < SIZE:
            data = rare if index % RARE_EVERY == RARE_EVERY // 2 else block
            handle.write(data)
            written += len(data)
            index += 1
    return written


def timed_search(
    path: str, size: int, text: str, use_regex: bool, case: bool, snapshot: array[int] | None
) -> dict[str, float]:
    query = compile_search(text, use_regex, case)
    started = time.perf_counter()
    first: list[float] = []

    def on_batch(lines: list[int], _done: int) -> None:
        if lines and not first:
            first.append(time.perf_counter() - started)

    found, _capped = search_file_lines(
        path,
        query,
        size,
        on_batch,
        threading.Event(),
        newlines_before=snapshot,
    )
    total = time.perf_counter() - started
    return {"total_s": total, "first_match_s": first[0] if first else -1.0, "matches": found}


def time_view(path: Path) -> dict[str, float]:
    view = FullOutputView()
    view.resize(900, 600)
    view.show()
    loop = QEventLoop()
    view.index_finished.connect(loop.quit)
    started = time.perf_counter()
    view.open_file(str(path))
    loop.exec()
    opened = time.perf_counter() - started
    loop = QEventLoop()
    view.search_finished.connect(loop.quit)
    started = time.perf_counter()
    view.search_field.setText("quota exceeded")
    loop.exec()
    searched = time.perf_counter() - started
    view.close_file()
    return {"view_open_s": opened, "view_search_s": searched}


def main() -> int:
    app = QApplication.instance() or QApplication(sys.argv)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "full-output.log"
        size = write_log(path)
        index = LineIndex(str(path))
        started = time.perf_counter()
        index.index_all()
        figures: dict[str, float] = {"size_mb": round(size / 1e6), "index_s": time.perf_counter() - started}
        snapshot = index.newline_counts()
        queries = {
            "plain": ("quota exceeded", False, True),
            "plain_nocase": ("QUOTA Exceeded", False, False),
            "regex": (r"FATAL \w+ quota", True, True),
        }
        for kind, (text, use_regex, case) in queries.items():
            result = timed_search(str(path), size, text, use_regex, case, snapshot)
            figures[f"{kind}_mb_s"] = size / 1e6 / result["total_s"]
            for name, value in result.items():
                figures[f"{kind}_{name}"] = value
        unindexed = timed_search(str(path), size, "quota exceeded", False, True, None)
        figures["unindexed_mb_s"] = size / 1e6 / unindexed["total_s"]
        index.close()
        figures.update(time_view(path))
        os.unlink(path)
    del app
    print(json.dumps({k: round(v, 3) if isinstance(v, float) else v for k, v in figures.items()}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
