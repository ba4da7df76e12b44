"""models.json read by the reference and by piwork: custom models and overrides must agree.

Skipped when the reference is not installed (``PI_ORACLE_DIR``, default ``/tmp/pi-oracle``). Built-in
catalogs differ on purpose (piwork ships a small one and uses Chat Completions for OpenAI), so built-in
models are compared only on the fields models.json changed.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from piwork.core.llm.models import ModelRegistry, model_to_json
from tests.support.reference import MISSING_REASON, NODE, PI_DIST

pytestmark = pytest.mark.oracle


_SCRIPT = """
const [dist, dir, wanted] = [process.argv[1], process.argv[2], JSON.parse(process.argv[3])];
const { ModelRuntime } = await import(dist + "/core/model-runtime.js");
const runtime = await ModelRuntime.create({ modelsPath: dir + "/models.json", authPath: dir + "/auth.json",
                                            allowModelNetwork: false });
const models = {};
for (const [provider, id] of wanted) models[provider + "/" + id] = runtime.getModel(provider, id) ?? null;
process.stdout.write(JSON.stringify({ error: runtime.getError() ?? null, models }));
"""

CONFIG = {
    "providers": {
        "ollama": {
            "baseUrl": "http://localhost:11434/v1", "api": "openai-completions", "apiKey": "ollama",
            "compat": {"supportsDeveloperRole": False, "supportsReasoningEffort": False},
            "models": [
                {"id": "qwen2.5-coder:7b", "contextWindow": 32768, "compat": {"supportsReasoningEffort": True}},
                {"id": "llama3.3", "name": "Llama", "reasoning": True, "input": ["text", "image"], "maxTokens": 8000,
                 "cost": {"input": 0.1, "output": 0.2, "cacheRead": 0.01, "cacheWrite": 0}},
            ],
        },
        "proxy": {"baseUrl": "https://proxy.example.com", "api": "anthropic-messages", "headers": {"x-team": "blue"},
                  "models": [{"id": "claude-proxy", "contextWindow": 100000}]},
        "anthropic": {"baseUrl": "https://gateway.example.com", "compat": {"supportsTemperature": False}},
        "openai": {"modelOverrides": {"gpt-5.4": {"contextWindow": 1050000, "cost": {"input": 9}}}},
    }
}  # fmt: skip
CUSTOM = [("ollama", "qwen2.5-coder:7b"), ("ollama", "llama3.3"), ("proxy", "claude-proxy")]
# Provider headers are applied per request by both, but only piwork copies them onto the model: not compared.
FIELDS = (
    "id",
    "name",
    "api",
    "baseUrl",
    "reasoning",
    "input",
    "contextWindow",
    "maxTokens",
    "cost",
    "compat",
)


def _reference(directory: Path, wanted: list[tuple[str, str]]) -> dict[str, Any]:
    if not NODE.exists() or not (PI_DIST / "core" / "model-runtime.js").exists():
        pytest.skip(MISSING_REASON)
    done = subprocess.run(
        [str(NODE), "--input-type=module", "-e", _SCRIPT, str(PI_DIST), str(directory), json.dumps(wanted)],
        capture_output=True, text=True, timeout=60, check=False, env={**os.environ, "PI_OFFLINE": "1"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def _shape(model: dict[str, Any]) -> dict[str, Any]:
    shaped = {key: model.get(key) for key in FIELDS}
    shaped["cost"] = {k: float(v) for k, v in (model.get("cost") or {}).items() if k != "tiers"}
    shaped["compat"] = model.get("compat") or {}
    return shaped


def test_custom_models_and_overrides_agree(tmp_path: Path) -> None:
    (tmp_path / "models.json").write_text(json.dumps(CONFIG))
    wanted = [*CUSTOM, ("anthropic", "claude-sonnet-4-5"), ("openai", "gpt-5.4")]
    reference = _reference(tmp_path, wanted)
    assert reference["error"] is None
    registry = ModelRegistry(tmp_path)
    assert registry.diagnostics == []
    for provider, model_id in CUSTOM:
        ours = registry.find(provider, model_id)
        assert ours is not None
        assert _shape(model_to_json(ours)) == _shape(reference["models"][f"{provider}/{model_id}"]), model_id
    sonnet, theirs = (
        registry.find("anthropic", "claude-sonnet-4-5"),
        reference["models"]["anthropic/claude-sonnet-4-5"],
    )
    assert sonnet is not None and sonnet.base_url == theirs["baseUrl"]
    assert sonnet.compat["supportsTemperature"] is theirs["compat"]["supportsTemperature"] is False
    gpt, theirs = registry.find("openai", "gpt-5.4"), reference["models"]["openai/gpt-5.4"]
    assert gpt is not None and (gpt.context_window, gpt.cost.input) == (
        theirs["contextWindow"],
        theirs["cost"]["input"],
    )


@pytest.mark.parametrize(
    "config",
    [
        {"providers": {"x": {}}},
        {
            "providers": {
                "x": {
                    "baseUrl": "u",
                    "api": "openai-completions",
                    "models": [{"id": "m", "contextWindow": 0}],
                }
            }
        },
        {"providers": {"x": {"baseUrl": "u", "api": "openai-completions", "models": [{"name": "no id"}]}}},
        {"providers": []},
    ],
)
def test_both_reject_the_same_broken_files(tmp_path: Path, config: dict[str, Any]) -> None:
    (tmp_path / "models.json").write_text(json.dumps(config))
    reference = _reference(tmp_path, [("x", "m")])
    registry = ModelRegistry(tmp_path)
    assert reference["error"] is not None and registry.diagnostics
    assert reference["models"]["x/m"] is None and registry.find("x", "m") is None
