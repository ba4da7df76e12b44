"""Model registry: built-ins, models.json merge/override/comments, invalid files, value resolution."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from piwork.core.llm.config_values import ValueResolver
from piwork.core.llm.models import ModelRegistry, default_model, model_from_json, model_to_json
from piwork.core.llm.thinking import resolve_level, supported_levels


def write(agent_dir: Path, text: str) -> None:
    agent_dir.mkdir(parents=True, exist_ok=True)
    (agent_dir / "models.json").write_text(text, encoding="utf-8")


def test_builtins_without_a_file(tmp_path: Path) -> None:
    registry = ModelRegistry(tmp_path)
    assert registry.diagnostics == []
    sonnet = registry.find("anthropic", "claude-sonnet-4-5")
    assert sonnet is not None and sonnet.base_url == "https://api.anthropic.com" and sonnet.supports_images
    assert sonnet.context_window == 200000 and not sonnet.cost.tiers  # 1M (with tiers) before Pi 1.6
    gpt = registry.find("openai", "gpt-5.4")
    assert gpt is not None and gpt.cost.tiers and gpt.cost.tiers[0].input_tokens_above == 272000
    newest = registry.find("anthropic", "claude-opus-5-5")
    assert newest is not None and newest.context_window == 1000000 and newest.max_tokens == 128000
    assert gpt is not None and gpt.api == "openai-completions" and gpt.base_url == "https://api.openai.com/v1"
    assert {"anthropic", "openai"} <= set(registry.providers())
    for model in registry.models:
        assert model_from_json(model_to_json(model)) == model


SAMPLE = """\ufeff{
  // local models
  "providers": {
    "ollama": {
      "baseUrl": "http://localhost:11434/v1", "api": "openai-completions", "apiKey": "ollama",
      "compat": {"supportsDeveloperRole": false, "supportsReasoningEffort": false},
      "models": [{"id": "qwen2.5-coder:7b", "contextWindow": 32768, "compat": {"supportsReasoningEffort": true}}]
    },
    /* re-route built-ins */
    "anthropic": {"baseUrl": "https://proxy.example.com", "compat": {"supportsTemperature": false}},
    "openai": {"modelOverrides": {"gpt-5.4": {"contextWindow": 1050000, "cost": {"input": 9}},
                                  "no-such-model": {"contextWindow": 5}},
               "models": [{"id": "gpt-4o", "name": "Replaced 4o"}]}
  }
}"""


def test_merge_override_and_upsert(tmp_path: Path) -> None:
    write(tmp_path, SAMPLE)
    registry = ModelRegistry(tmp_path)
    assert registry.diagnostics == []
    qwen = registry.find("ollama", "qwen2.5-coder:7b")
    assert qwen is not None
    assert (qwen.name, qwen.context_window, qwen.max_tokens, qwen.reasoning, qwen.input) == (
        "qwen2.5-coder:7b", 32768, 16384, False, ("text",),
    )  # fmt: skip
    assert qwen.compat == {
        "supportsDeveloperRole": False,
        "supportsReasoningEffort": True,
    }  # model compat wins
    assert qwen.base_url == "http://localhost:11434/v1" and qwen.api == "openai-completions"
    sonnet = registry.find("anthropic", "claude-sonnet-4-5")
    assert sonnet is not None and sonnet.base_url == "https://proxy.example.com"
    assert sonnet.compat["supportsTemperature"] is False
    gpt = registry.find("openai", "gpt-5.4")
    assert gpt is not None and gpt.context_window == 1050000
    assert gpt.cost.input == 9 and gpt.cost.output == 15  # partial cost patch
    replaced = registry.find("openai", "gpt-4o")
    assert replaced is not None and replaced.name == "Replaced 4o"
    assert replaced.base_url == "https://api.openai.com/v1"  # from the same-id built-in
    assert replaced.context_window == 128000  # a models[] entry replaces, it does not patch
    assert registry.config_api_key("ollama") == "ollama"


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("{not json", "not valid JSON"),
        ('{"providers": []}', "providers: must be an object"),
        ('{"providers": {"x": {}}}', "providers.x: set at least one of"),
        (
            '{"providers": {"x": {"baseUrl": "u", "models": [{"id": "m", "contextWindow": 0}]}}}',
            "contextWindow",
        ),
        ('{"providers": {"x": {"baseUrl": "u", "models": [{"name": "no id"}]}}}', "models[0].id"),
        ('{"providers": {"x": {"baseUrl": 5}}}', "providers.x.baseUrl: must be a string"),
    ],
)
def test_invalid_file_is_rejected_whole_with_one_diagnostic(tmp_path: Path, text: str, needle: str) -> None:
    write(tmp_path, text)
    registry = ModelRegistry(tmp_path)
    assert len(registry.diagnostics) == 1 and needle in registry.diagnostics[0].message
    assert registry.diagnostics[0].path == str(tmp_path / "models.json")
    assert registry.find("anthropic", "claude-sonnet-4-5") is not None  # built-ins stay usable
    assert registry.find("x", "m") is None


def test_invalid_utf8_is_a_diagnostic(tmp_path: Path) -> None:
    tmp_path.joinpath("models.json").write_bytes(b'{"providers": {"\xff": {}}}')
    assert "Could not read" in ModelRegistry(tmp_path).diagnostics[0].message


def test_reload_picks_up_changes(tmp_path: Path) -> None:
    registry = ModelRegistry(tmp_path)
    assert registry.find("lm", "m1") is None
    write(
        tmp_path,
        json.dumps(
            {
                "providers": {
                    "lm": {
                        "baseUrl": "http://127.0.0.1:1234/v1",
                        "api": "openai-completions",
                        "models": [{"id": "m1"}],
                    }
                }
            }
        ),
    )
    registry.reload()
    assert registry.find("lm", "m1") is not None


def test_unsupported_api_loads_but_is_marked(tmp_path: Path) -> None:
    write(
        tmp_path,
        json.dumps(
            {
                "providers": {
                    "g": {"baseUrl": "https://g", "api": "google-generative-ai", "models": [{"id": "gem"}]}
                }
            }
        ),
    )
    gem = ModelRegistry(tmp_path).find("g", "gem")
    assert gem is not None and not gem.api_supported


def test_model_without_api_rejects_the_file(tmp_path: Path) -> None:
    providers = {"p": {"baseUrl": "https://p", "models": [{"id": "orphan"}]},
                 "q": {"baseUrl": "https://q", "api": "openai-completions", "models": [{"id": "fine"}]}}  # fmt: skip
    write(tmp_path, json.dumps({"providers": providers}))
    registry = ModelRegistry(tmp_path)
    assert registry.find("p", "orphan") is None and registry.find("q", "fine") is None
    assert len(registry.diagnostics) == 1 and "providers.p.models[0].api" in registry.diagnostics[0].message
    write(tmp_path, json.dumps({"providers": {"openai": {"models": [{"id": "gpt-4o", "name": "Mine"}]}}}))
    registry.reload()  # api and baseUrl come from the same-id built-in
    assert registry.diagnostics == [] and registry.find("openai", "gpt-4o").name == "Mine"  # type: ignore[union-attr]


def test_value_resolution() -> None:
    calls: list[str] = []

    def run(command: str) -> str | None:
        calls.append(command)
        return "from-command"

    resolver = ValueResolver({"KEY": "abc", "EMPTY": ""}, run)
    assert resolver.resolve("$KEY") == "abc"
    assert resolver.resolve("Bearer ${KEY}!") == "Bearer abc!"
    assert resolver.resolve("$EMPTY") is None and resolver.resolve("x-$MISSING") is None
    assert resolver.resolve("cost $$5 $!bang") == "cost $5 !bang"
    assert resolver.resolve("${not-a-name}") == "${not-a-name}"
    assert resolver.resolve("plain") == "plain"
    assert resolver.resolve("!pass show key") == "from-command"
    assert resolver.resolve("!pass show key") == "from-command"
    assert calls == ["pass show key"]  # cached


def test_real_shell_command_value(tmp_path: Path) -> None:
    resolver = ValueResolver({})
    assert resolver.resolve("!printf '  secret-value \\n'") == "secret-value"
    assert resolver.resolve("!exit 3") is None


def test_headers_resolve_per_request(tmp_path: Path) -> None:
    write(tmp_path, json.dumps({"providers": {"p": {"baseUrl": "https://p", "api": "openai-completions",
        "headers": {"x-team": "$TEAM", "x-gone": "$NOPE"}, "models": [{"id": "m"}]}}}))  # fmt: skip
    registry = ModelRegistry(tmp_path, ValueResolver({"TEAM": "blue"}))
    model = registry.find("p", "m")
    assert model is not None and model.headers == {"x-team": "$TEAM", "x-gone": "$NOPE"}
    assert registry.with_resolved_headers(model).headers == {"x-team": "blue"}


def test_default_model(tmp_path: Path) -> None:
    registry = ModelRegistry(tmp_path)
    assert default_model(registry, lambda p: False) is None
    chosen = default_model(registry, lambda p: p == "openai")
    assert chosen is not None and (chosen.provider, chosen.id) == ("openai", "gpt-6.2-sol")
    chosen = default_model(registry, lambda p: True)
    assert chosen is not None and (chosen.provider, chosen.id) == ("anthropic", "claude-opus-5-5")
    chosen = default_model(registry, lambda p: p == "openai", "openai", "gpt-4o")
    assert chosen is not None and chosen.id == "gpt-4o"
    # a saved choice whose provider has no key gives way to one that can answer, as in Pi 1.6
    chosen = default_model(registry, lambda p: p == "openai", "anthropic", "claude-haiku-4-5")
    assert chosen is not None and chosen.id == "gpt-6.2-sol"
    assert default_model(registry, lambda p: False, "openai", "gpt-4o") is None


def test_thinking_levels(tmp_path: Path) -> None:
    registry = ModelRegistry(tmp_path)
    gpt5 = registry.find("openai", "gpt-5")
    assert gpt5 is not None
    assert supported_levels(gpt5) == ["minimal", "low", "medium", "high"]
    assert resolve_level(gpt5, "off") == "minimal" and resolve_level(gpt5, "max") == "high"
    haiku = registry.find("anthropic", "claude-haiku-4-5")
    assert haiku is not None and supported_levels(haiku) == ["off", "minimal", "low", "medium", "high"]
    assert resolve_level(haiku, "xhigh") == "high"
    gpt4o = registry.find("openai", "gpt-4o")
    assert gpt4o is not None and supported_levels(gpt4o) == ["off"] and resolve_level(gpt4o, "high") == "off"


def test_comments_are_stripped_outside_strings_only_in_one_scan() -> None:
    from piwork.core.llm.models_schema import loads_jsonc, strip_json_comments

    text = '/* head\n*/{"url": "http://x/*y*/", // note\n "s": "a\\"//b"} /* open'
    assert strip_json_comments(text) == '\n{"url": "http://x/*y*/", \n "s": "a\\"//b"} '
    assert loads_jsonc(text) == {"url": "http://x/*y*/", "s": 'a"//b'}
    models = [{"id": f"m{i}"} for i in range(20_000)]  # many models parse in one linear pass
    big = '{"providers": {"p": {"baseUrl": "http://h/v1", "models": ' + json.dumps(models) + "}}}"
    assert len(loads_jsonc(big + " // trailing")["providers"]["p"]["models"]) == 20_000


def test_pi_1_6_model_keys_are_read_and_kept(tmp_path: Path) -> None:
    write(tmp_path, json.dumps({
        "$schema": "https://example.com/models.schema.json",
        "providers": {"x": {"baseUrl": "http://h/v1", "api": "openai-completions", "models": [{
            "id": "m", "inputLimits": {"maxRequestBytes": 100}, "promptCache": {"short": 300},
            "samplingParamsByThinkingLevel": {"high": {"top_p": 0.9}},
            "compat": {"supportsStrictMode": True, "promptCacheKeyMode": "enabled", "requiresToolsWithToolHistory": True},
        }]}},
    }))  # fmt: skip
    registry = ModelRegistry(tmp_path)
    assert registry.diagnostics == []
    model = registry.find("x", "m")
    assert model is not None and model.sampling_params_by_level == {"high": {"top_p": 0.9}}
    assert model.input_limits == {"maxRequestBytes": 100} and model.prompt_cache == {"short": 300}
    assert model.compat["promptCacheKeyMode"] == "enabled"
    assert model_from_json(model_to_json(model)) == model


@pytest.mark.parametrize(
    ("model", "problem"),
    [
        ({"id": "m", "cost": {"input": 1}}, "cost: must give output, cacheRead, cacheWrite"),
        (
            {"id": "m", "compat": {"supportsStrictMode": "yes"}},
            "compat.supportsStrictMode: must be true or false",
        ),
        ({"id": "m", "samplingParamsByThinkingLevel": {"huge": {}}}, "huge: not a thinking level"),
    ],
)
def test_models_json_entries_pi_1_6_refuses_reject_the_file(
    tmp_path: Path, model: dict[str, Any], problem: str
) -> None:
    write(
        tmp_path,
        json.dumps(
            {"providers": {"x": {"baseUrl": "http://h/v1", "api": "openai-completions", "models": [model]}}}
        ),
    )
    registry = ModelRegistry(tmp_path)
    assert registry.find("x", "m") is None and problem in registry.diagnostics[0].message


def test_an_override_may_change_only_some_rates(tmp_path: Path) -> None:
    write(
        tmp_path,
        json.dumps({"providers": {"openai": {"modelOverrides": {"gpt-5.4": {"cost": {"input": 9}}}}}}),
    )
    registry = ModelRegistry(tmp_path)
    model = registry.find("openai", "gpt-5.4")
    assert (
        registry.diagnostics == [] and model is not None and model.cost.input == 9 and model.cost.output == 15
    )
