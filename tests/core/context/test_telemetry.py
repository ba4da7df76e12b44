from __future__ import annotations

import json
from pathlib import Path

from piwork.core.context.records import ElidedItem, GovernorDecision, OccupancySample
from piwork.core.context.telemetry import ContextTelemetry, project_key, telemetry_file


def test_series_are_kept_apart_and_never_summed(tmp_path: Path) -> None:
    path = telemetry_file(tmp_path / "agent", str(tmp_path), "sess-1")
    assert path == tmp_path / "agent" / "piwork" / "telemetry" / project_key(str(tmp_path)) / "sess-1.jsonl"
    telemetry = ContextTelemetry(path)
    telemetry.add_occupancy(OccupancySample(1, 50_000, "estimate", "≈ cl100k_base", 200_000, 80_000))
    first = telemetry.add_billed(
        2,
        "anthropic",
        "m",
        {"input": 100, "output": 20, "cacheRead": 49_000, "cacheWrite": 0, "cost": {"total": 0.5}},
    )
    second = telemetry.add_billed(
        3, "anthropic", "m", {"input": 10, "output": 5, "cacheRead": 50_000, "cost": {"total": 0.25}}
    )
    telemetry.add_occupancy(OccupancySample(4, 50_135, "provider", "provider", 200_000))
    telemetry.add_governor(
        GovernorDecision(
            5,
            1,
            "projected",
            "",
            ("pressure",),
            80_000,
            50_000,
            30_000,
            12_000,
            (ElidedItem("c1", "bash", "curl -H 'Authorization: secret'", 30_000, "aged"),),
        )
    )
    assert first.cumulative == {"input": 100, "output": 20, "cacheRead": 49_000, "cacheWrite": 0, "cost": 0.5}
    assert second.cumulative == {
        "input": 110,
        "output": 25,
        "cacheRead": 99_000,
        "cacheWrite": 0,
        "cost": 0.75,
    }
    assert [s.tokens for s in telemetry.occupancy] == [50_000, 50_135]  # cache reads do not grow occupancy
    records = [json.loads(line) for line in path.read_text().splitlines()]
    assert [r["series"] for r in records] == [
        "contextOccupancy",
        "billedTraffic",
        "billedTraffic",
        "contextOccupancy",
        "governor",
    ]
    for record in records:
        if record["series"] == "contextOccupancy":
            assert not set(record) & {"input", "output", "cacheRead", "cacheWrite", "cost", "cumulative"}
            assert record["source"] in ("estimate", "provider") and record["tokenizer"]
        if record["series"] == "billedTraffic":
            assert not set(record) & {"tokens", "source", "tokenizer", "transcriptTokens"}
    assert "secret" not in path.read_text()
    assert records[-1]["elided"][0]["argumentSha256"]


def test_a_write_failure_disables_the_file_not_the_run(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    telemetry = ContextTelemetry(blocker / "sub" / "t.jsonl")
    telemetry.add_occupancy(OccupancySample(1, 10, "estimate", "chars/4"))
    telemetry.add_occupancy(OccupancySample(2, 11, "estimate", "chars/4"))
    assert len(telemetry.occupancy) == 2
