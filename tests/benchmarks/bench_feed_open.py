"""The Context feed's first figures after a real window opens a 100k-entry session (the file of
``bench_window.py``'s 100k case: ~127 MB, 96,000 messages in the leaf's context, ~22M tokens).

The window opens the session with the Context panel's X-ray tab showing and the figures are awaited until
the panel has the complete X-ray. Reported: the feed's worker time in its refresh jobs (``worker_cpu_s``:
the thread CPU time of ``ContextFeed._compute``, all refreshes from the attach until the complete X-ray;
``worker_wall_s``), the X-ray's total and message rows, how many partial X-rays went out, and on the GUI
thread meanwhile: ``worst_pass_cpu_ms`` (GUI-thread CPU of the longest event-loop pass, what load does not
inflate), ``worst_stall_ms`` (a 5 ms QTimer heartbeat, wall clock) and the longest piece over 50 ms (the
tests' stall guard), the feed's own GUI-thread CPU per X-ray it hands to the views (``views_cpu_ms``), and
the full garbage collections meanwhile (``full_collections``, ``worst_collection_ms``: whichever thread runs
one, the GUI thread waits for it). Runs ``cold`` (a fresh agent folder) and ``next_run`` (a new window and tokenizer over
the same agent folder: the count file of the first). ``PROFILE=1`` adds the worker's top functions (cProfile
of the worker thread). Prints one JSON line. Target: no GUI-thread pass over 50 ms while the feed counts.
"""

from __future__ import annotations

import cProfile
import gc
import io
import json
import os
import pstats
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from PySide6.QtWidgets import QApplication

from piwork.gui import compat
from piwork.gui.context.feed import ContextFeed
from piwork.gui.session_controller import SessionController
from tests.benchmarks.context_scenario import configure, make_home, open_window, wait_for
from tests.benchmarks.session_fixture import write_large_session
from tests.support import LoopbackServer
from tests.support.gui_stalls import StallMeter
from tests.support.heartbeat import CpuHeartbeat, Heartbeat

PROFILE = os.environ.get("PROFILE") == "1"


async def opening(controller: SessionController, path: Path) -> dict[str, Any]:
    feed = controller.context_feed
    jobs: list[tuple[float, float]] = []  # (thread CPU, wall) of each refresh job
    profiles: list[cProfile.Profile] = []
    original = ContextFeed._compute

    def compute(self: ContextFeed, *args: Any, **kwargs: Any) -> Any:
        cpu, wall = time.thread_time(), time.perf_counter()
        profile = cProfile.Profile() if PROFILE else None
        try:
            if profile is not None:
                profiles.append(profile)
                return profile.runcall(original, self, *args, **kwargs)
            return original(self, *args, **kwargs)
        finally:
            jobs.append((time.thread_time() - cpu, time.perf_counter() - wall))

    shown: list[Any] = []  # each X-ray the panel got (looked into once the figures are in: not meanwhile)

    def on_xray(xray: Any, *_rest: Any) -> None:
        shown.append(xray)

    applied: list[float] = []  # GUI-thread CPU of each X-ray handed to the views (partial or complete)
    gui_profile = cProfile.Profile() if PROFILE else None
    originals = {name: getattr(ContextFeed, name) for name in ("_apply", "_show_counting")}

    def timed(name: str) -> Any:
        def run(self: ContextFeed, *args: Any) -> Any:
            cpu = time.thread_time()
            try:
                if gui_profile is not None:
                    return gui_profile.runcall(originals[name], self, *args)
                return originals[name](self, *args)
            finally:
                applied.append((time.thread_time() - cpu) * 1000)

        return run

    for name in originals:
        setattr(ContextFeed, name, timed(name))
    ContextFeed._compute = compute  # type: ignore[method-assign]
    feed.xrayChanged.connect(on_xray)
    collections: list[tuple[int, float]] = []  # (generation, wall seconds) of each collection, any thread
    collecting: dict[int, float] = {}

    def on_gc(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            collecting[threading.get_ident()] = time.perf_counter()
        elif threading.get_ident() in collecting:
            collections.append(
                (info["generation"], time.perf_counter() - collecting.pop(threading.get_ident()))
            )

    heartbeat = Heartbeat()
    passes = CpuHeartbeat()
    pieces = StallMeter(QApplication.instance())  # type: ignore[arg-type]
    before = feed.refresh_count
    started = time.perf_counter()
    await controller.open_session(str(path))
    opened = time.perf_counter()
    gc.callbacks.append(on_gc)
    heartbeat.start()
    passes.start()
    pieces.start()
    await wait_for(lambda: feed.refresh_count > before and feed._job is None, 600)
    done = time.perf_counter()
    gc.callbacks.remove(on_gc)
    heartbeat.stop()
    passes.stop()
    pieces.stop()
    feed.xrayChanged.disconnect(on_xray)
    ContextFeed._compute = original  # type: ignore[method-assign]
    for name, method in originals.items():
        setattr(ContextFeed, name, method)
    result: dict[str, Any] = {
        "open_s": round(opened - started, 2),
        "complete_xray_after_open_s": round(done - opened, 2),
        "refresh_jobs": len(jobs),
        "worker_cpu_s": round(sum(j[0] for j in jobs), 2),
        "worker_wall_s": round(sum(j[1] for j in jobs), 2),
        "partial_xrays": sum(1 for x in shown if x.counting),
        "xray_tokens": controller.window.context_panel.xray_model.total,
        "xray_message_parts": sum(1 for p in shown[-1].parts if p.group is not None),
        "views_cpu_ms": [round(ms, 1) for ms in applied],
        "worst_pass_cpu_ms": round(passes.worst_ms, 1),
        "full_collections": sum(1 for g, _ in collections if g == 2),
        "worst_collection_ms": round(1000 * max((d for _, d in collections), default=0.0), 1),
        "worst_stall_ms": heartbeat.worst_stall_ms,
        "worst_piece": pieces.worst.describe() if pieces.worst is not None else "none over 50 ms",
    }
    if profiles:
        out = io.StringIO()
        stats = pstats.Stats(profiles[0], stream=out)
        for profile in profiles[1:]:
            stats.add(profile)
        stats.sort_stats("tottime").print_stats(15)
        result["profile"] = out.getvalue().splitlines()[-25:]
    if gui_profile is not None:
        out = io.StringIO()
        pstats.Stats(gui_profile, stream=out).sort_stats("cumtime").print_stats(25)
        result["gui_profile"] = out.getvalue().splitlines()[-35:]
    return result


async def scenario(app: QApplication) -> int:
    agent, project = make_home()
    path = Path(tempfile.gettempdir()) / "piwork-bench-feed-open.jsonl"
    if not path.exists():
        write_large_session(path, entries=100_000, branches=1, side_every=50)
    results: dict[str, Any] = {"benchmark": "feed_open", "file_mb": round(path.stat().st_size / 1e6, 1)}
    with LoopbackServer("loopback-large") as server:
        configure(agent, server)
        for run in ("cold", "next_run"):
            window, controller, notifications = open_window(agent, project)
            window.resize(1400, 900)
            window.show()
            window.show_context_panel(0)
            await controller.open_session(None)
            results[run] = await opening(controller, path)
            await controller.shutdown()
            notifications.close_all()
            window.close()
    results["pass_target_ms"] = 50
    results["passes_ok"] = all(results[k]["worst_pass_cpu_ms"] < 50 for k in ("cold", "next_run"))
    results["load"] = os.getloadavg()[0]
    print(json.dumps(results))
    app.quit()
    return 0


def main() -> None:
    app = QApplication(sys.argv[:1])
    compat.run_until_quit(app, lambda quit_event: scenario(app))


if __name__ == "__main__":
    main()
