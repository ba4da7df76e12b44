"""The real window under a display: start-up, memory and quitting, on an empty project and on a 100k-entry session.

Each run is a fresh process (``window_probe.py``) in a fresh home, alternated with the ``BASE=DIR`` checkout when
given (figures before and after under the same load). The homes get the tokenizer tables the checkout's warm-up
run kept, as a user's agent folder has them from the second start on. Cases:

- ``empty``: an empty project, no session: spawn to the first painted frame (``first_paint_s``, and the CPU
  seconds the process used until then, ``first_paint_cpu_s``), resident and anonymous memory once it settled
  (``SETTLE_S``), close to the process's end (``quit_s``);
- ``session``: a 100k-entry session (~114 MB: one main line with a side branch every 50 entries, ~1 KB texts,
  the fixture of ``bench_sessions.py``) opened at start: spawn to interactive (``interactive_s``: the first paint
  of the chat with the leaf's messages while the composer takes input; ``interactive_cpu_s``), resident memory
  once settled over the file's size (``rss_over_file``), and quitting.

Memory is noted twice: ``early_rss_mb`` ``SETTLE_S`` (default 4) after the first paint or the session's messages,
and ``rss_mb`` once the process has gone idle (workers too: a long session's rows, outline and X-ray are built
for a while after its messages show; ``settled_s``, from spawn; ``settled_idle`` 0 if it never went idle within
the probe's limit). The targets are for the idle figure.

Figures are medians of ``RUNS`` runs (default 5), with the load average at the start and end. Targets: first
paint ≤ 0.6 s, ≤ 150 MB idle, interactive ≤ 1.5 s, ≤ 2.5x the file resident, quit < 0.5 s. Without ``$DISPLAY``
it starts its own Xvfb (1600x1000) with openbox. ``CASES=empty`` or ``CASES=session`` runs one. Prints one JSON
line.

    python tests/benchmarks/bench_window.py
    BASE=/tmp/piwork-before RUNS=7 python tests/benchmarks/bench_window.py
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))  # run as a script from anywhere

from tests.benchmarks.session_fixture import write_large_session  # noqa: E402

RUNS = int(os.environ.get("RUNS", "5"))
SETTLE_S = float(os.environ.get("SETTLE_S", "4"))
PROBE = Path(__file__).with_name("window_probe.py")


@contextlib.contextmanager
def display() -> Iterator[dict[str, str]]:
    """The display to run on: the one given, or an Xvfb of our own with a window manager on it."""
    if os.environ.get("DISPLAY"):
        yield {}
        return
    read, write = os.pipe()
    xvfb = subprocess.Popen(
        ["Xvfb", "-displayfd", str(write), "-screen", "0", "1600x1000x24", "-nolisten", "tcp"],
        pass_fds=(write,), stderr=subprocess.DEVNULL,
    )  # fmt: skip
    os.close(write)
    with os.fdopen(read) as answer:
        number = answer.readline().strip()
    env = {"DISPLAY": f":{number}"}
    manager = None
    if shutil.which("openbox"):
        manager = subprocess.Popen(["openbox"], env={**os.environ, **env}, stderr=subprocess.DEVNULL)
        time.sleep(0.5)  # let it take the screen before the first window maps
    try:
        yield env
    finally:
        for process in (manager, xvfb):
            if process is not None:
                process.terminate()
                process.wait()


def run_window(checkout: Path, root: Path, screen: dict[str, str], session: Path | None) -> dict[str, Any]:
    home = Path(tempfile.mkdtemp(dir=root))
    project = home / "project"
    project.mkdir()
    # A fresh agent folder each run, but with the tokenizer tables an earlier run of this checkout kept,
    # as a user has them from the second start on (the first start parses the BPE file).
    tokenizer_cache = home / "agent" / "piwork" / "tiktoken-cache"
    kept_tables = root / f"tiktoken-cache-{abs(hash(checkout))}"
    if kept_tables.is_dir():
        shutil.copytree(kept_tables, tokenizer_cache)
    report = home / "report.json"
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # a user's install has its bytecode compiled
    env.pop("QT_QPA_PLATFORM", None)  # the real platform of the display
    env.update(screen)
    env.update(PYTHONPATH=str(checkout), HOME=str(home), PI_CODING_AGENT_DIR=str(home / "agent"),
               PIWORK_CONFIG_DIR=str(home / "config"), PI_OFFLINE="1",
               PYTHON_KEYRING_BACKEND="keyring.backends.fail.Keyring")  # fmt: skip
    args = ["--cwd", str(project), *(["--session", str(session)] if session else [])]
    started = time.monotonic()
    with subprocess.Popen(
        [sys.executable, str(PROBE), str(report), str(SETTLE_S), *args],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    ) as process:  # fmt: skip
        _, status, usage = os.wait4(process.pid, 0)
        errors = process.stderr.read() if process.stderr else ""
    ended = time.monotonic()
    figures = json.loads(report.read_text()) if report.exists() else {}
    if not kept_tables.is_dir() and tokenizer_cache.is_dir():
        shutil.copytree(tokenizer_cache, kept_tables)
    shutil.rmtree(home, ignore_errors=True)
    if "close" not in figures:
        return {"error": errors.strip().splitlines()[-3:]}
    out: dict[str, Any] = {
        "first_paint_s": figures["first_paint"] - started,
        "first_paint_cpu_s": figures["first_paint_cpu"],
        "rss_mb": figures["settled_memory_mb"]["VmRSS"],
        "anon_mb": figures["settled_memory_mb"]["Anonymous"],
        "early_rss_mb": figures["early_memory_mb"]["VmRSS"],
        "settled_s": figures["settled_at"] - started,
        "settled_idle": int(figures["settle_idle"]),
        "quit_s": ended - figures["close"],
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "exit": os.waitstatus_to_exitcode(status),
    }
    if "interactive" in figures:
        out["interactive_s"] = figures["interactive"] - started
        out["interactive_cpu_s"] = figures["interactive_cpu"]
    return out


def summary(runs: list[dict[str, Any]], file_mb: float | None) -> dict[str, Any]:
    good = [run for run in runs if "error" not in run]
    if not good:
        return {"errors": [run["error"] for run in runs]}
    out: dict[str, Any] = {"runs": len(good), "exits": sorted({run["exit"] for run in good})}
    for key in good[0]:
        if key != "exit":
            out[key] = round(statistics.median(run[key] for run in good), 3)
    if file_mb:
        out["file_mb"] = round(file_mb, 1)
        out["rss_over_file"] = round(out["rss_mb"] / file_mb, 2)
        out["early_rss_over_file"] = round(out["early_rss_mb"] / file_mb, 2)
    if len(good) < len(runs):
        out["errors"] = [run["error"] for run in runs if "error" in run]
    return out


def main() -> None:
    base = Path(os.environ["BASE"]).resolve() if os.environ.get("BASE") else None
    checkouts = {"piwork": ROOT, **({"before": base} if base is not None else {})}
    cases = os.environ.get("CASES", "empty,session").split(",")
    result: dict[str, Any] = {"bench": "window", "runs": RUNS, "load_start": os.getloadavg()}
    with tempfile.TemporaryDirectory(prefix="piwork-bench-window-") as tmp_name, display() as screen:
        tmp = Path(tmp_name)
        session: Path | None = None
        if "session" in cases:
            session = tmp / "big.jsonl"
            write_large_session(session, entries=100_000, branches=1, side_every=50)
        for case in cases:
            file = session if case == "session" else None
            file_mb = file.stat().st_size / 2**20 if file else None
            for checkout in checkouts.values():  # warm-up: bytecode written, files in the page cache
                run_window(checkout, tmp, screen, file)
            runs: dict[str, list[dict[str, Any]]] = {name: [] for name in checkouts}
            for _ in range(RUNS):
                for name, checkout in checkouts.items():  # alternated, so load changes hit each alike
                    runs[name].append(run_window(checkout, tmp, screen, file))
            for name in checkouts:
                result[f"{case}_{name}"] = summary(runs[name], file_mb)
    result["load_end"] = os.getloadavg()
    print(json.dumps(result))


if __name__ == "__main__":
    main()
