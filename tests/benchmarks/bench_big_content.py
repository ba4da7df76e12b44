"""Big content through whole ``-p`` runs, piwork against the reference (Pi 1.6) when it is installed.

Each case runs ``piwork -p`` and, when ``$PI_ORACLE_DIR`` (default /tmp/pi-oracle) holds the reference,
``pi -p`` the same way: own agent folder, the same models.json naming a local OpenAI-compatible server
run by this script, compaction off. Per case and program: the whole process's wall time and peak memory
(``ru_maxrss`` from ``wait4``), CPU seconds (user + system: the figure to trust on a loaded machine, where
wall time mostly measures the other processes), and piwork over the reference as ``*_time_ratio`` /
``*_rss_ratio`` / ``*_cpu_ratio``.

- ``big_text``: first ``-p`` on a session holding one 50 MB user text (the reply is short);
- ``stream_40mb``: a 40 MB reply streamed in 4 KB deltas;
- ``stream_endless``: a server that streams text without end (2 GB, at the speed the client reads);
  piwork cuts the reply at its size limit; each program gets ``ENDLESS_TIMEOUT_S``;
- ``models_100k``: a models.json of 100,000 models, then a short reply (each program gets
  ``MODELS_TIMEOUT_S``: Pi 1.6 had not started after 600 s on a loaded machine);
- ``session_1m_lines``: ``-p`` continuing a 1,000,000-line session.

``REPEAT=N`` runs each case N times, the programs alternated, and reports the medians (each run's figures
under ``runs``): on a shared machine one run says little.

Target: each within 1.5x of the reference's time and memory. Prints one JSON line. Takes minutes.
"""

from __future__ import annotations

import contextlib
import json
import os
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

MODEL = "bench-model"
MB = 1024 * 1024
ENDLESS_BYTES = 2048 * MB
ENDLESS_TIMEOUT_S = 300.0
LONG_LINES = 1_000_000
MODELS_TIMEOUT_S = 180.0
REPEAT = max(1, int(os.environ.get("REPEAT", "1")))


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    reply_bytes = 0  # text to stream in the next replies (0: a short "ok")


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:  # model listing
        body = json.dumps({"data": [{"id": MODEL, "object": "model"}]}).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        remaining = length
        while remaining > 0:  # read (and drop) the request, however big
            remaining -= len(self.rfile.read(min(remaining, MB)))
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.end_headers()
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # the client stopped reading
            self._stream(self.server.reply_bytes)
        self.close_connection = True

    def _chunk(self, payload: dict[str, Any]) -> bytes:
        return b"data: " + json.dumps(payload).encode() + b"\n\n"

    def _stream(self, size: int) -> None:
        base = {"id": "c1", "object": "chat.completion.chunk", "model": MODEL}
        if size == 0:
            self.wfile.write(self._chunk({**base, "choices": [{"index": 0, "delta": {"content": "ok"}}]}))
        else:
            piece = ("lorem ipsum " * 342)[:4096]
            frame = self._chunk({**base, "choices": [{"index": 0, "delta": {"content": piece}}]})
            batch = frame * 64
            sent = 0
            while sent < size:
                self.wfile.write(batch)
                sent += 64 * len(piece)
        finish = {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
        usage = {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12}
        self.wfile.write(self._chunk(finish) + self._chunk({**base, "choices": [], "usage": usage}))
        self.wfile.write(b"data: [DONE]\n\n")


def _reference_cli() -> tuple[Path, Path] | None:
    oracle = Path(os.environ.get("PI_ORACLE_DIR", "/tmp/pi-oracle"))
    node = oracle / "node22" / "package" / "bin" / "node"
    cli = (
        oracle / "pi" / "node_modules" / "@earendil-works" / "pi-coding-agent" / "dist" / "bundle" / "cli.js"
    )
    return (node, cli) if node.exists() and cli.exists() else None


def _models(url: str, count: int = 1) -> dict[str, Any]:
    models = [{"id": MODEL, "contextWindow": 1_000_000_000, "maxTokens": 1000}]
    models += [{"id": f"extra-{i}", "contextWindow": 32768} for i in range(count - 1)]
    provider = {"baseUrl": url, "api": "openai-completions", "apiKey": "bench-key", "models": models}
    return {"providers": {"local": provider}}


class _Program:
    def __init__(self, name: str, root: Path, url: str) -> None:
        self.name = name
        self.agent = root / name / "agent"
        self.project = root / name / "project"
        self.agent.mkdir(parents=True)
        self.project.mkdir(parents=True)
        (self.agent / "settings.json").write_text(json.dumps({"compaction": {"enabled": False}}))
        self.models(url)

    def models(self, url: str, count: int = 1) -> None:
        (self.agent / "models.json").write_text(json.dumps(_models(url, count)))

    def command(self, *args: str) -> list[str]:
        if self.name == "pi":
            reference = _reference_cli()
            assert reference is not None
            return [str(reference[0]), str(reference[1]), *args]
        return [sys.executable, "-m", "piwork", *args]

    def run(self, *args: str, timeout: float = 600) -> dict[str, Any]:
        env = {
            **{k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")},
            "PI_CODING_AGENT_DIR": str(self.agent),
            "HOME": str(self.agent.parent),
            "PI_OFFLINE": "1",
            "PI_SKIP_VERSION_CHECK": "1",
            "PYTHONPATH": str(ROOT),
        }
        command = self.command("-p", *args, "--provider", "local", "--model", MODEL)
        started = time.perf_counter()
        with subprocess.Popen(
            command, cwd=self.project, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        ) as process:
            timer = threading.Timer(timeout, process.kill)
            timer.start()
            _, status, usage = os.wait4(process.pid, 0)
            timer.cancel()
            process.returncode = os.waitstatus_to_exitcode(status)
            errors = process.stderr.read().decode(errors="replace") if process.stderr else ""
        elapsed = time.perf_counter() - started
        return {
            "s": round(elapsed, 2),
            "cpu_s": round(usage.ru_utime + usage.ru_stime, 2),
            "rss_mb": round(usage.ru_maxrss / 1024, 1),
            "exit": process.returncode,
            "finished": elapsed < timeout,
            "stderr_tail": errors.strip().splitlines()[-1:] if process.returncode else [],
        }


def _big_text_session(path: Path, cwd: Path) -> None:
    header = {"type": "session", "version": 3, "id": "0193e5b2-7c1d-7a4e-9f00-1234567890ab",
              "timestamp": "2024-12-03T14:00:00.000Z", "cwd": str(cwd)}  # fmt: skip
    text = ("The quick brown fox jumps over the lazy dog. " * (50 * MB // 45 + 1))[: 50 * MB]
    user = {"type": "message", "id": "u1", "parentId": None, "timestamp": "2024-12-03T14:00:01.000Z",
            "message": {"role": "user", "content": text, "timestamp": 1733234401000}}  # fmt: skip
    reply = {"type": "message", "id": "a1", "parentId": "u1", "timestamp": "2024-12-03T14:00:02.000Z",
             "message": {"role": "assistant", "content": [{"type": "text", "text": "Read it."}],
                         "api": "openai-completions", "provider": "local", "model": MODEL,
                         "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2,
                                   "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0,
                                            "total": 0}},
                         "stopReason": "stop", "timestamp": 1733234402000}}  # fmt: skip
    with open(path, "w", encoding="utf-8") as out:
        for value in (header, user, reply):
            out.write(json.dumps(value, separators=(",", ":"), ensure_ascii=False) + "\n")


def _long_session(path: Path, cwd: Path) -> None:
    """A conversation of ``LONG_LINES`` lines (header included) in Pi's layout; every reply records its usage
    (the reference reads it from each reply when it continues a session)."""
    header = {"type": "session", "version": 3, "id": "0193e5b2-7c1d-7a4e-9f00-1234567890ab",
              "timestamp": "2024-12-03T14:00:00.000Z", "cwd": str(cwd)}  # fmt: skip
    usage = ('"usage":{"input":10,"output":2,"cacheRead":0,"cacheWrite":0,"totalTokens":12,'
             '"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}}')  # fmt: skip
    reply = f'"api":"openai-completions","provider":"local","model":"{MODEL}",{usage},"stopReason":"stop"'
    parent = "null"
    with open(path, "w", encoding="utf-8") as out:
        out.write(json.dumps(header) + "\n")
        for n in range(1, LONG_LINES):
            entry_id = f'"{n:08x}"'
            if n % 2:
                message = f'{{"role":"user","content":"line {n}","timestamp":{1733234401000 + n}}}'
            else:
                message = (f'{{"role":"assistant","content":[{{"type":"text","text":"answer {n}"}}],{reply},'
                           f'"timestamp":{1733234401000 + n}}}')  # fmt: skip
            out.write(f'{{"type":"message","id":{entry_id},"parentId":{parent},'
                      f'"timestamp":"2024-12-03T14:00:01.000Z","message":{message}}}\n')  # fmt: skip
            parent = entry_id


def _median(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """One run as it is; several as the median of each figure, with every run beside them."""
    if len(runs) == 1:
        return runs[0]
    figures = {key: round(statistics.median(run[key] for run in runs), 2) for key in ("s", "cpu_s", "rss_mb")}
    return {**figures, "exit": max(run["exit"] for run in runs), "runs": runs}


def main() -> None:
    only = set(sys.argv[1:])
    server = _Server(("127.0.0.1", 0), _Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    result: dict[str, Any] = {"bench": "big_content", "reference": _reference_cli() is not None}
    names = ["piwork", "pi"] if result["reference"] else ["piwork"]
    with tempfile.TemporaryDirectory(prefix="piwork-bench-big-") as tmp_name:
        tmp = Path(tmp_name)
        programs = {name: _Program(name, tmp, url) for name in names}

        def case(label: str, prepare: Any, *args: str, reply_bytes: int = 0, timeout: float = 600) -> None:
            if only and label not in only:
                return
            server.reply_bytes = reply_bytes
            runs: dict[str, list[dict[str, Any]]] = {name: [] for name in programs}
            for _ in range(REPEAT):
                for name, program in programs.items():
                    extra = prepare(program) if prepare is not None else []
                    runs[name].append(program.run(*args, *extra, timeout=timeout))
            for name in programs:
                result[f"{label}_{name}"] = _median(runs[name])
            if "pi" in programs:
                ours, theirs = result[f"{label}_piwork"], result[f"{label}_pi"]
                result[f"{label}_time_ratio"] = round(ours["s"] / theirs["s"], 2)
                result[f"{label}_rss_ratio"] = round(ours["rss_mb"] / theirs["rss_mb"], 2)
                result[f"{label}_cpu_ratio"] = round(ours["cpu_s"] / max(theirs["cpu_s"], 0.01), 2)

        def big_session(program: _Program) -> list[str]:
            path = program.project / "big.jsonl"
            _big_text_session(path, program.project)
            return ["--session", str(path)]

        def long_session(program: _Program) -> list[str]:
            path = program.project / "long.jsonl"
            _long_session(path, program.project)
            return ["--session", str(path)]

        def many_models(program: _Program) -> list[str]:
            program.models(url, 100_000)
            return []

        case("big_text", big_session, "hi")
        case("stream_40mb", None, "talk", "--no-session", reply_bytes=40 * MB)
        case(
            "stream_endless",
            None,
            "talk",
            "--no-session",
            reply_bytes=ENDLESS_BYTES,
            timeout=ENDLESS_TIMEOUT_S,
        )
        # the reference takes many minutes over this file: it is given MODELS_TIMEOUT_S
        case("models_100k", many_models, "hi", "--no-session", timeout=MODELS_TIMEOUT_S)
        for program in programs.values():
            program.models(url)
        case("session_1m_lines", long_session, "hi")
    server.shutdown()
    result["load_average"] = round(os.getloadavg()[0], 2)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
