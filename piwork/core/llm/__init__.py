"""Model providers: wire protocols, model registry, credentials and offline token counting.

Modules, for the rest of the engine:

- ``streaming.stream(model, context, options)`` / ``streaming.complete(...)``: one assistant message,
  as typed events (``types``) ending in ``DoneEvent`` or ``ErrorEvent``; never raises for request failures.
  Stop a request with ``StreamOptions(abort=asyncio.Event())``.
- ``errors``: ``classify``, ``is_context_overflow``, ``is_retryable_text`` for failed messages.
- ``models.ModelRegistry(agent_dir)``: built-in + ``models.json`` models, ``default_model(...)``.
- ``credentials.CredentialStore``: keys from this session, the keyring, the environment, models.json;
  ``keyring_state()`` tells whether keys can be saved; ``load``/``ensure_loaded`` ask the keyring (a worker's
  call), after which ``snapshot`` (a ``KeySnapshot``) says from memory where each provider's key comes from.
- ``tokens.Tokenizers(agent_dir)``: offline tiktoken counters per model (``load_async`` first).
- ``thinking``: supported thinking levels per model (masking keys in text and headers is ``piwork.core.redaction``'s).

Public API (what callers outside the engine import from this package):
- models: ``Model``, ``ModelRegistry`` (``RegistryState``: its contents read in a worker), ``BUILTIN_MODELS``, ``THINKING_LEVELS`` of ``ThinkingLevel``,
  ``ToolSpec``;
  ``list_models`` -> ``ModelListing``; the ``models.json`` providers: ``read_providers``,
  ``save_provider``, ``remove_provider`` -> ``ModelsFileChange``, ``ModelsFileError``, ``OPENAI_COMPLETIONS_API``,
  ``NO_KEY_NEEDED``;
- credentials: ``CredentialStore``, ``CredentialError``, ``KeySource``, ``KeySnapshot``, ``KeyInfo``,
  ``ImportReport``, ``env_vars_for``; ``KeyRecord`` (``KeyRecord.of(agent_dir)``), the record of providers
  the keyring holds no key for (a store given it keeps it current);
- failures: ``classify`` -> ``ErrorKind``, ``readable_error``; ``is_loopback`` for local endpoints;
- tokens: ``Tokenizers``, ``TokenCounter``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from piwork.core.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from piwork.core.llm.catalog import BUILTIN_MODELS
    from piwork.core.llm.credentials import (
        CredentialError,
        CredentialStore,
        ImportReport,
        KeyInfo,
        KeySnapshot,
        KeySource,
        env_vars_for,
    )
    from piwork.core.llm.error_text import readable_error
    from piwork.core.llm.errors import classify
    from piwork.core.llm.key_record import KeyRecord
    from piwork.core.llm.model_listing import ModelListing, list_models
    from piwork.core.llm.models import ModelRegistry, RegistryState
    from piwork.core.llm.models_file import (
        NO_KEY_NEEDED,
        OPENAI_COMPLETIONS_API,
        ModelsFileChange,
        ModelsFileError,
        read_providers,
        remove_provider,
        save_provider,
    )
    from piwork.core.llm.tokens import TokenCounter, Tokenizers
    from piwork.core.llm.transport import is_loopback
    from piwork.core.llm.types import THINKING_LEVELS, ErrorKind, Model, ThinkingLevel, ToolSpec

__all__ = [
    "BUILTIN_MODELS",
    "NO_KEY_NEEDED",
    "OPENAI_COMPLETIONS_API",
    "THINKING_LEVELS",
    "CredentialError",
    "CredentialStore",
    "ErrorKind",
    "ImportReport",
    "KeyInfo",
    "KeyRecord",
    "KeySnapshot",
    "KeySource",
    "Model",
    "ModelListing",
    "ModelRegistry",
    "ModelsFileChange",
    "ModelsFileError",
    "RegistryState",
    "ThinkingLevel",
    "TokenCounter",
    "Tokenizers",
    "ToolSpec",
    "classify",
    "env_vars_for",
    "is_loopback",
    "list_models",
    "read_providers",
    "readable_error",
    "remove_provider",
    "save_provider",
]

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(
        __name__,
        {
            "BUILTIN_MODELS": "piwork.core.llm.catalog",
            "CredentialError": "piwork.core.llm.credentials",
            "CredentialStore": "piwork.core.llm.credentials",
            "ImportReport": "piwork.core.llm.credentials",
            "KeyInfo": "piwork.core.llm.credentials",
            "KeySnapshot": "piwork.core.llm.credentials",
            "KeySource": "piwork.core.llm.credentials",
            "env_vars_for": "piwork.core.llm.credentials",
            "readable_error": "piwork.core.llm.error_text",
            "classify": "piwork.core.llm.errors",
            "KeyRecord": "piwork.core.llm.key_record",
            "ModelListing": "piwork.core.llm.model_listing",
            "list_models": "piwork.core.llm.model_listing",
            "ModelRegistry": "piwork.core.llm.models",
            "RegistryState": "piwork.core.llm.models",
            "NO_KEY_NEEDED": "piwork.core.llm.models_file",
            "OPENAI_COMPLETIONS_API": "piwork.core.llm.models_file",
            "ModelsFileChange": "piwork.core.llm.models_file",
            "ModelsFileError": "piwork.core.llm.models_file",
            "read_providers": "piwork.core.llm.models_file",
            "remove_provider": "piwork.core.llm.models_file",
            "save_provider": "piwork.core.llm.models_file",
            "TokenCounter": "piwork.core.llm.tokens",
            "Tokenizers": "piwork.core.llm.tokens",
            "is_loopback": "piwork.core.llm.transport",
            "THINKING_LEVELS": "piwork.core.llm.types",
            "ErrorKind": "piwork.core.llm.types",
            "Model": "piwork.core.llm.types",
            "ThinkingLevel": "piwork.core.llm.types",
            "ToolSpec": "piwork.core.llm.types",
        },
    )
