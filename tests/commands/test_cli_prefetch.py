"""The command line starts building a ``-p`` run's tokenizer before the run is imported: for the model id as
the run reads it from ``--model`` (``provider/id``, unless ``--provider`` is given too)."""

from __future__ import annotations

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
    args: list[str], expected: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    started: list[str] = []
    monkeypatch.setattr(tokens, "prefetch", lambda agent_dir, model_id: started.append(model_id))
    cli._prefetch_tokenizer(args)
    assert started == expected
