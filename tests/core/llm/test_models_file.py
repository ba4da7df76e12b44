"""models.json edited one provider at a time: the rest of the file kept, atomic, never overwriting what
cannot be parsed; error bodies made readable."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from piwork.core.llm.error_text import readable_error
from piwork.core.llm.models import ModelRegistry
from piwork.core.llm.models_file import ModelsFileError, read_providers, remove_provider, save_provider


def test_save_keeps_other_providers_unknown_keys_and_order(tmp_path: Path) -> None:
    path = tmp_path / "models.json"
    path.write_text(
        json.dumps({"top": 1, "providers": {"a": {"baseUrl": "http://a/v1", "x": [1]}, "b": {"apiKey": "k"}}})
    )
    save_provider(path, "a", {"name": "A", "models": [{"id": "m"}], "api": "openai-completions"})
    data = json.loads(path.read_text())
    assert data["top"] == 1 and list(data["providers"]) == ["a", "b"]
    assert data["providers"]["a"] == {
        "baseUrl": "http://a/v1",
        "x": [1],
        "name": "A",
        "models": [{"id": "m"}],
        "api": "openai-completions",
    }
    save_provider(path, "a", {"compat": None, "x": None})
    assert "x" not in json.loads(path.read_text())["providers"]["a"]
    assert ModelRegistry(tmp_path).find("a", "m") is not None
    remove_provider(path, "a")
    assert json.loads(path.read_text())["providers"] == {"b": {"apiKey": "k"}}
    assert not list(tmp_path.glob(".models.*"))  # no temp file left behind


def test_rename_refuses_to_clobber(tmp_path: Path) -> None:
    path = tmp_path / "models.json"
    save_provider(path, "a", {"baseUrl": "http://a/v1"})
    save_provider(path, "b", {"baseUrl": "http://b/v1"})
    with pytest.raises(ModelsFileError, match="already has a provider called b"):
        save_provider(path, "b", {"baseUrl": "http://c/v1"}, replaces="a")
    save_provider(path, "c", {"name": "C"}, replaces="a")
    assert list(json.loads(path.read_text())["providers"]) == ["c", "b"]


def test_unparseable_file_is_moved_aside_and_commented_file_backed_up(tmp_path: Path) -> None:
    path = tmp_path / "models.json"
    path.write_text("{ not json")
    assert read_providers(path)[1] is not None
    change = save_provider(path, "a", {"baseUrl": "http://a/v1"})
    assert change.backup is not None and change.backup.read_text() == "{ not json"
    assert "could not be parsed" in change.backup_reason
    commented = '{\n  // mine\n  "providers": {"a": {"baseUrl": "http://a/v1"}}\n}\n'
    path.write_text(commented)
    change = save_provider(path, "b", {"baseUrl": "http://b/v1"})
    assert change.backup == tmp_path / "models.json.bak" and change.backup.read_text() == commented
    assert set(json.loads(path.read_text())["providers"]) == {"a", "b"}


def test_readable_error_extracts_the_providers_message() -> None:
    body = '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}'
    assert readable_error(f"529 {body}") == "529 · Overloaded (overloaded_error)"
    assert readable_error(
        '429 {"error":{"message":"Rate limit reached for gpt","code":"rate_limit_exceeded"}}'
    ) == ("429 Too Many Requests · Rate limit reached for gpt (rate_limit_exceeded)")
    assert readable_error("500 upstream failed") == "500 Internal Server Error · upstream failed"
    assert readable_error("Connection lost: peer closed") == "Connection lost: peer closed"
    assert (
        readable_error('Provider error: {"error": {"message": "bad things"}}') == "Provider error: bad things"
    )
