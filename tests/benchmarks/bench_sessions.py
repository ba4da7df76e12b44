"""Session engine figures on a ~127 MB, 100k-entry branched session. Prints one JSON line.

Each measurement runs in a fresh Python process so peak memory (``ru_maxrss``) belongs to it:
``open_s`` (open + index the file), ``context_s`` (build the context of the deepest leaf),
``open_plus_context_s``, ``peak_rss_mb`` and its ratio to the file size (``peak_over_file``; and
``engine_over_file`` without the interpreter and its imports), the same for a file whose
every text carries emoji (``emoji_*``: Python keeps such strings at 4 bytes per character),
``list_1000_s`` (listing 1,000 session files), and the same open + context figures (``short_*``) for a
100k-entry session of short messages with a branch point every 33 entries (many small lines: the
per-entry cost, not the bytes, dominates). When the reference implementation is installed
(``$PI_ORACLE_DIR``, default /tmp/pi-oracle), ``reference_process_s`` and ``piwork_process_s``
time the same open + context as whole processes (start-up included) and ``process_ratio`` divides
them (``short_process_ratio`` for the short-message session, ``side_process_ratio`` for a 100k-entry
session of ~1 KB texts on one main line with a side branch every 50 entries); ``inspect_*`` times
``piwork inspect FILE --leaf LEAF --json`` the same way (it also parses every line once, to list
each one Pi would skip); the processes alternate, so all see the same machine load, and each figure
has its CPU seconds beside it (``*_cpu_s``, ``*_cpu_ratio``: what to trust on a loaded machine) and
the peak resident memory of the whole process (``*_process_rss_mb``). Targets: open + context under 2 s, whole process no slower than the
reference (ratio at most 1.0 on both files), peak memory under 3x the file size. Figures come from
the fastest of ``RUNS`` runs (a busy machine only adds time), and CPU seconds are printed too.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.benchmarks.session_fixture import write_large_session, write_small_sessions  # noqa: E402

RUNS = 3

MEASURE = """
import json, resource, sys, time
from piwork.core.session.store import open_session
path, leaf = sys.argv[1], sys.argv[2]
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t0, c0 = time.perf_counter(), time.process_time()
session = open_session(path, writable=False)
t1, c1 = time.perf_counter(), time.process_time()
context = session.tree.build_context(leaf)
t2, c2 = time.perf_counter(), time.process_time()
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"open_s": t1 - t0, "context_s": t2 - t1, "open_cpu_s": c1 - c0, "context_cpu_s": c2 - c1,
                  "messages": len(context.messages), "peak_rss_mb": peak / 1024,
                  "base_rss_mb": base / 1024}))
"""

LIST = """
import json, sys, time
from piwork.core.session.listing import list_all_sessions
t0 = time.perf_counter()
infos = list_all_sessions(agent_dir=sys.argv[1])
print(json.dumps({"list_s": time.perf_counter() - t0, "count": len(infos)}))
"""

PI_SCRIPT = """
const sm = await import(process.argv[2] + "/core/session-manager.js");
const s = sm.SessionManager.open(process.argv[3]);
const ctx = sm.buildSessionContext(s.getEntries(), process.argv[4]);
console.log(ctx.messages.length);
"""


def _python(code: str, *args: str) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, check=True, cwd=ROOT
    )
    result: dict[str, Any] = json.loads(out.stdout)
    return result


def _measure(path: Path, leaf: str) -> dict[str, Any]:
    """The fastest of ``RUNS`` runs (open + context)."""
    runs = [_python(MEASURE, str(path), leaf) for _ in range(RUNS)]
    return min(runs, key=lambda run: run["open_s"] + run["context_s"])


def _timed(command: list[str], **kwargs: Any) -> tuple[float, float, float]:
    """Wall and CPU seconds (user + system) and peak resident MB of one whole process."""
    t0 = time.perf_counter()
    with subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, **kwargs) as process:
        _, status, usage = os.wait4(process.pid, 0)
        if status != 0:
            errors = process.stderr.read().decode(errors="replace") if process.stderr else ""
            raise RuntimeError(f"{command[:3]} failed: {errors[-300:]}")
    return time.perf_counter() - t0, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def _reference(path: Path, leaf: str, tmp: Path, prefix: str = "") -> dict[str, Any] | None:
    oracle = Path(os.environ.get("PI_ORACLE_DIR", "/tmp/pi-oracle"))
    node = oracle / "node22" / "package" / "bin" / "node"
    dist = oracle / "pi" / "node_modules" / "@earendil-works" / "pi-coding-agent" / "dist"
    if not node.exists() or not dist.exists():
        return None
    script = tmp / "pi_open.mjs"
    script.write_text(PI_SCRIPT, encoding="utf-8")
    env = {**os.environ, "PI_CODING_AGENT_DIR": str(tmp / "pi-agent")}
    commands = {
        "reference": ([str(node), str(script), str(dist), str(path), leaf], env),
        "piwork": ([sys.executable, "-c", MEASURE, str(path), leaf], None),
        "inspect": ([sys.executable, "-m", "piwork", "inspect", str(path), "--leaf", leaf, "--json"], None),
    }
    times: dict[str, list[tuple[float, float, float]]] = {name: [] for name in commands}
    for _ in range(RUNS):  # alternate, so all see the same machine load
        for name, (command, command_env) in commands.items():
            times[name].append(_timed(command, env=command_env, cwd=ROOT))
    out: dict[str, Any] = {}
    for name, runs in times.items():
        out[f"{prefix}{name}_process_s"] = round(min(wall for wall, _, _ in runs), 3)
        out[f"{prefix}{name}_process_cpu_s"] = round(min(cpu for _, cpu, _ in runs), 3)
        out[f"{prefix}{name}_process_rss_mb"] = round(min(rss for _, _, rss in runs), 1)
    for name, label in (("piwork", "process"), ("inspect", "inspect")):
        for unit in ("", "_cpu"):
            ours, theirs = out[f"{prefix}{name}_process{unit}_s"], out[f"{prefix}reference_process{unit}_s"]
            out[f"{prefix}{label}{unit}_ratio"] = round(ours / theirs, 2)
    return out


def _figures(prefix: str, measured: dict[str, Any], size_mb: float) -> dict[str, Any]:
    return {
        f"{prefix}open_s": round(measured["open_s"], 3),
        f"{prefix}context_s": round(measured["context_s"], 3),
        f"{prefix}open_plus_context_s": round(measured["open_s"] + measured["context_s"], 3),
        f"{prefix}open_plus_context_cpu_s": round(measured["open_cpu_s"] + measured["context_cpu_s"], 3),
        f"{prefix}context_messages": measured["messages"],
        f"{prefix}peak_rss_mb": round(measured["peak_rss_mb"], 1),
        f"{prefix}peak_over_file": round(measured["peak_rss_mb"] * 1.048576 / size_mb, 2),
        f"{prefix}engine_over_file": round(
            (measured["peak_rss_mb"] - measured["base_rss_mb"]) * 1.048576 / size_mb, 2
        ),
    }


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="piwork-bench-") as tmp_name:
        tmp = Path(tmp_name)
        big = tmp / "big.jsonl"
        t0 = time.perf_counter()
        facts = write_large_session(big)
        generate_s = time.perf_counter() - t0
        size_mb = big.stat().st_size / 1e6
        result: dict[str, Any] = {
            "bench": "sessions",
            "file_mb": round(size_mb, 1),
            "entries": facts["entries"],
            "deepest_path": facts["deepest_depth"],
        }
        result.update(_figures("", _measure(big, facts["deepest_leaf"]), size_mb))
        reference = _reference(big, facts["deepest_leaf"], tmp)
        if reference is not None:
            result.update(reference)
        short = tmp / "short.jsonl"
        short_facts = write_large_session(short, body_chars=40, branches=3000)
        short_mb = short.stat().st_size / 1e6
        result.update(short_file_mb=round(short_mb, 1), short_deepest_path=short_facts["deepest_depth"])
        result.update(_figures("short_", _measure(short, short_facts["deepest_leaf"]), short_mb))
        short_reference = _reference(short, short_facts["deepest_leaf"], tmp, "short_")
        if short_reference is not None:
            result.update(short_reference)
        short.unlink()
        side = tmp / "side.jsonl"  # one main line with a two-entry side branch every 50 entries
        side_facts = write_large_session(side, branches=1, side_every=50)
        side_mb = side.stat().st_size / 1e6
        result.update(side_file_mb=round(side_mb, 1), side_deepest_path=side_facts["deepest_depth"])
        result.update(_figures("side_", _measure(side, side_facts["deepest_leaf"]), side_mb))
        side_reference = _reference(side, side_facts["deepest_leaf"], tmp, "side_")
        if side_reference is not None:
            result.update(side_reference)
        side.unlink()
        wide = tmp / "emoji.jsonl"
        wide_facts = write_large_session(wide, wide_every=1)
        wide_mb = wide.stat().st_size / 1e6
        result.update(_figures("emoji_", _measure(wide, wide_facts["deepest_leaf"]), wide_mb))
        agent = tmp / "agent"
        write_small_sessions(agent / "sessions" / "--home-user-project--", 1000)
        listed = min((_python(LIST, str(agent)) for _ in range(RUNS)), key=lambda run: run["list_s"])
        result.update(
            list_1000_s=round(listed["list_s"], 3),
            listed=listed["count"],
            generate_s=round(generate_s, 1),
            load_average=round(os.getloadavg()[0], 2),
        )
        print(json.dumps(result))


if __name__ == "__main__":
    main()
