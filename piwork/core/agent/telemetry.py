"""Per-call usage telemetry, kept apart from the transcript.

Each provider call yields one record (what the provider billed, how long it took, how it ended). Records
live in memory, go to an optional callback (the GUI's budget meter) and, when a path is given, to an
append-only JSONL file outside the sessions folder (``<agentDir>/piwork/telemetry/<session id>.jsonl``), so
Pi never mistakes it for a session. Telemetry never breaks a run: a write failure is logged once and
the file is then skipped.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from piwork.core.agent.loop import CallRecord
from piwork.core.usage import UsageTotals

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class CallUsage:
    timestamp_ms: int
    provider: str
    model: str
    api: str
    stop_reason: str
    usage: dict[str, Any]
    duration_ms: int
    first_token_ms: int | None  # time to the first streamed delta
    response_id: str | None = None
    error_kind: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v is not None}


def telemetry_path(agent_dir: str | Path, session_id: str) -> Path:
    return Path(agent_dir) / "piwork" / "telemetry" / f"{session_id}.jsonl"


class UsageTelemetry:
    def __init__(
        self, path: Path | None = None, on_record: Callable[[CallUsage], None] | None = None
    ) -> None:
        self.path = path
        self.on_record = on_record
        self.records: list[CallUsage] = []
        self._write_failed = False

    def record_call(self, call: CallRecord) -> CallUsage:
        message = call.message
        usage = message.get("usage")
        record = CallUsage(
            timestamp_ms=call.started_ms,
            provider=str(message.get("provider", "")),
            model=str(message.get("model", "")),
            api=str(message.get("api", "")),
            stop_reason=str(message.get("stopReason", "")),
            usage=dict(usage) if isinstance(usage, dict) else {},
            duration_ms=max(0, call.ended_ms - call.started_ms),
            first_token_ms=None
            if call.first_token_ms is None
            else max(0, call.first_token_ms - call.started_ms),
            response_id=message.get("responseId") if isinstance(message.get("responseId"), str) else None,
            error_kind=call.error.kind.value if call.error is not None else None,
        )
        self.records.append(record)
        self._write(record)
        if self.on_record is not None:
            try:
                self.on_record(record)
            except Exception:
                log.exception("telemetry callback failed")
        return record

    def totals(self) -> dict[str, float]:
        """Billed traffic summed over the recorded calls (tokens and USD)."""
        summed = UsageTotals.of(record.usage for record in self.records)
        return {**summed.tokens, "cost": summed.cost["total"]}

    def _write(self, record: CallUsage) -> None:
        if self.path is None or self._write_failed:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with open(self.path, "a", encoding="utf-8") as handle:
                handle.write(json.dumps(record.to_json(), ensure_ascii=False, separators=(",", ":")) + "\n")
        except OSError as err:
            self._write_failed = True
            log.warning("usage telemetry disabled: cannot write %s (%s)", self.path, err)
