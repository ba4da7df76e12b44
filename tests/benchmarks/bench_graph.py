"""Branch graph on a 100,000-entry session: layout + first paint, scroll stalls, streaming appends.

Run: QT_QPA_PLATFORM=offscreen python tests/benchmarks/bench_graph.py
(prints one JSON line; targets: painted_s < 1.5, max_stall_ms < 30)

Figures: `open_s` (reading the file, not part of the graph's time), `layout_s` (the engine's lanes
alone), `painted_s` (from the opened session to the graph view painted around the leaf: layout,
folds, model and paint; `painted_cpu_s` is this process's CPU time for it), `max_stall_ms` and
`p99_stall_ms` (gaps between 5 ms timer ticks of the GUI thread while the graph is scrolled from top
to bottom in 200 page jumps, folds open so every row is there; `max_step_cpu_ms`/`median_step_cpu_ms`
are this process's CPU time per jump, which other programs on a busy machine do not inflate), `unfold_s` (turning folding off: rows
laid out again), `append_ms` (mean per entry streamed at the leaf while shown, inserted in place),
`append_folded_ms` (the same with long runs folded: the fold above the leaf grows in place),
`filter_s` (the outline's filter set to "only your messages": the graph laid out again and painted,
without an event loop: at once); with an asyncio loop as in the window, `filter_in_worker_s` (the filter set
back, laid out in a worker until shown) and `unfold_in_worker_s` (a fold opened as by a double-click),
each with `*_gui_worst_pass_ms` (the GUI thread's worst CPU time per event-loop pass meanwhile: the swap).

Many side branches: a second 100,000-entry session, one main line with a two-entry side branch every 50
entries (2,000 branches, as `bench_window.py` opens), whose graph is first shown with the loop running as
in the window: laid out in a worker. `sides_shown_s` (from showing the graph to its rows shown),
`sides_gui_worst_pass_ms` (the GUI thread's worst CPU time per event-loop pass meanwhile; target < 50:
it was the whole layout, seconds, before the worker did it), `sides_apply_ms` (the GUI thread's CPU time
to show the result), `sides_lanes`.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # run as a script from anywhere

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

from piwork.core.session import Fold
from piwork.core.session.graph_layout import GraphLayout
from piwork.core.session.store import open_session
from piwork.gui import compat
from piwork.gui.tree.graph_model import BranchGraphModel
from piwork.gui.tree.graph_view import BranchGraphView
from tests.benchmarks.session_fixture import write_large_session
from tests.support.heartbeat import CpuHeartbeat, Heartbeat

ENTRIES = 100_000
BRANCHES = 40
TARGET_PAINTED_S = 1.5
TARGET_STALL_MS = 30.0
TARGET_SIDES_PASS_MS = 50.0


def main() -> int:
    app = QApplication.instance() or QApplication(sys.argv)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "large.jsonl"
        write_large_session(path, entries=ENTRIES, branches=BRANCHES, turn_entries=21)  # long turns fold
        sides_path = Path(folder) / "sides.jsonl"
        write_large_session(sides_path, entries=ENTRIES, branches=1, side_every=50)
        t = time.perf_counter()
        session = open_session(path, writable=True)
        open_s = time.perf_counter() - t
        tree = session.tree

        t = time.perf_counter()
        layout = GraphLayout(tree)
        layout_s = time.perf_counter() - t
        lanes = layout.width
        del layout

        view = BranchGraphView()
        view.resize(900, 700)
        view.show()
        app.processEvents()
        started = time.perf_counter()
        cpu_started = time.process_time()
        view.set_tree(tree)
        view.list.viewport().repaint()
        app.processEvents()
        painted_s = time.perf_counter() - started
        painted_cpu_s = time.process_time() - cpu_started
        assert view.model is not None
        folded_rows = view.model.rowCount()

        t = time.perf_counter()
        view.fold_box.setChecked(False)
        app.processEvents()
        unfold_s = time.perf_counter() - t
        rows = view.model.rowCount()
        gaps, step_cpu = _scroll_and_measure_stalls(app, view)

        t = time.perf_counter()
        for turn in range(10):  # a user turn and its answer, as a run appends them
            tree.append_message({"role": "user", "content": f"next {turn}", "timestamp": turn})
            tree.append_message({"role": "assistant", "content": [{"type": "text", "text": "ok"}],
                                 "stopReason": "stop", "timestamp": turn})  # fmt: skip
            app.processEvents()
        append_ms = (time.perf_counter() - t) * 1000 / 20

        view.fold_box.setChecked(True)
        app.processEvents()
        t = time.perf_counter()
        for turn in range(10):
            tree.append_message({"role": "user", "content": f"again {turn}", "timestamp": turn})
            tree.append_message({"role": "assistant", "content": [{"type": "text", "text": "ok"}],
                                 "stopReason": "stop", "timestamp": turn})  # fmt: skip
            app.processEvents()
        append_folded_ms = (time.perf_counter() - t) * 1000 / 20

        t = time.perf_counter()
        view.set_filter("user-only")
        view.list.viewport().repaint()
        app.processEvents()
        filter_s = time.perf_counter() - t
        worker = _in_workers(app, view, sides_path)
        view.close()
        session.close()
    gaps.sort()
    max_stall = gaps[-1] if gaps else 0.0
    p99 = gaps[int(len(gaps) * 0.99)] if gaps else 0.0
    print(
        json.dumps(
            {
                "bench": "graph",
                "entries": ENTRIES,
                "rows": rows,
                "rows_folded": folded_rows,
                "lanes": lanes,
                "open_s": round(open_s, 3),
                "layout_s": round(layout_s, 3),
                "painted_s": round(painted_s, 3),
                "painted_cpu_s": round(painted_cpu_s, 3),
                "unfold_s": round(unfold_s, 3),
                "max_stall_ms": round(max_stall, 1),
                "p99_stall_ms": round(p99, 1),
                "max_step_cpu_ms": round(max(step_cpu), 1),
                "median_step_cpu_ms": round(sorted(step_cpu)[len(step_cpu) // 2], 1),
                "append_ms": round(append_ms, 2),
                "append_folded_ms": round(append_folded_ms, 2),
                "filter_s": round(filter_s, 3),
                **worker,
                "target_painted_s": TARGET_PAINTED_S,
                "target_sides_gui_worst_pass_ms": TARGET_SIDES_PASS_MS,
                "target_stall_ms": TARGET_STALL_MS,
                "ok": painted_s < TARGET_PAINTED_S
                and max_stall < TARGET_STALL_MS
                and worker["sides_gui_worst_pass_ms"] < TARGET_SIDES_PASS_MS,
                "ok_cpu": painted_cpu_s < TARGET_PAINTED_S and max(step_cpu) < TARGET_STALL_MS,
            }
        )
    )
    return 0


def _in_workers(app: QApplication, view: BranchGraphView, sides_path: Path) -> dict[str, float]:
    """With an asyncio loop (as in the window): a filter change and an opened fold laid out in workers,
    timed until shown, with the GUI thread's worst CPU time per event-loop pass meanwhile; then the graph
    of the session with many side branches first shown."""
    loop = compat.attach_loop(app)
    figures: dict[str, float] = {}
    model = view.model
    assert model is not None

    def open_fold() -> None:
        fold = next(item for item in model.rows.rows if isinstance(item, Fold))
        view.open_fold(fold)

    try:
        for name, change in (("filter", lambda: view.set_filter("default")), ("unfold", open_fold)):
            heartbeat = CpuHeartbeat()
            heartbeat.start()
            t = time.perf_counter()
            change()
            while view.laying_out:
                app.processEvents()
                time.sleep(0.002)
            app.processEvents()
            figures[f"{name}_in_worker_s"] = round(time.perf_counter() - t, 3)
            heartbeat.stop()
            figures[f"{name}_gui_worst_pass_ms"] = round(heartbeat.worst_ms, 1)
        view.clear()
        figures.update(_first_shown_in_a_worker(app, sides_path))
    finally:
        compat.detach_loop(loop, app)
    return figures


def _first_shown_in_a_worker(app: QApplication, path: Path) -> dict[str, float]:
    """The graph of a session with many side branches, given while hidden and then shown (as the tree
    panel's Graph tab is), laid out in a worker: timed until shown, the GUI thread's worst pass meanwhile."""
    session = open_session(path, writable=False)
    view = BranchGraphView()
    view.resize(420, 700)
    view.set_tree(session.tree)  # hidden: waits until shown
    applied: list[float] = []
    show_model = getattr(
        view, "_show_model", None
    )  # (a checkout that lays it out on the GUI thread has none)

    def timed(model: BranchGraphModel) -> None:
        assert show_model is not None
        cpu = time.thread_time()
        show_model(model)
        view.list.viewport().repaint()
        applied.append((time.thread_time() - cpu) * 1000)

    if show_model is not None:
        view._show_model = timed  # type: ignore[method-assign]
    heartbeat = CpuHeartbeat()
    heartbeat.start()
    ticking = time.perf_counter() + 0.05
    while time.perf_counter() < ticking:  # the heartbeat's first ticks, before the graph is shown
        app.processEvents()
        time.sleep(0.001)
    t = time.perf_counter()
    QTimer.singleShot(0, view.show)  # from an event, as a click on the tab: a pass the heartbeat measures
    app.processEvents()
    while view.laying_out:
        app.processEvents()
        time.sleep(0.002)
    app.processEvents()
    shown_s = time.perf_counter() - t
    heartbeat.stop()
    assert view.model is not None
    lanes = view.model.layout.width
    view.clear()
    view.close()
    session.close()
    return {
        "sides_shown_s": round(shown_s, 3),
        "sides_gui_worst_pass_ms": round(heartbeat.worst_ms, 1),
        "sides_apply_ms": round(sum(applied), 1),
        "sides_lanes": lanes,
    }


def _scroll_and_measure_stalls(app: QApplication, view: BranchGraphView) -> tuple[list[float], list[float]]:
    """Scroll from the top to the bottom in 200 jumps: gaps between timer ticks, CPU ms per jump."""
    step_cpu: list[float] = []
    heartbeat = Heartbeat()
    heartbeat.start()
    bar = view.list.verticalScrollBar()
    view.list.scrollToTop()
    steps = 200
    for step in range(steps + 1):
        cpu = time.process_time()
        bar.setValue(bar.maximum() * step // steps)
        view.list.viewport().repaint()
        app.processEvents()
        step_cpu.append((time.process_time() - cpu) * 1000)
    heartbeat.stop()
    return [float(gap) for gap in heartbeat.gaps], step_cpu


if __name__ == "__main__":
    sys.exit(main())
