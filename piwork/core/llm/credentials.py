"""API keys: a key for this run only, the OS keyring (service ``piwork``), environment variables, models.json.

Keys are stored only in the keyring. When no keyring backend is usable (common on headless Linux),
``keyring_state()`` says so plainly and the user can use an environment variable or a key for this
session only; piwork never falls back to a plaintext file. Keys are never part of an exception text or
a ``repr``.

A desktop keyring may block for seconds (an unlock prompt, a D-Bus timeout). The store therefore asks it
about each provider once and remembers the answer: :meth:`CredentialStore.load` (or ``ensure_loaded``)
asks, and is meant for a worker thread; afterwards ``resolve``/``api_key`` answer those providers from
memory, and :attr:`CredentialStore.snapshot` tells a window where each provider's key comes from without
touching the keyring at all. ``store_key``/``delete_key``/``import_from_pi`` write through (worker thread
too) and keep the remembered answers current. A key changed in the keyring by another program is seen at
the next ``load``.

With a ``KeyRecord`` (``key_record``) the store notes every answer of the keyring and every key it stores or
removes, and :meth:`CredentialStore.look_up` (a run's own look-up) skips asking the keyring about a provider the
record says it holds no key for, when the environment or models.json has one: such a run never loads keyring.
"""

from __future__ import annotations

import contextlib
import enum
import json
import os
import re
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from piwork.core import safe_read
from piwork.core.errors import PiworkError
from piwork.core.llm.catalog import PROVIDER_ENV_KEYS
from piwork.core.llm.key_record import KeyRecord
from piwork.core.llm.models_file import NO_KEY_NEEDED

if TYPE_CHECKING:
    import keyring.backend

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
class KeyInfo:
    """Where a provider's key comes from (never the key itself)."""

    source: KeySource
    detail: str = ""  # e.g. the environment variable's name
    no_key_needed: bool = False  # models.json marks the server as needing none (its apiKey is the mark)


@dataclass(frozen=True)
class KeySnapshot:
    """What is known without asking the keyring: its state, and for each provider asked about so far where
    its key comes from (None: it has none). A provider not in ``keys`` has not been asked about yet."""

    keyring: KeyringState
    keys: Mapping[str, KeyInfo | None]

    def checked(self, provider: str) -> bool:
        return provider in self.keys

    def key_info(self, provider: str) -> KeyInfo | None:
        return self.keys.get(provider)

    def has_key(self, provider: str) -> bool:
        return self.keys.get(provider) is not None


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


PENDING_COMMAND = "a command, run when the key is first needed"


def choose_keyring_backend() -> None:
    """Import keyring and let it choose the OS backend (it probes every installed backend: a few hundred
    milliseconds). A store that asks the keyring afterwards finds the choice made. Blocking: a worker's
    call, made while other start-up work goes on; a failure here shows where the keyring is first asked."""
    with contextlib.suppress(Exception):
        import keyring

        keyring.get_keyring()


class CredentialStore:
    """Resolves and stores API keys. ``backend`` defaults to the OS keyring keyring picks, looked for
    when the keyring is first asked (a run whose key comes from elsewhere never loads keyring)."""

    def __init__(
        self,
        backend: keyring.backend.KeyringBackend | None = None,
        env: Mapping[str, str] | None = None,
        config_key: Callable[[str], str | None] | None = None,
        config_key_pending: Callable[[str], bool] | None = None,
        record: KeyRecord | None = None,
    ) -> None:
        self._chosen_backend = backend
        self._record = record  # which providers the keyring holds no key for, kept across runs
        self._env = env if env is not None else os.environ
        self._config_key = config_key  # e.g. ModelRegistry.config_api_key
        # whether models.json's key is a ``!command`` not run yet: it runs when the key is first needed
        self._config_key_pending = config_key_pending  # e.g. ModelRegistry.config_api_key_pending
        self._session: dict[str, str] = {}
        self._state: KeyringState | None = None
        self._used: set[str] = set()  # every key handed out, to mask wherever output is kept
        # The keyring's answer per provider (None: no key there), kept once asked. Workers write these
        # while a window reads the snapshot: ``_lock`` guards them and is never held while the keyring
        # is asked, so a reader never waits on the keyring. ``_asking`` lets one thread at a time load or
        # write, so a load that started before a write cannot put back what the write replaced.
        self._keyring: dict[str, str | None] = {}
        self._stored: dict[
            str, KeyInfo | None
        ] = {}  # where loaded providers' keys come from (bar session keys)
        self._snapshot: KeySnapshot | None = None
        self._loaded = False
        self._lock = threading.Lock()
        self._asking = threading.RLock()
        self._choosing = threading.Lock()

    @property
    def _backend(self) -> keyring.backend.KeyringBackend:
        """The keyring backend, chosen on first use: importing keyring and finding a backend takes
        a few hundred milliseconds (it probes every installed backend)."""
        with self._choosing:
            if self._chosen_backend is None:
                import keyring

                self._chosen_backend = keyring.get_keyring()
            return self._chosen_backend

    # ---- keyring status --------------------------------------------------------------------------

    def keyring_state(self, refresh: bool = False) -> KeyringState:
        """Whether keys can be saved. Asks the keyring the first time (or with ``refresh``): a worker's call."""
        state = self._state
        if state is None or refresh:
            state = self._probe()
            with self._lock:
                self._state = state
                self._snapshot = None
        return state

    def _probe(self) -> KeyringState:
        import keyring.errors
        from keyring.backends import chainer, fail

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
        except Exception as exc:  # a backend fails in its own ways (D-Bus errors, a missing daemon...)
            return KeyringState(
                KeyringStatus.ERROR,
                name,
                f"The system keyring cannot be used ({type(exc).__name__}). Use an environment variable instead.",
            )
        return KeyringState(KeyringStatus.AVAILABLE, name, "API keys are saved in the system keyring.")

    # ---- what is known without asking the keyring -----------------------------------------------

    @property
    def snapshot(self) -> KeySnapshot | None:
        """Where the key of each provider loaded so far comes from, from memory only (it never blocks);
        None until the first ``load``/``ensure_loaded`` has finished."""
        with self._lock:
            if self._snapshot is None and self._state is not None and self._loaded:
                keys = dict(self._stored)
                for provider in self._session:
                    keys[provider] = KeyInfo(KeySource.SESSION)
                self._snapshot = KeySnapshot(self._state, keys)
            return self._snapshot

    def load(self, providers: Iterable[str]) -> KeySnapshot:
        """Ask the keyring afresh whether it works and about each of ``providers``. Blocks until the
        keyring answers: call it from a worker thread."""
        with self._asking:
            return self._load(list(providers), refresh=True)

    def ensure_loaded(self, providers: Iterable[str]) -> KeySnapshot:
        """Like ``load``, but asks the keyring only about providers not asked yet; where each provider's
        key comes from is worked out again from what it said (models.json may have changed since)."""
        with self._asking:
            return self._load(list(providers), refresh=False)

    def look_up(self, providers: Iterable[str]) -> None:
        """Find where each of ``providers``' keys comes from, as ``ensure_loaded`` does, without asking the
        keyring first whether it works, nor about a provider the record says it holds no key for while
        the environment or models.json has one (the keyring's key would come first, and there is none).
        Makes no ``snapshot``. Blocking when the keyring is asked: a worker's call."""
        with self._asking:
            for provider in providers:
                with self._lock:
                    known = provider in self._keyring
                record = self._record
                if (
                    not known
                    and record is not None
                    and self._key_elsewhere(provider)
                    and record.lacks(provider)
                ):
                    with self._lock:
                        self._keyring.setdefault(provider, None)
                self._remember(provider)

    def _key_elsewhere(self, provider: str) -> bool:
        """The environment or models.json gives ``provider`` a key (a ``!command`` not run yet counts)."""
        if any(self._env.get(var, "").strip() for var in env_vars_for(provider)):
            return True
        if self._config_key_pending is not None and self._config_key_pending(provider):
            return True
        return self._config_key is not None and bool(self._config_key(provider))

    def _load(self, providers: list[str], refresh: bool) -> KeySnapshot:
        state = self.keyring_state(refresh=refresh)
        for provider in providers:
            if refresh:
                value = self._ask_keyring(provider, state)
                with self._lock:
                    self._keyring[provider] = value
            self._remember(provider)
        with self._lock:
            self._loaded = True
            self._snapshot = None
        snapshot = self.snapshot
        assert snapshot is not None  # loaded, with a keyring state
        return snapshot

    def _remember(self, provider: str) -> None:
        """Work out again where ``provider``'s key comes from (models.json's ``!command`` is not run for it:
        it runs when a request needs the key)."""
        pending = self._pending_command(provider)
        resolved = None if pending else self._resolve_stored(provider)
        info = KeyInfo(KeySource.MODELS_JSON, PENDING_COMMAND) if pending else None
        if resolved is not None:
            marked = resolved.source is KeySource.MODELS_JSON and resolved.value == NO_KEY_NEEDED
            info = KeyInfo(resolved.source, resolved.detail, no_key_needed=marked)
        with self._lock:
            self._stored[provider] = info
            self._snapshot = None

    # ---- session keys ----------------------------------------------------------------------------

    def set_session_key(self, provider: str, key: str) -> None:
        """A key for this run only (``--api-key`` or "use for this session"); it is never written anywhere."""
        if key.strip():
            with self._lock:
                self._session[provider] = key.strip()
                self._snapshot = None

    def clear_session_key(self, provider: str) -> None:
        with self._lock:
            self._session.pop(provider, None)
            self._snapshot = None

    # ---- keyring ---------------------------------------------------------------------------------

    def store_key(self, provider: str, key: str) -> None:
        """Save ``provider``'s key in the keyring (blocking: a worker's call)."""
        state = self.keyring_state()
        if not state.usable:
            raise CredentialError(state.message)
        key = key.strip()
        if not key:
            raise CredentialError("The API key is empty.")
        with self._asking:
            if self._record is not None:  # before the keyring holds it, the record stops saying it has none
                self._record.note_found(provider)
            try:
                self._backend.set_password(SERVICE, provider, key)
            except Exception as exc:
                raise CredentialError(
                    f"The key for {provider} could not be saved ({type(exc).__name__})."
                ) from None
            with self._lock:
                self._keyring[provider] = key
            self._remember(provider)

    def delete_key(self, provider: str) -> None:
        """Remove ``provider``'s key from the keyring, if it holds one (blocking: a worker's call)."""
        import keyring.errors

        with self._asking:
            since = self._record.stamp() if self._record is not None else None
            try:
                self._backend.delete_password(SERVICE, provider)
            except keyring.errors.PasswordDeleteError:
                pass  # there was none
            except Exception as exc:
                raise CredentialError(
                    f"The key for {provider} could not be removed ({type(exc).__name__})."
                ) from None
            if self._record is not None:
                self._record.note_missing(provider, since)
            with self._lock:
                self._keyring[provider] = None
            self._remember(provider)

    def _keyring_key(self, provider: str) -> str | None:
        """The keyring's key for ``provider``: remembered, or asked now (and remembered)."""
        with self._lock:
            if provider in self._keyring:
                return self._keyring[provider]
        value = self._ask_keyring(provider, self.keyring_state())
        with self._lock:
            self._keyring[provider] = value
        return value

    def _ask_keyring(self, provider: str, state: KeyringState) -> str | None:
        record = self._record
        since = record.stamp() if record is not None else None
        if not state.usable:
            if record is not None and state.status is KeyringStatus.NO_BACKEND:
                record.note_missing(provider, since)  # no keyring here: none of its keys either
            return None
        try:
            value = self._backend.get_password(SERVICE, provider)
        except Exception:  # a keyring that fails now gives no key; the state says why it cannot be used
            return None
        if record is not None:
            if value:
                record.note_found(provider)
            else:
                record.note_missing(provider, since)
        return value or None

    # ---- resolution ------------------------------------------------------------------------------

    def resolve(self, provider: str) -> ResolvedKey | None:
        """The key to use: this session's, then the keyring's, then the environment's, then models.json's.
        Asks the keyring only about a provider not loaded yet."""
        session = self._session.get(provider)
        if session is not None:
            return ResolvedKey(session, KeySource.SESSION)
        return self._resolve_stored(provider)

    def _resolve_stored(self, provider: str) -> ResolvedKey | None:
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
        """Whether a key is there. A models.json key given as a ``!command`` counts without running the
        command: it runs when the key is needed for a request, never for a provider not in use."""
        if self._pending_command(provider):
            return True
        return self.resolve(provider) is not None

    def _pending_command(self, provider: str) -> bool:
        """The provider's key would come from a models.json ``!command`` not run yet (no session key,
        none in the keyring or the environment)."""
        if self._config_key_pending is None or not self._config_key_pending(provider):
            return False
        if self._session.get(provider) or self._keyring_key(provider):
            return False
        return not any(self._env.get(var, "").strip() for var in env_vars_for(provider))

    # ---- one-time import from Pi's auth.json ------------------------------------------------------

    def import_from_pi(self, auth_json: Path) -> ImportReport:
        """Copy API-key entries of Pi's ``auth.json`` into the keyring (the file itself is left untouched).
        Blocking: a worker's call."""
        try:
            data = json.loads(
                safe_read.read_text(auth_json, safe_read.AUTH, errors="strict", strip_bom=False)
            )
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
