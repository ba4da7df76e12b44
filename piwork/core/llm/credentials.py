"""API keys: a key for this run only, the OS keyring (service ``piwork``), environment variables, models.json.

Keys are stored only in the keyring. When no keyring backend is usable (common on headless Linux),
``keyring_state()`` says so plainly and the user can use an environment variable or a key for this
session only; piwork never falls back to a plaintext file. Keys are never part of an exception text or
a ``repr``. A desktop keyring may block while it asks the user to unlock it: call from a worker thread.
"""

from __future__ import annotations

import enum
import json
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import keyring
import keyring.backend
import keyring.errors
from keyring.backends import chainer, fail

from piwork.core.errors import PiworkError
from piwork.core.llm.catalog import PROVIDER_ENV_KEYS

SERVICE = "piwork"


class CredentialError(PiworkError):
    """A key could not be stored or removed (the message never contains the key)."""


class KeyringStatus(enum.Enum):
    AVAILABLE = "available"
    NO_BACKEND = "no_backend"
    LOCKED = "locked"
    ERROR = "error"


@dataclass(frozen=True)
class KeyringState:
    status: KeyringStatus
    backend: str
    message: str  # for people: what works and what to do instead

    @property
    def usable(self) -> bool:
        return self.status is KeyringStatus.AVAILABLE


class KeySource(enum.Enum):
    SESSION = "session"
    KEYRING = "keyring"
    ENVIRONMENT = "environment"
    MODELS_JSON = "models.json"


@dataclass(frozen=True)
class ResolvedKey:
    value: str = field(repr=False)
    source: KeySource
    detail: str = ""  # e.g. the environment variable's name


@dataclass(frozen=True)
class ImportReport:
    imported: list[str]
    skipped: list[str]  # providers whose entry is not an API key (OAuth etc.)
    problems: list[str]


def env_vars_for(provider: str) -> tuple[str, ...]:
    """Environment variables that may hold ``provider``'s key, most specific first."""
    generic = re.sub(r"[^A-Za-z0-9]", "_", provider).upper() + "_API_KEY"
    known = PROVIDER_ENV_KEYS.get(provider, ())
    return known if generic in known else (*known, generic)


def _backend_name(backend: keyring.backend.KeyringBackend) -> str:
    return f"{type(backend).__module__}.{type(backend).__name__}"


class CredentialStore:
    """Resolves and stores API keys. ``backend`` defaults to the OS keyring keyring picks."""

    def __init__(
        self,
        backend: keyring.backend.KeyringBackend | None = None,
        env: Mapping[str, str] | None = None,
        config_key: Callable[[str], str | None] | None = None,
    ) -> None:
        self._backend = backend if backend is not None else keyring.get_keyring()
        self._env = env if env is not None else os.environ
        self._config_key = config_key  # e.g. ModelRegistry.config_api_key
        self._session: dict[str, str] = {}
        self._state: KeyringState | None = None
        self._used: set[str] = set()  # every key handed out, to mask wherever output is kept

    # ---- keyring status --------------------------------------------------------------------------

    def keyring_state(self, refresh: bool = False) -> KeyringState:
        if self._state is None or refresh:
            self._state = self._probe()
        return self._state

    def _probe(self) -> KeyringState:
        backend = self._backend
        name = _backend_name(backend)
        if isinstance(backend, fail.Keyring) or (
            isinstance(backend, chainer.ChainerBackend) and not backend.backends
        ):
            return KeyringState(
                KeyringStatus.NO_BACKEND,
                name,
                "No system keyring is available, so API keys cannot be saved. "
                "Set the provider's environment variable (for example ANTHROPIC_API_KEY) "
                "or enter a key for this session only.",
            )
        try:
            backend.get_password(SERVICE, "__piwork_probe__")
        except keyring.errors.KeyringLocked:
            return KeyringState(
                KeyringStatus.LOCKED,
                name,
                "The system keyring is locked. Unlock it, or use an environment variable.",
            )
        except (keyring.errors.KeyringError, OSError, RuntimeError) as exc:
            return KeyringState(
                KeyringStatus.ERROR,
                name,
                f"The system keyring cannot be used ({type(exc).__name__}). Use an environment variable instead.",
            )
        return KeyringState(KeyringStatus.AVAILABLE, name, "API keys are saved in the system keyring.")

    # ---- session keys ----------------------------------------------------------------------------

    def set_session_key(self, provider: str, key: str) -> None:
        """A key for this run only (``--api-key`` or "use for this session"); it is never written anywhere."""
        if key.strip():
            self._session[provider] = key.strip()

    def clear_session_key(self, provider: str) -> None:
        self._session.pop(provider, None)

    # ---- keyring ---------------------------------------------------------------------------------

    def store_key(self, provider: str, key: str) -> None:
        state = self.keyring_state()
        if not state.usable:
            raise CredentialError(state.message)
        key = key.strip()
        if not key:
            raise CredentialError("The API key is empty.")
        try:
            self._backend.set_password(SERVICE, provider, key)
        except (keyring.errors.KeyringError, OSError, RuntimeError) as exc:
            raise CredentialError(
                f"The key for {provider} could not be saved ({type(exc).__name__})."
            ) from None

    def delete_key(self, provider: str) -> None:
        try:
            self._backend.delete_password(SERVICE, provider)
        except keyring.errors.PasswordDeleteError:
            return
        except (keyring.errors.KeyringError, OSError, RuntimeError) as exc:
            raise CredentialError(
                f"The key for {provider} could not be removed ({type(exc).__name__})."
            ) from None

    def _keyring_key(self, provider: str) -> str | None:
        if not self.keyring_state().usable:
            return None
        try:
            value = self._backend.get_password(SERVICE, provider)
        except (keyring.errors.KeyringError, OSError, RuntimeError):
            return None
        return value or None

    # ---- resolution ------------------------------------------------------------------------------

    def resolve(self, provider: str) -> ResolvedKey | None:
        """The key to use: this session's, then the keyring's, then the environment's, then models.json's."""
        if provider in self._session:
            return ResolvedKey(self._session[provider], KeySource.SESSION)
        stored = self._keyring_key(provider)
        if stored:
            return ResolvedKey(stored, KeySource.KEYRING)
        for var in env_vars_for(provider):
            value = self._env.get(var, "").strip()
            if value:
                return ResolvedKey(value, KeySource.ENVIRONMENT, var)
        if self._config_key is not None:
            configured = self._config_key(provider)
            if configured:
                return ResolvedKey(configured, KeySource.MODELS_JSON)
        return None

    def api_key(self, provider: str) -> str | None:
        resolved = self.resolve(provider)
        if resolved is None:
            return None
        self._used.add(resolved.value)
        return resolved.value

    def known_secrets(self) -> tuple[str, ...]:
        """Keys to keep out of output: those handed out so far and every provider key in the environment."""
        found = set(self._used)
        for names in PROVIDER_ENV_KEYS.values():
            for var in names:
                value = self._env.get(var, "").strip()
                if value:
                    found.add(value)
        return tuple(sorted(found))

    def has_credentials(self, provider: str) -> bool:
        return self.resolve(provider) is not None

    # ---- one-time import from Pi's auth.json ------------------------------------------------------

    def import_from_pi(self, auth_json: Path) -> ImportReport:
        """Copy API-key entries of Pi's ``auth.json`` into the keyring (the file itself is left untouched)."""
        try:
            data = json.loads(auth_json.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            return ImportReport([], [], [f"{auth_json}: could not be read ({type(exc).__name__})"])
        if not isinstance(data, dict):
            return ImportReport([], [], [f"{auth_json}: not a JSON object"])
        imported: list[str] = []
        skipped: list[str] = []
        problems: list[str] = []
        for provider, entry in data.items():
            key = entry.get("key") if isinstance(entry, dict) and entry.get("type") == "api_key" else None
            if not isinstance(key, str) or not key.strip() or key.startswith("!") or "$" in key:
                skipped.append(str(provider))  # not a plain key (OAuth, a command or an env reference)
                continue
            try:
                self.store_key(str(provider), key)
            except CredentialError as exc:
                problems.append(f"{provider}: {exc}")
            else:
                imported.append(str(provider))
        return ImportReport(imported, skipped, problems)
