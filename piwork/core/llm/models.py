"""The model registry: built-in models plus custom providers and models from ``<agentDir>/models.json``.

``models.json`` follows Pi's format. A file that cannot be read, parsed or validated is
rejected as a whole with one diagnostic and the built-in models stay usable. ``reload()`` re-reads it;
a caller that must not wait on the disk builds the new contents with ``read_state()`` in a worker thread
(it changes nothing) and swaps them in with ``apply()`` where the registry is read.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from piwork.core import safe_read
from piwork.core.llm.catalog import BUILTIN_MODELS
from piwork.core.llm.config_values import ValueResolver
from piwork.core.llm.models_schema import loads_jsonc, validate_models_config
from piwork.core.llm.types import CostTier, Model, ModelCost

MODELS_FILE = "models.json"
# A new session's model when settings name none (or one without credentials): the first of these a
# provider with credentials offers, in this order, as Pi 1.6 chooses (custom models.json providers too).
PREFERRED_DEFAULTS: tuple[tuple[str, str], ...] = (
    ("amazon-bedrock", "us.anthropic.claude-opus-5-5"), ("ant-ling", "Ring-2.6-1T"),
    ("anthropic", "claude-opus-5-5"), ("openai", "gpt-6.2-sol"), ("azure", "gpt-6.2-sol"),
    ("openai-codex", "gpt-6.2-sol"), ("radius", "balanced"), ("nvidia", "nvidia/nemotron-3.5-super-vl-120b-a12b"),
    ("deepseek", "deepseek-v4-pro"), ("google", "gemini-4-argon"), ("google-vertex", "gemini-4-argon"),
    ("github-copilot", "gpt-6.1-sol"), ("openrouter", "moonshotai/kimi-k2.7-code"),
    ("vercel-ai-gateway", "zai/glm-5.3"), ("xai", "grok-4.7"), ("groq", "openai/gpt-oss-120b"),
    ("cerebras", "gpt-oss-120b"), ("zai", "glm-5.3"), ("zai-coding-cn", "glm-5.3"),
    ("mistral", "devstral-medium-latest"), ("minimax", "MiniMax-M3"), ("minimax-cn", "MiniMax-M3"),
    ("moonshotai", "kimi-k2.7-code"), ("moonshotai-cn", "kimi-k2.7-code"),
    ("huggingface", "moonshotai/Kimi-K2.7-Code"), ("fireworks", "accounts/fireworks/models/kimi-k3"),
    ("together", "moonshotai/Kimi-K3"), ("baseten", "zai-org/GLM-5.3"), ("opencode", "kimi-k2.7-code"),
    ("opencode-go", "kimi-k3.1-pro"), ("kimi-coding", "kimi-for-coding"),
)  # fmt: skip
_MODEL_DEFAULTS: dict[str, Any] = {
    "reasoning": False,
    "input": ["text"],
    "contextWindow": 128000,
    "maxTokens": 16384,
    "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
}


@dataclass(frozen=True)
class ModelDiagnostic:
    path: str
    message: str


def model_from_json(data: Mapping[str, Any]) -> Model:
    cost = data.get("cost") or {}
    tiers = tuple(
        CostTier(
            input_tokens_above=int(t.get("inputTokensAbove", 0)),
            input=float(t.get("input", 0)),
            output=float(t.get("output", 0)),
            cache_read=float(t.get("cacheRead", 0)),
            cache_write=float(t.get("cacheWrite", 0)),
        )
        for t in cost.get("tiers") or []
    )
    return Model(
        id=str(data["id"]),
        name=str(data.get("name") or data["id"]),
        api=str(data["api"]),
        provider=str(data["provider"]),
        base_url=str(data["baseUrl"]),
        reasoning=bool(data.get("reasoning", False)),
        input=tuple(data.get("input") or ("text",)),
        context_window=int(data.get("contextWindow", 128000)),
        max_tokens=int(data.get("maxTokens", 16384)),
        cost=ModelCost(
            input=float(cost.get("input", 0)),
            output=float(cost.get("output", 0)),
            cache_read=float(cost.get("cacheRead", 0)),
            cache_write=float(cost.get("cacheWrite", 0)),
            tiers=tiers,
        ),
        headers=dict(data.get("headers") or {}),
        compat=dict(data.get("compat") or {}),
        thinking_level_map=dict(data["thinkingLevelMap"])
        if data.get("thinkingLevelMap") is not None
        else None,
        sampling_params=dict(data.get("samplingParams") or {}),
        sampling_params_by_level={
            str(level): dict(params)
            for level, params in (data.get("samplingParamsByThinkingLevel") or {}).items()
            if isinstance(params, Mapping)
        },
        input_limits=dict(data.get("inputLimits") or {}),
        prompt_cache=dict(data.get("promptCache") or {}),
    )


def model_to_json(model: Model) -> dict[str, Any]:
    cost: dict[str, Any] = {
        "input": model.cost.input,
        "output": model.cost.output,
        "cacheRead": model.cost.cache_read,
        "cacheWrite": model.cost.cache_write,
    }
    if model.cost.tiers:
        cost["tiers"] = [
            {"inputTokensAbove": t.input_tokens_above, "input": t.input, "output": t.output,
             "cacheRead": t.cache_read, "cacheWrite": t.cache_write}
            for t in model.cost.tiers
        ]  # fmt: skip
    data: dict[str, Any] = {
        "id": model.id, "name": model.name, "api": model.api, "provider": model.provider, "baseUrl": model.base_url,
        "reasoning": model.reasoning, "input": list(model.input), "contextWindow": model.context_window,
        "maxTokens": model.max_tokens, "cost": cost,
    }  # fmt: skip
    if model.thinking_level_map is not None:
        data["thinkingLevelMap"] = dict(model.thinking_level_map)
    for key, value in (
        ("headers", model.headers),
        ("compat", model.compat),
        ("samplingParams", model.sampling_params),
        ("samplingParamsByThinkingLevel", model.sampling_params_by_level),
        ("inputLimits", model.input_limits),
        ("promptCache", model.prompt_cache),
    ):
        if value:
            data[key] = dict(value)
    return data


def _patch(base: dict[str, Any], patch: Mapping[str, Any]) -> dict[str, Any]:
    merged = {**base, **patch}
    for key in ("cost", "samplingParams", "samplingParamsByThinkingLevel", "compat", "headers"):
        if isinstance(base.get(key), dict) and isinstance(patch.get(key), dict):
            merged[key] = {**base[key], **patch[key]}
    return merged


@dataclass(frozen=True)
class RegistryState:
    """What a registry holds once models.json has been read: built in one go, applied in one step."""

    models: tuple[Model, ...]
    providers: Mapping[str, dict[str, Any]]
    diagnostics: tuple[ModelDiagnostic, ...]


class ModelRegistry:
    """Built-in and custom models; construct with the agent dir (``models.json`` is read at once)."""

    def __init__(self, agent_dir: Path | None, resolver: ValueResolver | None = None) -> None:
        self._path = agent_dir / MODELS_FILE if agent_dir is not None else None
        self._resolver = resolver or ValueResolver()
        self._models: list[Model] = []
        self._providers: dict[str, dict[str, Any]] = {}
        self.diagnostics: list[ModelDiagnostic] = []
        self.reload()

    @property
    def models(self) -> list[Model]:
        return list(self._models)

    @property
    def path(self) -> Path | None:
        return self._path

    def reload(self) -> None:
        self.apply(self.read_state())

    def read_state(self) -> RegistryState:
        """Read models.json and build what the registry would hold, without changing it (safe in a worker
        thread while the registry is read elsewhere)."""
        diagnostics: list[ModelDiagnostic] = []
        config = self._read_config(diagnostics)
        by_key: dict[tuple[str, str], dict[str, Any]] = {}
        for builtin in BUILTIN_MODELS:
            by_key[(builtin["provider"], builtin["id"])] = dict(builtin)
        for provider_id, provider in config.items():
            self._apply_provider(provider_id, provider, by_key)
        models = tuple(model_from_json(data) for data in by_key.values())
        return RegistryState(models, config, tuple(diagnostics))

    def apply(self, state: RegistryState) -> None:
        """Hold ``state`` from now on (one step: a reader sees the old contents or the new ones)."""
        self._models, self._providers = list(state.models), dict(state.providers)
        self.diagnostics = list(state.diagnostics)

    def _read_config(self, diagnostics: list[ModelDiagnostic]) -> dict[str, dict[str, Any]]:
        if self._path is None or not self._path.exists():
            return {}
        where = str(self._path)
        try:
            text = safe_read.read_bytes(self._path, safe_read.MODELS).decode("utf-8-sig")
        except (OSError, UnicodeDecodeError) as exc:
            diagnostics.append(ModelDiagnostic(where, f"Could not read models.json: {exc}"))
            return {}
        try:
            data = loads_jsonc(text)
        except ValueError as exc:
            diagnostics.append(ModelDiagnostic(where, f"models.json is not valid JSON: {exc}"))
            return {}
        errors = validate_models_config(data) or self._unresolved_models(data["providers"])
        if errors:
            listing = "\n".join(f"  - {e}" for e in errors)
            message = f"models.json was ignored (custom models are unavailable):\n{listing}"
            diagnostics.append(ModelDiagnostic(where, message))
            return {}
        providers: dict[str, dict[str, Any]] = data["providers"]
        return providers

    @staticmethod
    def _unresolved_models(providers: dict[str, dict[str, Any]]) -> list[str]:
        """Custom models whose api or baseUrl comes from nowhere (model, provider or same-id built-in)."""
        errors: list[str] = []
        for provider_id, provider in providers.items():
            for index, entry in enumerate(provider.get("models") or []):
                same_id = _model_defaults(provider_id, entry, provider)
                for key in ("api", "baseUrl"):
                    if not (entry.get(key) or provider.get(key) or same_id.get(key)):
                        errors.append(
                            f"providers.{provider_id}.models[{index}].{key}: not set here nor on the provider"
                        )
        return errors

    def _apply_provider(
        self,
        provider_id: str,
        provider: dict[str, Any],
        by_key: dict[tuple[str, str], dict[str, Any]],
    ) -> None:
        shared: dict[str, Any] = {}
        if "baseUrl" in provider:
            shared["baseUrl"] = provider["baseUrl"]
        compat = dict(provider.get("compat") or {})
        if provider.get("authHeader"):
            compat["authHeader"] = True
        headers = dict(provider.get("headers") or {})
        for key, data in list(by_key.items()):
            if key[0] != provider_id:
                continue
            patched = {**data, **shared}
            if compat:
                patched["compat"] = {**(data.get("compat") or {}), **compat}
            if headers:
                patched["headers"] = {**(data.get("headers") or {}), **headers}
            by_key[key] = patched
        for model_id, override in (provider.get("modelOverrides") or {}).items():
            if (provider_id, model_id) in by_key:
                by_key[(provider_id, model_id)] = _patch(by_key[(provider_id, model_id)], override)
        for entry in provider.get("models") or []:
            same_id = _model_defaults(provider_id, entry, provider)
            data = {**_MODEL_DEFAULTS, "name": entry["id"], "provider": provider_id}
            api = entry.get("api") or provider.get("api") or same_id.get("api")
            base_url = entry.get("baseUrl") or provider.get("baseUrl") or same_id.get("baseUrl")
            data.update({k: v for k, v in entry.items() if k not in ("compat", "headers")})
            data["api"], data["baseUrl"] = api, base_url
            data["compat"] = {**compat, **(entry.get("compat") or {})}
            data["headers"] = {**headers, **(entry.get("headers") or {})}
            by_key[(provider_id, entry["id"])] = data

    # ---- queries -------------------------------------------------------------------------------

    def find(self, provider: str, model_id: str) -> Model | None:
        for model in self._models:
            if model.provider == provider and model.id == model_id:
                return model
        return None

    def providers(self) -> list[str]:
        seen: dict[str, None] = {}
        for model in self._models:
            seen.setdefault(model.provider, None)
        return list(seen)

    def provider_name(self, provider: str) -> str:
        return str(self._providers.get(provider, {}).get("name") or provider)

    def config_api_key(self, provider: str) -> str | None:
        """The provider's ``apiKey`` from models.json, resolved (``$VAR``, ``!command``); None if unset."""
        raw = self._providers.get(provider, {}).get("apiKey")
        return self._resolver.resolve(raw) if isinstance(raw, str) else None

    def config_api_key_pending(self, provider: str) -> bool:
        """models.json gives ``provider`` its key as a ``!command`` that has not run yet."""
        raw = self._providers.get(provider, {}).get("apiKey")
        return isinstance(raw, str) and self._resolver.runs_command(raw)

    def headers_run_commands(self, model: Model) -> bool:
        """Resolving ``model``'s headers would run a ``!command`` not run yet: do it in a worker."""
        return any(isinstance(v, str) and self._resolver.runs_command(v) for v in model.headers.values())

    def with_resolved_headers(self, model: Model) -> Model:
        """The model with ``$VAR``/``!command`` header values resolved (unresolvable ones dropped).
        A ``!command`` runs the first time (up to 10 s): an asyncio caller runs this in a worker unless
        ``headers_run_commands`` says no command is left to run."""
        if not model.headers:
            return model
        resolved = {}
        for name, value in model.headers.items():
            result = self._resolver.resolve(value) if isinstance(value, str) else None
            if result is not None:
                resolved[name] = result
        return dataclasses.replace(model, headers=resolved)


def default_model(
    registry: ModelRegistry,
    has_credentials: Callable[[str], bool],
    default_provider: str | None = None,
    default_model_id: str | None = None,
) -> Model | None:
    """Settings' choice when it exists and its provider has credentials; else a preferred model of a
    provider with credentials, else the first such model."""
    if default_provider and default_model_id:
        chosen = registry.find(default_provider, default_model_id)
        if chosen is not None and has_credentials(chosen.provider):
            return chosen
    for provider, model_id in PREFERRED_DEFAULTS:
        candidate = registry.find(provider, model_id)
        if candidate is not None and has_credentials(provider):
            return candidate
    for model in registry.models:
        if model.api_supported and has_credentials(model.provider):
            return model
    return None


def _model_defaults(
    provider_id: str, entry: Mapping[str, Any], provider: Mapping[str, Any]
) -> dict[str, Any]:
    """The built-in model a custom entry takes a missing ``api``/``baseUrl`` from, chosen as Pi does.

    Among the provider's own built-in models: the same id, else one with the entry's (or provider's)
    api, else an OpenAI-compatible one, else the first. A provider with no built-ins gives nothing.
    """
    own = _builtins_of(provider_id)
    if not own:
        return {}
    api = entry.get("api") or provider.get("api")
    for candidate in (
        next((m for m in own if m["id"] == entry["id"]), None),
        next((m for m in own if api and m.get("api") == api), None),
        next((m for m in own if m.get("api") == "openai-completions"), None),
    ):
        if candidate is not None:
            return dict(candidate)
    return dict(own[0])


@functools.cache
def _builtins_of(provider_id: str) -> tuple[dict[str, Any], ...]:
    """The built-in models of a provider (asked once per custom model: cached, the catalog is constant)."""
    return tuple(m for m in BUILTIN_MODELS if m.get("provider") == provider_id)
