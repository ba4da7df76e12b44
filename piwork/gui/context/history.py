"""A reopened session's context history, read back from its telemetry file: the governor log and the
occupancy and billed series of earlier runs.

The file holds metadata only — an elided result's argument is kept as a hash — so the argument shown
again is taken from the tool call of the same id in the session's messages. Lines that are not records
of these series, or are damaged, are skipped: the views show what could be read.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from piwork.core import safe_read
from piwork.core.context import (
    DECISIONS,
    REASON_CODES,
    TRIGGERS,
    BilledSample,
    ElidedItem,
    GovernorDecision,
    OccupancySample,
    usage_sample,
)


@dataclass(frozen=True)
class History:
    decisions: list[GovernorDecision] = field(default_factory=list)
    occupancy: list[OccupancySample] = field(default_factory=list)  # per call, the working set sent
    billed: list[BilledSample] = field(default_factory=list)


def _int(value: Any) -> int:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0


def _arguments(messages: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """Tool call id -> its main argument (path, command or pattern), from the assistant messages."""
    out: dict[str, str] = {}
    for message in messages:
        if message.get("role") != "assistant" or not isinstance(message.get("content"), list):
            continue
        for block in message["content"]:
            if not isinstance(block, dict) or block.get("type") != "toolCall":
                continue
            raw = block.get("arguments")
            args: dict[str, Any] = raw if isinstance(raw, dict) else {}
            main = next((args[k] for k in ("path", "command", "pattern") if isinstance(args.get(k), str)), "")
            out[str(block.get("id"))] = main[:200]
    return out


def _decision(record: Mapping[str, Any], arguments: Mapping[str, str]) -> GovernorDecision | None:
    decision = record.get("decision")
    if decision not in DECISIONS:
        return None
    elided: list[ElidedItem] = []
    for item in record.get("elided") or []:
        if not isinstance(item, Mapping) or item.get("reason") not in REASON_CODES:
            continue
        call_id = str(item.get("toolCallId", ""))
        elided.append(
            ElidedItem(
                call_id,
                str(item.get("tool", "")),
                arguments.get(call_id, ""),
                _int(item.get("tokens")),
                item["reason"],
            )
        )
    triggers = tuple(t for t in record.get("triggers") or [] if t in TRIGGERS)
    return GovernorDecision(
        time_ms=_int(record.get("timeMs")),
        turn=_int(record.get("turn")),
        decision=decision,
        detail=str(record.get("detail") or ""),
        triggers=triggers,
        occupancy_before=_int(record.get("occupancyBefore")),
        occupancy_after=_int(record.get("occupancyAfter")),
        savings=_int(record.get("savings")),
        required=_int(record.get("required")),
        elided=tuple(elided),
        sticky=_int(record.get("sticky")),
        tokenizer=str(record.get("tokenizer") or ""),
    )


def read_history(
    path: Path | None,
    messages: Sequence[Mapping[str, Any]],
    usage_entries: Sequence[Mapping[str, Any]] = (),
) -> History:
    """Read ``path`` (a session's context telemetry); blocking, run it in an executor. ``usage_entries``
    (the branch's billed calls outside a reply) join the billed series in time order."""
    history = History()
    _read_telemetry(history, path, messages)
    if usage_entries:
        history.billed.extend(usage_sample(entry) for entry in usage_entries)
        history.billed.sort(key=lambda sample: sample.time_ms)
    return history


def _read_telemetry(history: History, path: Path | None, messages: Sequence[Mapping[str, Any]]) -> None:
    if path is None:
        return
    try:
        lines = safe_read.read_text(path, safe_read.TELEMETRY, strip_bom=False).splitlines()
    except OSError:
        return
    arguments = _arguments(messages)
    for line in lines:
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if not isinstance(record, dict):
            continue
        series = record.get("series")
        if series == "governor":
            decision = _decision(record, arguments)
            if decision is not None:
                history.decisions.append(decision)
        elif series == "contextOccupancy" and record.get("source") == "estimate":
            transcript = record.get("transcriptTokens")
            history.occupancy.append(
                OccupancySample(
                    _int(record.get("timeMs")),
                    _int(record.get("tokens")),
                    "estimate",
                    str(record.get("tokenizer") or ""),
                    _int(record.get("window")),
                    _int(transcript) if transcript is not None else None,
                )
            )
        elif series == "billedTraffic":
            cost = record.get("cost")
            history.billed.append(
                BilledSample(
                    _int(record.get("timeMs")),
                    str(record.get("provider") or ""),
                    str(record.get("model") or ""),
                    _int(record.get("input")),
                    _int(record.get("output")),
                    _int(record.get("cacheRead")),
                    _int(record.get("cacheWrite")),
                    float(cost) if isinstance(cost, int | float) and not isinstance(cost, bool) else 0.0,
                )
            )
