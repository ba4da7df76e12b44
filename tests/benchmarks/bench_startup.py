"""Start-up, memory and quitting: whole ``-p`` processes against the reference (Pi 1.6), and the real window.

``-p`` cases, each run as a whole process by piwork and, when ``$PI_ORACLE_DIR`` (default /tmp/pi-oracle)
holds it, by the reference, alternated, same models.json naming a local OpenAI-compatible server run by
this script, compaction off (the setup of ``bench_big_content.py``):

- ``plain``: one plain answer, no session (cold start: interpreter, imports, tokenizer, one request);
- ``read_line``: the model asks to read line 500,000 of a 1,000,000-line file, then answers.

A warm-up run of each program comes first (its bytecode written, files in the page cache): piwork's keeps
what later runs reuse, as a user's earlier runs do — the record that the keyring holds no key for the
provider (its key is in models.json, so the keyring is not asked again), the compiled dataclass methods
beside the bytecode, the tokenizer's tables and long texts' counts in the agent folder.

Figures per case: median wall time, CPU time (user + system: what to trust on a loaded machine) and peak
memory (``ru_maxrss``) of ``RUNS`` runs each, and piwork over the reference as ``*_time_ratio`` and
``*_cpu_ratio``. ``-X importtime`` of one piwork ``plain`` run is summed per top-level
package (``plain_imports_ms``) to show where start-up goes (roughly: the tokenizer, built in a background
thread, imports its modules meanwhile, and importtime's nesting mixes the two threads').

The window (``WINDOW=1``, needs ``xvfb-run``, or a display): ``window_probe.py`` runs the real window
on an empty project (and with ``WINDOW_SESSION=FILE`` on that session): time from spawn to the first
painted frame, resident and anonymous memory once it settled (``SETTLE_S``), time from closing the window
to the process's end. Targets: first paint ≤ 0.6 s, ≤ 150 MB resident idle, quit < 0.5 s.

``BASE=DIR`` (a checkout of an earlier piwork, e.g. a ``git worktree``) runs that piwork too, for figures
before and after. Prints one JSON line.

    python tests/benchmarks/bench_startup.py
    BASE=/tmp/piwork-before WINDOW=1 python tests/benchmarks/bench_startup.py
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))  # run as a script from anywhere

MODEL = "bench-model"
RUNS = int(os.environ.get("RUNS", "5"))
SETTLE_S = float(os.environ.get("SETTLE_S", "5"))
BIG_LINES = 1_000_000
TARGET_LINE = 500_000


class _Server(ThreadingHTTPServer):
    daemon_threads = True


class _Handler(BaseHTTPRequestHandler):
    """Answers "ok"; a prompt asking for the big file's line gets a read call first."""

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)))
        messages = body.get("messages", [])
        wants_read = "line" in json.dumps(messages[-1:]) and messages[-1].get("role") == "user"
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.end_headers()
        base = {"id": "c1", "object": "chat.completion.chunk", "model": MODEL}
        if wants_read:
            call = {"index": 0, "id": "call_1", "type": "function",
                    "function": {"name": "read", "arguments": json.dumps(
                        {"path": "big.txt", "offset": TARGET_LINE, "limit": 1})}}  # fmt: skip
            chunks = [{**base, "choices": [{"index": 0, "delta": {"tool_calls": [call]}}]},
                      {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}]  # fmt: skip
        else:
            chunks = [{**base, "choices": [{"index": 0, "delta": {"content": "ok"}}]},
                      {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}]  # fmt: skip
        usage = {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12}
        chunks.append({**base, "choices": [], "usage": usage})
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            self.wfile.write(b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks))
            self.wfile.write(b"data: [DONE]\n\n")
        self.close_connection = True


def _reference_cli() -> list[str] | None:
    oracle = Path(os.environ.get("PI_ORACLE_DIR", "/tmp/pi-oracle"))
    node = oracle / "node22" / "package" / "bin" / "node"
    cli = (
        oracle / "pi" / "node_modules" / "@earendil-works" / "pi-coding-agent" / "dist" / "bundle" / "cli.js"
    )
    return [str(node), str(cli)] if node.exists() and cli.exists() else None


class _Program:
    def __init__(self, name: str, root: Path, url: str, checkout: Path | None) -> None:
        self.name, self.checkout = name, checkout
        self.agent = root / name / "agent"
        self.project = root / name / "project"
        self.agent.mkdir(parents=True)
        self.project.mkdir(parents=True)
        (self.agent / "settings.json").write_text(json.dumps({"compaction": {"enabled": False}}))
        models = [{"id": MODEL, "contextWindow": 200_000, "maxTokens": 1000}]
        provider = {"baseUrl": url, "api": "openai-completions", "apiKey": "bench-key", "models": models}
        (self.agent / "models.json").write_text(json.dumps({"providers": {"local": provider}}))
        with open(self.project / "big.txt", "w") as out:
            out.writelines(f"line {i} of the big file\n" for i in range(1, BIG_LINES + 1))

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
        env.pop("PYTHONDONTWRITEBYTECODE", None)  # a user's install has its bytecode compiled
        env.update(PI_CODING_AGENT_DIR=str(self.agent), HOME=str(self.agent.parent), PI_OFFLINE="1",
                   PI_SKIP_VERSION_CHECK="1")  # fmt: skip
        if self.checkout is not None:
            env["PYTHONPATH"] = str(self.checkout)
        return env

    def command(self, *args: str, python_flags: tuple[str, ...] = ()) -> list[str]:
        tail = ["-p", *args, "--no-session", "--provider", "local", "--model", MODEL]
        if self.checkout is None:
            reference = _reference_cli()
            assert reference is not None
            return [*reference, *tail]
        return [sys.executable, *python_flags, "-m", "piwork", *tail]

    def run(self, *args: str) -> dict[str, Any]:
        started = time.monotonic()
        with subprocess.Popen(
            self.command(*args),
            cwd=self.project,
            env=self.env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        ) as process:
            _, status, usage = os.wait4(process.pid, 0)
            out = process.stdout.read().decode(errors="replace") if process.stdout else ""
        elapsed = time.monotonic() - started
        return {"s": elapsed, "cpu_s": usage.ru_utime + usage.ru_stime, "rss_mb": usage.ru_maxrss / 1024,
                "exit": os.waitstatus_to_exitcode(status), "answer": out.strip()[-40:]}  # fmt: skip

    def import_profile(self) -> dict[str, float]:
        done = subprocess.run(
            self.command("hi", python_flags=("-X", "importtime")),
            cwd=self.project, env=self.env(), capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        per_package: dict[str, float] = {}
        for line in done.stderr.splitlines():
            found = re.match(r"import time:\s+(\d+) \|\s+\d+ \|\s*(\S+)", line)
            if found:
                package = found[2].split(".")[0]
                per_package[package] = per_package.get(package, 0.0) + int(found[1]) / 1000
        top = sorted(per_package.items(), key=lambda item: -item[1])[:12]
        return {"total": round(sum(per_package.values()), 1), **{k: round(v, 1) for k, v in top}}


def _p_cases(result: dict[str, Any], programs: list[_Program]) -> None:
    cases = {"plain": ("hi",), "read_line": (f"Read line {TARGET_LINE} of big.txt",)}
    for program in programs:  # warm-up: bytecode written, files in the page cache
        program.run("hi")
    for label, args in cases.items():
        runs: dict[str, list[dict[str, Any]]] = {p.name: [] for p in programs}
        for _ in range(RUNS):
            for program in programs:  # alternated, so load changes hit each alike
                runs[program.name].append(program.run(*args))
        for name, figures in runs.items():
            result[f"{label}_{name}"] = {
                "s": round(statistics.median(f["s"] for f in figures), 3),
                "cpu_s": round(statistics.median(f["cpu_s"] for f in figures), 3),
                "rss_mb": round(statistics.median(f["rss_mb"] for f in figures), 1),
                "exits": sorted({f["exit"] for f in figures}),
            }
        if "pi" in runs:
            for name in runs:
                if name != "pi":
                    ours, theirs = result[f"{label}_{name}"], result[f"{label}_pi"]
                    result[f"{label}_{name}_time_ratio"] = round(ours["s"] / theirs["s"], 2)
                    result[f"{label}_{name}_cpu_ratio"] = round(ours["cpu_s"] / theirs["cpu_s"], 2)


def _window(checkout: Path, root: Path, session: str | None) -> dict[str, Any]:
    """One real window: spawn to first paint, memory once settled, close to the process's end."""
    home = Path(tempfile.mkdtemp(dir=root))
    project = home / "project"
    project.mkdir()
    report = home / "report.json"
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.pop("QT_QPA_PLATFORM", None)  # the real platform of the display
    env.update(PYTHONPATH=str(checkout), HOME=str(home), PI_CODING_AGENT_DIR=str(home / "agent"),
               PIWORK_CONFIG_DIR=str(home / "config"), PI_OFFLINE="1")  # fmt: skip
    probe = Path(__file__).with_name("window_probe.py")
    args = ["--cwd", str(project), *(["--session", session] if session else [])]
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, str(probe), str(report), str(SETTLE_S), *args],
        env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    ended = time.monotonic()
    if not report.exists():
        return {"error": done.stderr.strip().splitlines()[-3:]}
    figures = json.loads(report.read_text())
    return {
        "first_paint_s": round(figures["first_paint"] - started, 3),
        "memory_mb": figures["settled_memory_mb"],
        "quit_s": round(ended - figures["close"], 3),
        "exit": done.returncode,
    }


def main() -> None:
    server = _Server(("127.0.0.1", 0), _Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    base = Path(os.environ["BASE"]).resolve() if os.environ.get("BASE") else None
    result: dict[str, Any] = {"bench": "startup", "reference": _reference_cli() is not None, "runs": RUNS}
    with tempfile.TemporaryDirectory(prefix="piwork-bench-startup-") as tmp_name:
        tmp = Path(tmp_name)
        programs = [_Program("piwork", tmp, url, ROOT)]
        if base is not None:
            programs.append(_Program("piwork_before", tmp, url, base))
        if result["reference"]:
            programs.append(_Program("pi", tmp, url, None))
        _p_cases(result, programs)
        result["plain_imports_ms"] = programs[0].import_profile()
        if base is not None:
            result["plain_imports_ms_before"] = programs[1].import_profile()
        if os.environ.get("WINDOW") and (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
            checkouts = {"piwork": ROOT, **({"piwork_before": base} if base is not None else {})}
            session = os.environ.get("WINDOW_SESSION")
            for name, checkout in checkouts.items():
                _window(checkout, tmp, None)  # warm-up: bytecode, fonts, page cache
                result[f"window_{name}"] = [_window(checkout, tmp, None) for _ in range(3)]
                if session:
                    result[f"window_session_{name}"] = _window(checkout, tmp, session)
        elif os.environ.get("WINDOW"):
            result["window"] = "no display: run under xvfb-run -a -s '-screen 0 1600x1000x24'"
    server.shutdown()
    result["load_average"] = round(os.getloadavg()[0], 2)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
