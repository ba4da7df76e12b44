"""Session tree view on a 100,000-entry session: time until the tree is painted and responsive.

Run: python tests/benchmarks/bench_tree.py   (prints one JSON line; target painted_s < 2)

Figures: `load_s` (file read + display layout in a worker thread), `painted_s` (from the start of
opening until the view has painted its rows around the leaf; `painted_cpu_s` is the CPU time
this process spent on it, which a busy machine does not inflate), `max_stall_ms` (longest gap between
timer ticks of the GUI thread while it scrolls through the tree), `filter_rebuild_s` (switching the
filter mode re-lays out all rows, without an event loop: at once), `filter_in_worker_s`/`search_in_worker_s`
(with an asyncio loop as in the window: a filter change and a search laid out in worker threads, until
shown) with `*_gui_worst_pass_ms` (the GUI thread's worst CPU time per event-loop pass meanwhile: the
swap), `append_ms` (mean time per entry appended at the leaf while shown, events processed).
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # run as a script from anywhere

from PySide6.QtWidgets import QAbstractItemView, QApplication

from piwork.gui import compat
from piwork.gui.tree.loading import load_for_view
from piwork.gui.tree.tree_panel import SessionTreePanel
from tests.benchmarks.session_fixture import write_large_session
from tests.support.heartbeat import CpuHeartbeat, Heartbeat

ENTRIES = 100_000
TARGET_SECONDS = 2.0


def main() -> int:
    app = QApplication.instance() or QApplication(sys.argv)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "large.jsonl"
        write_large_session(path, entries=ENTRIES)
        panel = SessionTreePanel()
        panel.resize(900, 700)
        panel.show()
        app.processEvents()

        started = time.perf_counter()
        cpu_started = time.process_time()  # all threads of this process: robust on a busy machine
        with ThreadPoolExecutor(max_workers=1) as pool:
            future = pool.submit(load_for_view, path, "default", True)
            while not future.done():  # the GUI thread keeps serving events meanwhile
                app.processEvents()
                time.sleep(0.005)
            loaded = future.result()
        load_s = time.perf_counter() - started
        panel.set_session(loaded.session, None, loaded.display)
        panel.view.viewport().repaint()
        app.processEvents()
        painted_s = time.perf_counter() - started
        painted_cpu_s = time.process_time() - cpu_started

        stall = _scroll_and_measure_stalls(app, panel)

        t = time.perf_counter()
        panel.set_filter_mode("all")
        app.processEvents()
        filter_rebuild_s = time.perf_counter() - t

        worker = _in_workers(app, panel)

        tree = loaded.session.tree
        t = time.perf_counter()
        for turn in range(10):  # a user turn and its answer, as a run appends them
            tree.append_message({"role": "user", "content": f"next {turn}", "timestamp": turn})
            tree.append_message({"role": "assistant", "content": [{"type": "text", "text": "ok"}],
                                 "stopReason": "stop", "timestamp": turn})  # fmt: skip
            app.processEvents()
        append_ms = (time.perf_counter() - t) * 1000 / 20
        rows = len(panel.model.display) if panel.model is not None else 0
        panel.shutdown()
        panel.close()
        loaded.session.close()
    print(
        json.dumps(
            {
                "bench": "tree",
                "entries": ENTRIES,
                "rows_shown": rows,
                "load_s": round(load_s, 3),
                "painted_s": round(painted_s, 3),
                "painted_cpu_s": round(painted_cpu_s, 3),
                "max_stall_ms": round(stall, 1),
                "filter_rebuild_s": round(filter_rebuild_s, 3),
                **worker,
                "append_ms": round(append_ms, 2),
                "target_painted_s": TARGET_SECONDS,
                "ok": painted_s < TARGET_SECONDS,
            }
        )
    )
    return 0


def _in_workers(app: QApplication, panel: SessionTreePanel) -> dict[str, float]:
    """With an asyncio loop (as in the window): a filter change and a search laid out in workers, timed
    until shown, with the GUI thread's worst CPU time per event-loop pass meanwhile."""
    loop = compat.attach_loop(app)
    figures: dict[str, float] = {}
    done: list[bool] = []
    panel.laid_out.connect(lambda: done.append(True))
    try:
        for name, change in (
            ("filter", lambda: panel.set_filter_mode("default")),
            ("search", lambda: panel.search_field.setText("gamma delta")),
            ("", lambda: panel.search_field.setText("")),  # the search cleared again (not reported)
        ):
            done.clear()
            heartbeat = CpuHeartbeat()
            heartbeat.start()
            t = time.perf_counter()
            change()
            while not done:
                app.processEvents()
                time.sleep(0.002)
            heartbeat.stop()
            if name:
                figures[f"{name}_in_worker_s"] = round(time.perf_counter() - t, 3)
                figures[f"{name}_gui_worst_pass_ms"] = round(heartbeat.worst_ms, 1)
        panel.details.shutdown()
    finally:
        compat.detach_loop(loop, app)
    return figures


def _scroll_and_measure_stalls(app: QApplication, panel: SessionTreePanel) -> float:
    """Scroll from the top to the leaf in page steps, measuring the longest gap between timer ticks."""
    heartbeat = Heartbeat()
    heartbeat.start()
    view = panel.view
    model = panel.model
    assert model is not None
    view.scrollToTop()
    bar = view.verticalScrollBar()
    steps = 200
    for step in range(steps + 1):
        bar.setValue(bar.maximum() * step // steps)
        view.viewport().repaint()
        app.processEvents()
    view.scrollTo(model.landing_index(), QAbstractItemView.ScrollHint.PositionAtCenter)
    app.processEvents()
    heartbeat.stop()
    return float(max(heartbeat.gaps, default=0))


if __name__ == "__main__":
    sys.exit(main())
