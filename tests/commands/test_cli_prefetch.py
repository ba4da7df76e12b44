"""The command line starts building a ``-p`` run's tokenizer before the run is imported: for the model id as
the run reads it from ``--model`` (``provider/id``, unless ``--provider`` is given too), else for the global
settings' default model."""

from __future__ import annotations

from pathlib import Path

import pytest

from piwork import cli
from piwork.core.llm import tokens


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["-p", "hi", "--model", "anthropic/claude-sonnet-4-5"], ["claude-sonnet-4-5"]),
        (["-p", "hi", "--provider", "openrouter", "--model", "openai/gpt-4o"], ["openai/gpt-4o"]),
        (["-p", "hi", "--model=gpt-4o", "--model", "gpt-5"], ["gpt-5"]),
        (["-p", "hi", "--provider", "local"], []),
        (["-p", "hi", "--", "--model", "x"], []),
    ],
)
def test_the_model_id_the_run_will_read(
    args: list[str], expected: list[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path))
    started: list[str] = []
    monkeypatch.setattr(tokens, "prefetch", lambda agent_dir, model_id: started.append(model_id))
    cli._prefetch_tokenizer(args)
    assert started == expected


@pytest.mark.parametrize(
    ("settings", "expected"),
    [
        ('{"defaultProvider": "openai", "defaultModel": "gpt-4o"}', ["gpt-4o"]),
        ('{"defaultProvider": "openai"}', []),
        ("{not json", []),
        (None, []),
    ],
)
def test_without_a_model_named_the_settings_default_is_read(
    settings: str | None, expected: list[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path))
    if settings is not None:
        (tmp_path / "settings.json").write_text(settings)
    started: list[str] = []
    monkeypatch.setattr(tokens, "prefetch", lambda agent_dir, model_id: started.append(model_id))
    cli._prefetch_tokenizer(["-p", "hi"])
    assert started == expected
    cli._prefetch_tokenizer(["-p", "hi", "--model", "claude-sonnet-4-5"])  # a named model comes first
    assert started[-1] == "claude-sonnet-4-5"
