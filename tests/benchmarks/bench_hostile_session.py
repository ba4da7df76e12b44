"""Opening a 1,000,000-line session, clean and with one hostile line in every 1,000. Prints one JSON line.

The hostile lines are the kinds a corrupt or foreign file holds: text that is not JSON, ``{}``, a
message that is ``null``, ids that are not strings, values nested 100,000 deep, lone surrogates. Each
measurement runs in a fresh Python process (peak memory ``ru_maxrss`` belongs to it): ``open_s``
(read + index), ``context_s`` (the leaf's context), ``peak_rss_mb``, and how many problems were
reported. When the reference implementation is installed (``$PI_ORACLE_DIR``, default
/tmp/pi-oracle; this script never installs it) the same open + context runs there as a whole process,
for the clean file and the hostile one (``reference_hostile_ok`` says whether it got through), and
piwork's too: ``*_process_s`` and ``*_peak_rss_mb`` of each whole process, and their ratios
(``<label>_process_ratio``, ``<label>_rss_ratio``: piwork over the reference).
Targets: the hostile file opens about as fast as the clean one, nothing raises, and on the clean
file the whole process takes at most 1.5x the reference's time and peak memory.
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
LINES = 1_000_000
HOSTILE_EVERY = 1_000

MEASURE = """
import json, resource, sys, time
from piwork.core.session.store import open_session
path = sys.argv[1]
t0 = time.perf_counter()
session = open_session(path, writable=False)
t1 = time.perf_counter()
context = session.tree.build_context()
t2 = time.perf_counter()
print(json.dumps({"open_s": t1 - t0, "context_s": t2 - t1, "messages": len(context.messages),
                  "problems": len(session.tree.diagnostics),
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""

PI_SCRIPT = """
const sm = await import(process.argv[2] + "/core/session-manager.js");
const s = sm.SessionManager.open(process.argv[3]);
const ctx = sm.buildSessionContext(s.getEntries());
console.log(ctx.messages.length);
"""

HOSTILE = [
    "not json at all",
    "{}",
    '{"type":"message","id":"{id}","parentId":"{parent}","message":null}',
    '{"type":"message","id":5,"parentId":"{parent}","message":{"role":"user","content":"x"}}',
    "[" * 100_000 + "]" * 100_000,
    '{"type":"message","id":"{id}","parentId":"{parent}","message":{"role":"user","content":"\\ud800"}}',
    '{"type":"message","id":"{id}","parentId":"{parent}","message":{"role":"assistant","content":{"a":1}}}',
]


def write_session(path: Path, hostile: bool) -> None:
    header = {"type": "session", "version": 3, "id": "0193e5b2-7c1d-7a4e-9f00-1234567890ab",
              "timestamp": "2024-12-03T14:00:00.000Z", "cwd": "/home/user/project"}  # fmt: skip
    parent = None
    with open(path, "w", encoding="utf-8") as out:
        out.write(json.dumps(header) + "\n")
        for n in range(1, LINES):
            entry_id = f"{n:08x}"
            if hostile and n % HOSTILE_EVERY == 0:
                kind = HOSTILE[(n // HOSTILE_EVERY) % len(HOSTILE)]
                out.write(kind.replace("{id}", entry_id).replace("{parent}", str(parent)) + "\n")
                if '"id":"{id}"' in kind:
                    parent = entry_id
                continue
            role = "user" if n % 2 else "assistant"
            content = f'"line {n}"' if role == "user" else f'[{{"type":"text","text":"answer {n}"}}]'
            out.write(
                f'{{"type":"message","id":"{entry_id}","parentId":{json.dumps(parent)},'
                f'"timestamp":"2024-12-03T14:00:01.000Z","message":{{"role":"{role}","content":{content},'
                f'"timestamp":{1733234401000 + n}}}}}\n'
            )
            parent = entry_id


def measure(path: Path) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-c", MEASURE, str(path)], capture_output=True, text=True, cwd=ROOT, check=False
    )
    if done.returncode != 0:
        return {"failed": done.stderr.strip().splitlines()[-1:] or ["?"]}
    result: dict[str, Any] = json.loads(done.stdout)
    return {k: round(v, 3) if isinstance(v, float) else v for k, v in result.items()}


def reference(path: Path, tmp: Path) -> dict[str, Any] | None:
    oracle = Path(os.environ.get("PI_ORACLE_DIR", "/tmp/pi-oracle"))
    node = oracle / "node22" / "package" / "bin" / "node"
    dist = oracle / "pi" / "node_modules" / "@earendil-works" / "pi-coding-agent" / "dist"
    if not node.exists() or not dist.exists():
        return None
    script = tmp / "pi_open.mjs"
    script.write_text(PI_SCRIPT, encoding="utf-8")
    env = {**os.environ, "PI_CODING_AGENT_DIR": str(tmp / "pi-agent")}
    return whole_process([str(node), str(script), str(dist), str(path)], env=env)


def whole_process(command: list[str], **options: Any) -> dict[str, Any]:
    """Wall time, success and peak memory of one process (its own ``ru_maxrss``, from ``wait4``)."""
    started = time.perf_counter()
    with subprocess.Popen(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, **options
    ) as process:
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
    elapsed = round(time.perf_counter() - started, 3)
    return {
        "process_s": elapsed,
        "ok": process.returncode == 0,
        "peak_rss_mb": round(usage.ru_maxrss / 1024, 1),
    }


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="piwork-bench-hostile-") as name:
        tmp = Path(name)
        result: dict[str, Any] = {"bench": "hostile_session", "lines": LINES, "hostile_every": HOSTILE_EVERY}
        for label, hostile in (("clean", False), ("hostile", True)):
            path = tmp / f"{label}.jsonl"
            write_session(path, hostile)
            result[f"{label}_file_mb"] = round(path.stat().st_size / 1e6, 1)
            result[label] = measure(path)
            ref = reference(path, tmp)
            if ref is not None:
                own = whole_process([sys.executable, "-c", MEASURE, str(path)], cwd=ROOT)
                for who, figures in (("reference", ref), ("piwork", own)):
                    result[f"{who}_{label}_process_s"] = figures["process_s"]
                    result[f"{who}_{label}_peak_rss_mb"] = figures["peak_rss_mb"]
                result[f"reference_{label}_ok"] = ref["ok"]
                result[f"{label}_process_ratio"] = round(own["process_s"] / ref["process_s"], 2)
                result[f"{label}_rss_ratio"] = round(own["peak_rss_mb"] / ref["peak_rss_mb"], 2)
            path.unlink()
        result["load_average"] = round(os.getloadavg()[0], 2)
        print(json.dumps(result))


if __name__ == "__main__":
    main()
