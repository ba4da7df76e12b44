"""The bash tool streaming 1 GiB of output (``yes | head -c 1G``).

Targets: at least 150 MB/s end to end, and under 64 MB of peak memory growth (resident set size,
sampled while the command runs and compared with the peak before it). The tool's own CPU time is
reported too (MB per CPU second), a figure that stays meaningful on a busy machine, where the
wall-clock rate also depends on how much CPU the producing command gets. Also checks that the kept
tail is exactly the last 2000 lines and that the full-output log holds every byte. Prints one JSON line.
"""

from __future__ import annotations

import asyncio
import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

from piwork.core.tools.base import ToolContext, ToolResult
from piwork.core.tools.bash import BashTool

GIB = 1024**3
MB = 1024 * 1024


def _rss() -> int:
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


async def _run(folder: Path) -> tuple[ToolResult, float, float, int, int]:
    updates = 0
    peak = _rss()

    def on_update(_partial: ToolResult) -> None:
        nonlocal updates, peak
        updates += 1
        peak = max(peak, _rss())

    baseline = _rss()
    cpu_before = os.times()
    ctx = ToolContext(cwd=str(folder), log_dir=folder / "logs")
    started = time.perf_counter()
    result = await BashTool().execute("bench", {"command": "yes | head -c 1G"}, ctx, on_update)
    elapsed = time.perf_counter() - started
    cpu_after = os.times()
    cpu = (cpu_after.user - cpu_before.user) + (cpu_after.system - cpu_before.system)
    return result, elapsed, cpu, max(peak, _rss()) - baseline, updates


def _log_is_exact(path: Path) -> bool:
    expected = b"y\n" * (8 * MB)
    size = 0
    with path.open("rb") as handle:
        while chunk := handle.read(len(expected)):
            if chunk != expected[: len(chunk)]:
                return False
            size += len(chunk)
    return size == GIB


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        maxrss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        result, elapsed, cpu, rss_growth, updates = asyncio.run(_run(folder))
        maxrss_after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        details = result.details or {}
        log = Path(details["fullOutputPath"])
        body = result.content[0]["text"]
        tail_ok = body == "\n".join(["y"] * 2000) + (
            f"\n\n[Showing lines 536868913-536870912 of 536870912. Full output: {log}]"
        )
        figures = {
            "bytes": GIB,
            "seconds": round(elapsed, 2),
            "mb_per_s": round(GIB / MB / elapsed, 1),
            "tool_cpu_seconds": round(cpu, 2),
            "mb_per_cpu_s": round(GIB / MB / cpu, 1),
            "load_average": round(os.getloadavg()[0], 2),
            "peak_rss_growth_mb": round(rss_growth / MB, 1),
            "maxrss_growth_mb": round((maxrss_after - maxrss_before) / MB, 1),
            "updates": updates,
            "tail_exact": tail_ok,
            "log_exact": _log_is_exact(log),
            "target_mb_per_s": 150,
            "target_peak_growth_mb": 64,
        }
        figures["ok"] = (
            figures["mb_per_s"] >= 150
            and figures["peak_rss_growth_mb"] < 64
            and tail_ok
            and figures["log_exact"]
        )
    print(json.dumps(figures))
    sys.exit(0 if figures["ok"] else 1)


if __name__ == "__main__":
    main()
