"""The context governor and the request X-ray on a long transcript (no model calls).

Input: 2,000 agent messages of about 200K tokens in all (a user prompt, then ~1,000 tool rounds of
``read``/``bash`` calls with ~1,100-character results, a user message every 50 rounds) on a model with a
1M window, so the pressure trigger holds on every call (the governor's heaviest path). Figures:

- ``governor_first_call_ms``: the first decision (every message estimated once, chars/4);
- ``first_decision_2100``: the first decision of a new governor on the 2,100-message list the later calls
  end with, three ways (each the median of a few runs, wall and CPU ms): ``cold`` (counting and scanning
  everything in that call), ``counted`` (the counts made ahead, as the session's count-ahead step makes
  them in a worker thread) and ``on_event_loop`` (what the session's decision costs on its event loop
  once the count-ahead step also scanned the list by a preview in the worker, ``prepare`` being that
  step's own cost; target < 20 ms);
- ``governor_call_ms_median`` / ``_max``: each later call after a new tool round is appended
  (steady state; target < 20 ms). The governor folds in only the appended messages (an incremental
  scan: groups, counts, last positions of each path, shape, digest and command), so a call costs about
  the sticky elisions plus the new round, not the transcript; ``governor_call_cpu_ms_*`` are the same
  calls in CPU time (steadier than wall time on a shared machine);
- the X-ray of a session opened for the first time, as the window meets it (cl100k_base, texts never
  counted before): ``xray_first_ms`` is the X-ray of what is counted so far (the system prompt and the
  tool schemas; every message still marked as counting: ``xray_first_counting_parts``), which the panel
  shows at once (target < 100 ms); ``precount_ms`` is the count of every message that follows, off the
  GUI thread (bound by the tokenizer, about a microsecond per token, ~345K tokens here); and
  ``xray_after_precount_ms`` the complete X-ray once it is done (target < 100 ms). The window shows the
  first one after at most ``FIRST_SHOW_S`` (40 ms) of counting, the complete one when the count ends
  (``bench_xray_open.py`` measures it in a real window);
- ``xray_cold_ms``: the X-ray counting everything itself in one go (the pre-count and the X-ray in one
  call; tokenizer-bound, no target; tiktoken's threaded batch API was slower, measured on two shared
  cores);
- ``xray_remembered_ms``: the first X-ray of the next run (a new tokenizer and estimator, as when a
  session is reopened or ``piwork context`` runs after it): long texts' counts come from the count file
  the cold X-ray wrote (``<agentDir>/piwork/token-counts/``), so only hashing is left (target met);
  ``count_file_load_ms`` is reading that file, which happens with the tokenizer load in an executor
  (wall time: it includes building the encoding when this process had not yet);
- ``xray_warm_ms``: the X-ray again with the per-message counts cached (the steady state: every
  message is counted once, when it first reaches a request);
- ``xray_cold_chars4_ms``: the X-ray with nothing cached and the chars/4 estimate (what a view can
  show at once while the exact count runs);
- ``index_build_s``: the context index of a 20,000-file repository (Python, TypeScript, Go and Rust
  sources of ~1.5 KB in 400 folders, listed by the .gitignore-aware walk) built from nothing (target
  < 10 s); ``index_refresh_ms``: brought up to date after one file was edited (target < 200 ms: only
  that file is read again, the others are checked by size and modification time); ``*_cpu_*`` the same
  in process CPU time (user and system: each check is a ``stat`` call), steadier on a shared machine.

Prints one JSON line.
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from piwork.core.context.budget import GovernorSettings
from piwork.core.context.estimate import TokenEstimator
from piwork.core.context.governor import Governor, RequestShape
from piwork.core.context.index_builder import build_index, project_files, update_index
from piwork.core.context.xray import xray
from piwork.core.llm.tokens import Tokenizers
from piwork.core.llm.types import Model, ToolSpec
from tests.support.long_session import tool_round
from tests.support.long_session import tool_transcript as transcript

MODEL = Model("bench", "bench", "anthropic-messages", "bench", "http://127.0.0.1:9", context_window=1_000_000)
TOOLS = [
    ToolSpec("read", "Read a file", {"type": "object", "properties": {"path": {"type": "string"}}}),
    ToolSpec("bash", "Run a command", {"type": "object", "properties": {"command": {"type": "string"}}}),
]
SYSTEM = "You are a coding agent.\n" * 200


INDEX_FILES = 20_000
SOURCES = {
    ".py": '"""Module {i}: orders and payments."""\n\n'
    + "def handler_{i}_{n}(order):\n    return order\n\n" * 1,
    ".ts": "/** Component {i}. */\nexport function view_{i}_{n}(props: Props) {{ return props; }}\n",
    ".go": "// Package p{i} does things.\npackage p\n\nfunc Run{i}_{n}() error {{ return nil }}\n",
    ".rs": "//! Crate part {i}.\npub fn run_{i}_{n}() {{}}\npub struct Part{i}_{n};\n",
}


def index_figures() -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        kinds = list(SOURCES.items())
        for i in range(INDEX_FILES):
            ext, template = kinds[i % len(kinds)]
            folder = root / f"pkg{i % 400:03d}"
            folder.mkdir(exist_ok=True)
            body = "".join(template.format(i=i, n=n) for n in range(12))
            (folder / f"file_{i:05d}{ext}").write_text(body)
        start, cpu = time.perf_counter(), time.process_time()
        listed = project_files(str(root), limit=INDEX_FILES + 1)
        index = build_index(str(root), listed)
        build_s, build_cpu_s = time.perf_counter() - start, time.process_time() - cpu
        edited = root / "pkg007" / "file_00007.rs"
        edited.write_text(edited.read_text() + "pub fn added() {}\n")
        start, cpu = time.perf_counter(), time.process_time()
        update = update_index(str(root), index, listed)
        refresh_ms = (time.perf_counter() - start) * 1000
        refresh_cpu_ms = (time.process_time() - cpu) * 1000  # system time of its stat calls included
        start, cpu = time.perf_counter(), time.process_time()
        update_index(str(root), index)  # listing the files again too
        relist_ms = (time.perf_counter() - start) * 1000
        relist_cpu_ms = (time.process_time() - cpu) * 1000
        return {
            "index_files": len(index.entries),
            "index_build_s": round(build_s, 2),
            "index_build_cpu_s": round(build_cpu_s, 2),
            "index_build_target_s": 10,
            "index_refresh_ms": round(refresh_ms, 1),
            "index_refresh_cpu_ms": round(refresh_cpu_ms, 1),
            "index_refresh_with_listing_ms": round(relist_ms, 1),
            "index_refresh_with_listing_cpu_ms": round(relist_cpu_ms, 1),
            "index_refresh_updated": update.updated,
            "index_refresh_target_ms": 200,
        }


def _timed(run: Any, repeat: int = 5) -> tuple[float, float]:
    """Median wall and CPU milliseconds of ``run()`` (each run sets itself up inside ``run``'s result)."""
    walls, cpus = [], []
    for _ in range(repeat):
        measured = run()
        walls.append(measured[0])
        cpus.append(measured[1])
    return round(statistics.median(walls), 2), round(statistics.median(cpus), 2)


def first_decisions(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """A new governor's first decision on ``messages``: cold, with the counts made ahead, and on the
    event loop after the count-ahead step (counts and a preview in a worker) ran."""
    shape = RequestShape(MODEL, SYSTEM, TOOLS)

    def clocked(run: Any) -> tuple[float, float]:
        start, cpu = time.perf_counter(), time.process_time()
        run()
        return (time.perf_counter() - start) * 1000, (time.process_time() - cpu) * 1000

    def cold() -> tuple[float, float]:
        governor = Governor(GovernorSettings(), TokenEstimator())
        return clocked(lambda: governor.decide(list(messages), shape))

    def counted() -> tuple[float, float]:
        governor = Governor(GovernorSettings(), TokenEstimator())
        governor.estimator.precount(messages)
        return clocked(lambda: governor.decide(list(messages), shape))

    prepare: list[tuple[float, float]] = []

    def on_event_loop() -> tuple[float, float]:
        governor = Governor(GovernorSettings(), TokenEstimator())
        request = list(messages)
        governor.estimator.precount(request)
        assert not governor.prepared(request)
        prepare.append(clocked(lambda: governor.preview(request, shape)))
        assert governor.prepared(request)
        return clocked(lambda: governor.decide(request, shape))

    loop = _timed(on_event_loop)
    return {
        "messages": len(messages),
        "cold_ms": _timed(cold),
        "counted_ms": _timed(counted),
        "on_event_loop_ms": loop,
        "prepare_ms": (
            round(statistics.median(p[0] for p in prepare), 2),
            round(statistics.median(p[1] for p in prepare), 2),
        ),
        "target_ms": 20,
        "figures": "(wall, cpu)",
    }


def main() -> None:
    messages = transcript(2_000)
    governor = Governor(GovernorSettings(), TokenEstimator())
    shape = RequestShape(MODEL, SYSTEM, TOOLS)
    start, cpu = time.perf_counter(), time.process_time()
    first = governor.decide(list(messages), shape)
    first_ms = (time.perf_counter() - start) * 1000
    first_cpu_ms = (time.process_time() - cpu) * 1000
    times = []
    cpu_times = []
    decisions: dict[str, int] = {}
    for n in range(50):
        messages += tool_round(100_000 + n, 10_000_000 + 10 * n)
        start, cpu = time.perf_counter(), time.process_time()
        outcome = governor.decide(list(messages), shape)
        times.append((time.perf_counter() - start) * 1000)
        cpu_times.append((time.process_time() - cpu) * 1000)
        kind = outcome.decision.decision if outcome.decision else "none"
        decisions[kind] = decisions.get(kind, 0) + 1
    first_2100 = first_decisions(messages)

    with tempfile.TemporaryDirectory() as tmp:  # a session opened for the first time, as the window does it
        tokenizers = Tokenizers(Path(tmp), env={})
        tokenizers.load()
        estimator = TokenEstimator(tokenizers.counter_for("claude-sonnet"))
        start = time.perf_counter()
        shown_first = xray(SYSTEM, TOOLS, messages, estimator, counted_only=True)
        first_xray_ms = (time.perf_counter() - start) * 1000
        start = time.perf_counter()
        estimator.precount(messages)
        precount_ms = (time.perf_counter() - start) * 1000
        start = time.perf_counter()
        after = xray(SYSTEM, TOOLS, messages, estimator, counted_only=True)
        after_ms = (time.perf_counter() - start) * 1000
        assert after.counting == 0

    with tempfile.TemporaryDirectory() as tmp:
        tokenizers = Tokenizers(Path(tmp), env={})
        tokenizers.load()
        counter = tokenizers.counter_for("claude-sonnet")
        estimator = TokenEstimator(counter)
        start = time.perf_counter()
        cold = xray(SYSTEM, TOOLS, messages, estimator)
        cold_ms = (time.perf_counter() - start) * 1000
        start = time.perf_counter()
        xray(SYSTEM, TOOLS, messages, estimator)
        warm_ms = (time.perf_counter() - start) * 1000
        # the next run (a reopened session, piwork context): the tokenizer reads the remembered counts
        again = Tokenizers(Path(tmp), env={})
        start = time.perf_counter()
        again.load()
        load_ms = (time.perf_counter() - start) * 1000
        start = time.perf_counter()
        remembered = xray(SYSTEM, TOOLS, messages, TokenEstimator(again.counter_for("claude-sonnet")))
        remembered_ms = (time.perf_counter() - start) * 1000
        assert remembered.total == cold.total == after.total
    start = time.perf_counter()
    xray(SYSTEM, TOOLS, messages, TokenEstimator())
    chars4_ms = (time.perf_counter() - start) * 1000

    print(
        json.dumps(
            {
                "bench": "context",
                "messages": len(messages),
                "transcript_tokens_chars4": first.transcript_tokens,
                "first_decision": first.decision.decision if first.decision else None,
                "first_savings": first.decision.savings if first.decision else 0,
                "governor_first_call_ms": round(first_ms, 2),
                "governor_first_call_cpu_ms": round(first_cpu_ms, 2),
                "governor_call_ms_median": round(statistics.median(times), 2),
                "governor_call_ms_max": round(max(times), 2),
                "governor_call_cpu_ms_median": round(statistics.median(cpu_times), 2),
                "governor_call_cpu_ms_max": round(max(cpu_times), 2),
                "governor_target_ms": 20,
                "first_decision_2100": first_2100,
                "later_decisions": decisions,
                "xray_parts": len(cold.parts),
                "xray_total_tokens": cold.total,
                "xray_tokenizer": cold.tokenizer,
                "xray_first_ms": round(first_xray_ms, 2),
                "xray_first_counting_parts": shown_first.counting,
                "precount_ms": round(precount_ms, 2),
                "xray_after_precount_ms": round(after_ms, 2),
                "xray_cold_ms": round(cold_ms, 2),
                "xray_remembered_ms": round(remembered_ms, 2),
                "count_file_load_ms": round(load_ms, 2),
                "xray_warm_ms": round(warm_ms, 2),
                "xray_cold_chars4_ms": round(chars4_ms, 2),
                "xray_target_ms": 100,
                **index_figures(),
            }
        )
    )


if __name__ == "__main__":
    main()
