"""Context telemetry: the occupancy series, the billed series and the governor log, kept apart.

``contextOccupancy`` is what the next (or last) request holds; ``billedTraffic`` is what providers
charged. They are separate lists of separate types and separate JSONL records (``series`` says which),
and nothing here ever adds, compares or substitutes one for the other. Records are metadata only:
token counts, model names, tool names, paths and hashes — no prompt text, no tool output, and commands
only as a hash. They are appended to ``<agentDir>/piwork/telemetry/<project key>/<sessionId>.jsonl``,
outside the repository. A write failure is logged once and disables the file, never the run.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from piwork.core.context.records import BilledSample, GovernorDecision, OccupancySample

log = logging.getLogger(__name__)
BILLED_KEYS = ("input", "output", "cacheRead", "cacheWrite", "cost")


def project_key(cwd: str) -> str:
    """16 hex digits naming a project folder (its real path's SHA-256 prefix)."""
    return hashlib.sha256(os.path.realpath(cwd).encode("utf-8", "surrogatepass")).hexdigest()[:16]


def telemetry_file(agent_dir: str | Path, cwd: str, session_id: str) -> Path:
    return Path(agent_dir) / "piwork" / "telemetry" / project_key(cwd) / f"{session_id}.jsonl"


def _whole(value: Any) -> int:
    return (
        int(value) if isinstance(value, int | float) and not isinstance(value, bool) and value == value else 0
    )


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def governor_record(decision: GovernorDecision) -> dict[str, Any]:
    """A decision as metadata: each elided item's argument only as a hash."""
    data = decision.to_json()
    data["elided"] = [
        {**{k: v for k, v in item.items() if k != "argument"}, "argumentSha256": _sha(str(item["argument"]))}
        for item in data["elided"]
    ]
    return {"series": "governor", **data}


@dataclass
class ContextTelemetry:
    path: Path | None = None
    occupancy: list[OccupancySample] = field(default_factory=list)
    billed: list[BilledSample] = field(default_factory=list)
    governor: list[GovernorDecision] = field(default_factory=list)
    _totals: dict[str, float] = field(default_factory=lambda: dict.fromkeys(BILLED_KEYS, 0.0))
    _write_failed: bool = False

    def add_occupancy(self, sample: OccupancySample) -> OccupancySample:
        self.occupancy.append(sample)
        self._write(sample.to_json())
        return sample

    def add_governor(self, decision: GovernorDecision) -> None:
        self.governor.append(decision)
        self._write(governor_record(decision))

    def add_billed(self, time_ms: int, provider: str, model: str, usage: Mapping[str, Any]) -> BilledSample:
        """A billed sample from a provider ``usage`` (cost in USD from ``usage.cost.total``)."""
        cost = usage.get("cost")
        total_cost = cost.get("total") if isinstance(cost, Mapping) else None
        amount = (
            float(total_cost)
            if isinstance(total_cost, int | float) and not isinstance(total_cost, bool)
            else 0.0
        )
        values = {
            "input": _whole(usage.get("input")),
            "output": _whole(usage.get("output")),
            "cacheRead": _whole(usage.get("cacheRead")),
            "cacheWrite": _whole(usage.get("cacheWrite")),
        }
        for key, value in values.items():
            self._totals[key] += value
        self._totals["cost"] += amount
        sample = BilledSample(
            time_ms=time_ms,
            provider=provider,
            model=model,
            input=values["input"],
            output=values["output"],
            cache_read=values["cacheRead"],
            cache_write=values["cacheWrite"],
            cost=amount,
            cumulative=dict(self._totals),
        )
        self.billed.append(sample)
        self._write(sample.to_json())
        return sample

    @property
    def billed_totals(self) -> dict[str, float]:
        return dict(self._totals)

    def _write(self, record: dict[str, Any]) -> None:
        if self.path is None or self._write_failed:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with open(self.path, "a", encoding="utf-8") as handle:
                handle.write(json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n")
        except OSError as err:
            self._write_failed = True
            log.warning("context telemetry disabled: cannot write %s (%s)", self.path, err)
