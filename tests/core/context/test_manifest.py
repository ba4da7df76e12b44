from __future__ import annotations

import json
from pathlib import Path

import pytest

from piwork.core.context.layers import LAYERS, layer
from piwork.core.context.manifest import (
    LAYER_STATUSES,
    MANIFEST_CUSTOM_TYPE,
    Manifest,
    ManifestEntry,
    ManifestError,
    ManifestTotals,
    append_manifest,
    entry_for,
    latest_manifest,
)
from piwork.core.session.context import build_session_context
from piwork.core.session.store import create_session, open_session


def _manifest(root: str) -> Manifest:
    return Manifest(
        "task-1",
        "2026-12-01T10:00:00.000Z",
        "o200k_base",
        (
            entry_for("contextFile", f"{root}/AGENTS.md", "over-cap", tokens=812, sha256="ab" * 32),
            entry_for("profile", f"{root}/.pi/piwork-profile.json", "included", tokens=40),
            entry_for("index", f"{root}/.pi/context-index.json", "stale", reason="37% entries changed"),
            entry_for("snapshot", f"{root}/.pi/project-context.md", "blocked-untrusted"),
            entry_for("taskFile", f"{root}/src/app.py", "planned", tokens=2400),
        ),
        "pytest -q",
        ManifestTotals(5100, 2900, 3300, 0),
    )


def test_layers_are_the_ten_in_order() -> None:
    assert [x.number for x in LAYERS] == list(range(1, 11))
    assert [x.kind for x in LAYERS][:7] == [
        "contextFile",
        "profile",
        "pack",
        "index",
        "snapshot",
        "memory",
        "required",
    ]
    assert all(x.trust_gated for x in LAYERS[1:7]) and not LAYERS[0].trust_gated
    assert layer("index").number == 4 and layer(7).kind == "required"
    with pytest.raises(ValueError):
        layer(11)


def test_manifest_json_round_trip_keeps_every_field() -> None:
    manifest = _manifest("/repo")
    data = manifest.to_json()
    assert data["version"] == 1 and data["taskId"] == "task-1"
    assert data["entries"][0] == {
        "layer": 1,
        "kind": "contextFile",
        "path": "/repo/AGENTS.md",
        "status": "over-cap",
        "tokens": 812,
        "sha256": "ab" * 32,
    }
    assert data["entries"][2]["reason"] == "37% entries changed"
    assert data["totals"] == {"systemPrompt": 5100, "tools": 2900, "bundle": 3300, "messages": 0}
    assert Manifest.from_json(json.loads(json.dumps(data))) == manifest
    assert set(LAYER_STATUSES) == {
        "included",
        "planned",
        "omitted",
        "stale",
        "over-cap",
        "blocked-untrusted",
        "missing",
    }


@pytest.mark.parametrize(
    "bad",
    [
        [],
        {"version": 2, "entries": []},
        {"version": 1, "entries": {}},
        {"version": 1, "entries": [{"layer": 1, "status": "loaded"}]},
        {"version": 1, "entries": [{"layer": 0, "status": "included"}]},
    ],
)
def test_malformed_manifest_is_rejected(bad: object) -> None:
    with pytest.raises(ManifestError):
        Manifest.from_json(bad)


def test_text_rendering() -> None:
    text = _manifest("/repo").render_text("/repo")
    assert text == (
        "Context manifest\n"
        "- context: AGENTS.md (over-cap)\n"
        "- profile: .pi/piwork-profile.json\n"
        "- index: .pi/context-index.json (advisory map, stale: 37% entries changed)\n"
        "- snapshot: .pi/project-context.md (blocked-untrusted)\n"
        "- task files: src/app.py\n"
        "- verify: pytest -q\n"
    )


def test_upsert_replaces_same_layer_and_path_and_keeps_layer_order() -> None:
    manifest = _manifest("/repo")
    updated = manifest.upsert(entry_for("index", "/repo/.pi/context-index.json", "included", tokens=90))
    assert [e.layer for e in updated.entries] == [1, 2, 4, 5, 8]
    assert updated.layer_entries(4) == [
        ManifestEntry(4, "index", "/repo/.pi/context-index.json", "included", 90)
    ]


def test_manifest_persists_as_state_only_entry_never_sent_to_the_model(tmp_path: Path) -> None:
    session = create_session(str(tmp_path), tmp_path / "sessions")
    tree = session.tree
    tree.append_message({"role": "user", "content": "hi", "timestamp": 1})
    append_manifest(tree, _manifest(str(tmp_path)))
    tree.append_message(
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "ok"}],
            "timestamp": 2,
            "api": "x",
            "provider": "x",
            "model": "x",
            "usage": {},
            "stopReason": "stop",
        }
    )
    session.close()
    assert session.path is not None
    lines = [json.loads(line) for line in session.path.read_text().splitlines()]
    stored = [line for line in lines if line.get("customType") == MANIFEST_CUSTOM_TYPE]
    assert len(stored) == 1 and stored[0]["type"] == "custom"
    assert "content" not in stored[0]
    reopened = open_session(session.path)
    assert latest_manifest(reopened.tree) == _manifest(str(tmp_path))
    roles = [m.get("role") for m in build_session_context(reopened.tree.entries())["messages"]]
    assert roles == ["user", "assistant"]
    reopened.close()


def test_latest_manifest_skips_damaged_entries(tmp_path: Path) -> None:
    session = create_session(str(tmp_path), tmp_path / "sessions")
    append_manifest(session.tree, _manifest("/a"))
    session.tree.append_custom_entry(MANIFEST_CUSTOM_TYPE, {"version": 99})
    assert latest_manifest(session.tree) == _manifest("/a")


def test_tokenizer_is_named_in_the_manifest_form(tmp_path: Path) -> None:
    from piwork.core.context.estimate import TokenEstimator
    from piwork.core.llm.tokens import Tokenizers

    tokenizers = Tokenizers(tmp_path / "agent", env={})
    assert TokenEstimator(tokenizers.counter_for("gpt-4o")).record_tokenizer == "chars/4"  # not loaded yet
    tokenizers.load()
    names = {
        model_id: TokenEstimator(tokenizers.counter_for(model_id)).record_tokenizer
        for model_id in ("gpt-4o", "gpt-oss-120b", "gpt-4", "claude-sonnet-4-5")
    }
    assert names == {
        "gpt-4o": "o200k_base",
        "gpt-oss-120b": "o200k_base",
        "gpt-4": "cl100k_base",
        "claude-sonnet-4-5": "cl100k_base≈",
    }


@pytest.mark.parametrize(
    ("stored", "read"),
    [
        ("≈ cl100k_base", "cl100k_base≈"),
        ("≈ chars/4", "chars/4"),
        ("o200k_base", "o200k_base"),
        ("cl100k_base≈", "cl100k_base≈"),
    ],
)
def test_manifest_saved_with_the_meter_label_reads_in_the_manifest_form(stored: str, read: str) -> None:
    data = {**_manifest("/repo").to_json(), "tokenizer": stored}
    assert Manifest.from_json(data).tokenizer == read
