"""Billed traffic of today, over every session's telemetry file: each file read once, then only what was
appended (the files are append-only). Per-call records (``usage``) and billed series rows are both
understood; a session that has both is counted once."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from piwork.core import safe_read
from piwork.gui.context.reading import billed_from_usage


class TodayBilled:
    """Tokens and USD billed today (local time) over every telemetry file. Each file is read once and
    then only from where the last read stopped (the files are append-only); a new day starts over."""

    def __init__(self) -> None:
        self._day_start = 0.0
        self._files: dict[Path, tuple[int, int, float]] = {}  # path -> (bytes read, tokens, USD)

    def read(self, telemetry_dir: Path | None, now: float | None = None) -> tuple[int, float]:
        if telemetry_dir is None or not telemetry_dir.is_dir():
            return 0, 0.0
        day = datetime.fromtimestamp(time.time() if now is None else now).date()
        start = datetime.combine(day, datetime.min.time()).timestamp() * 1000
        if start != self._day_start:
            self._day_start, self._files = start, {}
        files = sorted(telemetry_dir.rglob("*.jsonl"))
        # a session with per-project context telemetry (a subfolder) also has per-call records at the
        # top: count one of them, never both
        in_folders = {path.name for path in files if path.parent != telemetry_dir}
        total_tokens, total_cost = 0, 0.0
        for path in files:
            if path.parent == telemetry_dir and path.name in in_folders:
                continue
            offset, tokens, cost = self._files.get(path, (0, 0, 0.0))
            try:
                stat = path.stat()
                if stat.st_mtime * 1000 >= start and stat.st_size != offset:
                    if stat.st_size < offset:  # replaced: read it again
                        offset, tokens, cost = 0, 0, 0.0
                    fd, opened = safe_read.open_regular(path, safe_read.TELEMETRY)
                    try:  # only what was added since: at most what the file held when opened
                        chunk = os.pread(fd, min(opened.st_size - offset, safe_read.TELEMETRY.limit), offset)
                    finally:
                        os.close(fd)
                    complete = chunk.rfind(b"\n") + 1  # a line still being written waits
                    added_tokens, added_cost = _billed_lines(chunk[:complete], start)
                    offset, tokens, cost = offset + complete, tokens + added_tokens, cost + added_cost
            except OSError:
                continue
            self._files[path] = (offset, tokens, cost)
            total_tokens += tokens
            total_cost += cost
        return total_tokens, total_cost


def _billed_lines(data: bytes, start: float) -> tuple[int, float]:
    usages: list[Mapping[str, Any]] = []
    for line in data.splitlines():
        if b'"usage"' not in line and b"billedTraffic" not in line:
            continue  # occupancy and governor rows: never billed
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if not isinstance(record, dict):
            continue
        stamp = record.get("timeMs", record.get("timestamp_ms"))
        if not isinstance(stamp, int | float) or stamp < start:
            continue
        usage = _record_usage(record)
        if usage is not None:
            usages.append(usage)
    tokens, cost = billed_from_usage(usages)
    return int(sum(tokens.values())), cost


def _record_usage(record: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """A telemetry line's billed usage: per-call records carry ``usage``; billed series rows carry fields."""
    usage = record.get("usage")
    if isinstance(usage, Mapping):
        return usage
    if record.get("series") == "billedTraffic":
        return {
            "input": record.get("input"),
            "output": record.get("output"),
            "cacheRead": record.get("cacheRead"),
            "cacheWrite": record.get("cacheWrite"),
            "cost": {"total": record.get("cost")},
        }
    return None
