"""Credentials: keyring present/absent/locked, resolution order, import from Pi, and no key leaks."""

from __future__ import annotations

import json
import logging
import threading
from pathlib import Path

import keyring.backend
import keyring.errors
import pytest
from keyring.backends import fail

from piwork.core.llm.credentials import (
    SERVICE,
    CredentialError,
    CredentialStore,
    KeyInfo,
    KeyringStatus,
    KeySource,
    env_vars_for,
)
from piwork.core.llm.streaming import complete
from piwork.core.llm.types import StreamOptions
from piwork.core.redaction import header_secrets, redact_text, unsendable_header
from tests.core.llm.helpers import context
from tests.support import Failure, LoopbackServer, Text, Turn
from tests.support.blocking_keyring import BlockingKeyring

KEY = "sk-ant-api03-PLANTED-KEY-7f3a9c"


class MemoryKeyring(keyring.backend.KeyringBackend):
    """A real keyring backend that keeps passwords in a dict (no OS service needed)."""

    priority = 1  # type: ignore[assignment]

    def __init__(self) -> None:
        super().__init__()
        self.store: dict[tuple[str, str], str] = {}

    def get_password(self, service: str, username: str) -> str | None:
        return self.store.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self.store[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        if (service, username) not in self.store:
            raise keyring.errors.PasswordDeleteError("not found")
        del self.store[(service, username)]


class LockedKeyring(MemoryKeyring):
    def get_password(self, service: str, username: str) -> str | None:
        raise keyring.errors.KeyringLocked("locked")


def test_no_backend_is_reported_plainly_and_storing_fails_without_the_key() -> None:
    store = CredentialStore(fail.Keyring(), env={})
    state = store.keyring_state()
    assert state.status is KeyringStatus.NO_BACKEND and not state.usable
    assert "environment variable" in state.message and "session only" in state.message
    with pytest.raises(CredentialError) as info:
        store.store_key("anthropic", KEY)
    assert KEY not in str(info.value)
    assert store.resolve("anthropic") is None


def test_this_machine_default_backend_does_not_crash() -> None:
    state = CredentialStore(env={}).keyring_state()
    assert state.status in KeyringStatus and state.message


def test_locked_keyring() -> None:
    store = CredentialStore(LockedKeyring(), env={"ANTHROPIC_API_KEY": "env-key"})
    assert store.keyring_state().status is KeyringStatus.LOCKED
    resolved = store.resolve("anthropic")
    assert resolved is not None and resolved.source is KeySource.ENVIRONMENT


def test_resolution_order() -> None:
    backend = MemoryKeyring()
    env = {"ANTHROPIC_API_KEY": "env-key", "MY_LOCAL_API_KEY": "local-env"}
    store = CredentialStore(backend, env=env, config_key=lambda p: "cfg-key" if p == "ollama" else None)
    resolved = store.resolve("anthropic")
    assert resolved is not None and (resolved.value, resolved.source, resolved.detail) == (
        "env-key", KeySource.ENVIRONMENT, "ANTHROPIC_API_KEY",
    )  # fmt: skip
    store.store_key("anthropic", f"  {KEY}\n")
    assert backend.store[(SERVICE, "anthropic")] == KEY
    assert store.resolve("anthropic").source is KeySource.KEYRING  # type: ignore[union-attr]
    store.set_session_key("anthropic", "one-run")
    assert store.api_key("anthropic") == "one-run"
    store.clear_session_key("anthropic")
    store.delete_key("anthropic")
    store.delete_key("anthropic")  # deleting twice is fine
    assert store.api_key("anthropic") == "env-key"
    assert store.api_key("my-local") == "local-env"  # generic <PROVIDER>_API_KEY
    assert store.resolve("ollama").source is KeySource.MODELS_JSON  # type: ignore[union-attr]
    assert not store.has_credentials("nobody")


def test_empty_environment_values_are_ignored() -> None:
    assert CredentialStore(MemoryKeyring(), env={"OPENAI_API_KEY": "  "}).resolve("openai") is None
    assert env_vars_for("openrouter") == ("OPENROUTER_API_KEY",)


def test_resolved_key_repr_hides_the_value() -> None:
    store = CredentialStore(MemoryKeyring(), env={"OPENAI_API_KEY": KEY})
    assert KEY not in repr(store.resolve("openai"))


def test_import_from_pi_copies_api_keys_only(tmp_path: Path) -> None:
    auth = tmp_path / "auth.json"
    content = {
        "anthropic": {"type": "api_key", "key": KEY},
        "openai": {"type": "oauth", "access": "tok"},
        "groq": {"type": "api_key", "key": "!pass groq"},
    }
    auth.write_text(json.dumps(content))
    before = auth.read_bytes()
    backend = MemoryKeyring()
    report = CredentialStore(backend, env={}).import_from_pi(auth)
    assert report.imported == ["anthropic"] and sorted(report.skipped) == ["groq", "openai"]
    assert backend.store == {(SERVICE, "anthropic"): KEY}
    assert auth.read_bytes() == before  # Pi's file is never written
    no_keyring = CredentialStore(fail.Keyring(), env={}).import_from_pi(auth)
    assert no_keyring.imported == [] and no_keyring.problems and KEY not in " ".join(no_keyring.problems)
    broken = tmp_path / "broken.json"
    broken.write_text("{nope")
    assert CredentialStore(backend, env={}).import_from_pi(broken).problems


def test_redaction_helpers() -> None:
    assert redact_text(f"a {KEY} b", [KEY, "ab"]) == "a *** b"
    pasted = "sk-é-pasted-key-0123\n"  # quoted by error texts as b'sk-\xc3\xa9-pasted-key-0123\n'
    assert redact_text(f"bad value {pasted.encode()!r}", [pasted]) == "bad value b'***'"
    assert redact_text(f"{pasted.encode('unicode_escape').decode()}", [pasted]) == "***"
    assert header_secrets({"Authorization": "Bearer tok-1", "x-other": "v"}) == ("Bearer tok-1", "tok-1")
    # Placeholders and short values are never secrets: masking them would rewrite ordinary text.
    for placeholder in ("ollama", "EMPTY", "lm-studio", "test", "sk-no-key-required", "Bearer tok-1"):
        assert redact_text(f"import {placeholder}_client", [placeholder]) == f"import {placeholder}_client"
    assert unsendable_header({"a": "fine", "b": "line\nbreak"}) == "b"
    assert unsendable_header({"a": "tab\tok"}) is None


def test_planted_key_never_reaches_errors_logs_or_files(
    loopback: LoopbackServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    import asyncio

    caplog.set_level(logging.DEBUG)
    loopback.script(
        Turn(failure=Failure.http(401, f'{{"error": {{"message": "Incorrect API key provided: {KEY}"}}}}')),
        Turn([Text(f"echo {KEY[:6]}")], failure=Failure.cut(3)),
        Turn(failure=Failure.http(400, f"bad header x-api-key: {KEY}")),
    )
    store = CredentialStore(MemoryKeyring(), env={})
    store.store_key("anthropic", KEY)
    options = StreamOptions(api_key=store.api_key("anthropic"))
    outputs = []
    for model in (loopback.openai_model(), loopback.anthropic_model(), loopback.anthropic_model()):
        message = asyncio.run(complete(model, context(), options))
        outputs.append(json.dumps(message))
    assert all(KEY not in text for text in outputs)
    assert "***" in outputs[0] and "***" in outputs[2]
    assert KEY not in caplog.text
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert all(KEY.encode() not in p.read_bytes() for p in written)
    # The key did travel to the server, in the right header for each protocol.
    assert loopback.requests[0].headers["authorization"] == f"Bearer {KEY}"
    assert loopback.requests[1].headers["x-api-key"] == KEY


def test_options_and_model_reprs_hide_keys_and_headers(loopback: LoopbackServer) -> None:
    options = StreamOptions(api_key=KEY, headers={"authorization": f"Bearer {KEY}"})
    model = loopback.openai_model(headers={"x-api-key": KEY})
    assert KEY not in repr(options) and KEY not in repr(model)


def test_once_loaded_the_store_answers_from_memory_and_writes_keep_it_current() -> None:
    backend = BlockingKeyring({"anthropic": KEY})
    backend.open()
    store = CredentialStore(backend, env={"OPENAI_API_KEY": "env-key"})
    assert store.snapshot is None  # nothing asked yet: a window shows "checking", not "no key"
    snapshot = store.load(["anthropic", "openai", "groq"])
    assert snapshot.keyring.usable
    assert snapshot.key_info("anthropic") == KeyInfo(KeySource.KEYRING)
    assert snapshot.key_info("openai") == KeyInfo(KeySource.ENVIRONMENT, "OPENAI_API_KEY")
    assert snapshot.checked("groq") and not snapshot.has_key("groq")
    assert not snapshot.checked("mistral")
    asked = backend.waiting
    assert store.api_key("anthropic") == KEY and store.has_credentials("openai")
    assert not store.has_credentials("groq")
    store.set_session_key("groq", "one-run")
    assert store.snapshot is not None and store.snapshot.key_info("groq") == KeyInfo(KeySource.SESSION)
    store.clear_session_key("groq")
    assert store.snapshot is not None and not store.snapshot.has_key("groq")
    assert backend.waiting == asked  # every answer above came from memory

    store.store_key("groq", "gsk-new")
    store.delete_key("anthropic")
    assert [call for call, _thread in backend.callers[asked:]] == ["set groq", "delete anthropic"]
    after = store.snapshot
    assert after is not None and after.key_info("groq") == KeyInfo(KeySource.KEYRING)
    assert not after.has_key("anthropic") and store.api_key("groq") == "gsk-new"
    assert KEY not in repr(after)

    store.ensure_loaded(["anthropic", "groq", "mistral"])  # only the new provider is asked about
    assert [call for call, _thread in backend.callers[asked + 2 :]] == ["get mistral"]
    backend.passwords[(SERVICE, "mistral")] = "changed elsewhere"
    assert store.api_key("mistral") is None  # remembered until the next load...
    store.load(["mistral"])
    assert store.api_key("mistral") == "changed elsewhere"  # ...which asks again


def test_the_snapshot_never_waits_for_a_keyring_that_is_still_answering() -> None:
    backend = BlockingKeyring({"anthropic": KEY})
    store = CredentialStore(backend, env={})
    loading = threading.Thread(target=store.load, args=(["anthropic", "openai"],))
    loading.start()
    try:
        assert backend.asked.wait(10)
        assert store.snapshot is None  # answered at once although the keyring has not
    finally:
        backend.open()
        loading.join()
    snapshot = store.snapshot
    assert snapshot is not None and snapshot.has_key("anthropic") and not snapshot.has_key("openai")
    backend.close()
    backend.asked.clear()
    reloading = threading.Thread(target=store.load, args=(["anthropic"],))
    reloading.start()
    try:
        assert backend.asked.wait(10)
        assert store.snapshot == snapshot  # while the keyring is asked again, the last answer stands
    finally:
        backend.open()
        reloading.join()
    assert backend.calls_on_gui_thread == []  # every call came from the loading threads


def test_a_keyring_that_raises_is_reported_and_loses_nothing() -> None:
    backend = BlockingKeyring({"anthropic": KEY})
    backend.open()
    backend.fail_with = keyring.errors.KeyringError("org.freedesktop.DBus.Error.NoReply")
    store = CredentialStore(backend, env={"ANTHROPIC_API_KEY": "env-key"})
    snapshot = store.load(["anthropic"])
    assert snapshot.keyring.status is KeyringStatus.ERROR and "KeyringError" in snapshot.keyring.message
    assert snapshot.key_info("anthropic") == KeyInfo(KeySource.ENVIRONMENT, "ANTHROPIC_API_KEY")
    backend.fail_with = None
    store.load(["anthropic"])  # the keyring works again: asked afresh
    backend.fail_with = keyring.errors.PasswordSetError("NoReply")
    with pytest.raises(CredentialError) as info:
        store.store_key("anthropic", "sk-new")
    assert "could not be saved (PasswordSetError)" in str(info.value) and "sk-new" not in str(info.value)
    assert store.api_key("anthropic") == KEY  # the key that was there is still used
