"""The record of providers the keyring holds no piwork key for: it spares asking only where the answer cannot
matter (a key in the environment or models.json, none stored by piwork), and it follows every key piwork
stores or removes, so a stored key still comes before the environment's."""

from __future__ import annotations

import json
import os
from pathlib import Path

from keyring.backends import fail

from piwork.core.llm.credentials import SERVICE, CredentialStore, KeySource
from piwork.core.llm.key_record import KeyRecord, keyring_setup, record_path
from tests.support.file_keyring import FileKeyring

ENV = {"GROQ_API_KEY": "gsk-from-environment"}


def _store(tmp_path: Path, backend: FileKeyring, env: dict[str, str] | None = None) -> CredentialStore:
    """A run's store: a new one each time, as each process makes its own."""
    return CredentialStore(backend, env=ENV if env is None else env, record=KeyRecord(record_path(tmp_path)))


def test_a_key_from_the_environment_spares_asking_the_keyring_once_it_was_found_to_hold_none(
    tmp_path: Path,
) -> None:
    backend = FileKeyring(tmp_path / "keyring.json")
    first = _store(tmp_path, backend)
    first.look_up(["groq"])
    asked = backend.calls()
    assert asked > 0  # no record yet: the keyring is asked
    assert KeyRecord(record_path(tmp_path)).lacks("groq")
    resolved = first.resolve("groq")
    assert resolved is not None and resolved.source is KeySource.ENVIRONMENT

    second = _store(tmp_path, backend)
    second.look_up(["groq"])
    resolved = second.resolve("groq")
    assert resolved is not None and resolved.value == "gsk-from-environment"
    assert backend.calls() == asked  # the keyring was not asked again
    record = json.loads(record_path(tmp_path).read_text())
    assert "gsk" not in json.dumps(record)  # names only, never a key


def test_a_key_stored_by_piwork_comes_before_the_environment_in_the_next_run(tmp_path: Path) -> None:
    backend = FileKeyring(tmp_path / "keyring.json")
    _store(tmp_path, backend).look_up(["groq"])  # noted: no key in the keyring
    window = _store(tmp_path, backend)
    window.store_key("groq", "gsk-stored-in-keyring")
    assert not KeyRecord(record_path(tmp_path)).lacks("groq")

    run = _store(tmp_path, backend)
    run.look_up(["groq"])
    resolved = run.resolve("groq")
    assert resolved is not None and resolved.source is KeySource.KEYRING
    assert resolved.value == "gsk-stored-in-keyring"

    window.delete_key("groq")
    assert KeyRecord(record_path(tmp_path)).lacks("groq")
    after = _store(tmp_path, backend)
    after.look_up(["groq"])
    resolved = after.resolve("groq")
    assert resolved is not None and resolved.source is KeySource.ENVIRONMENT


def test_a_provider_with_no_key_elsewhere_is_always_asked_about(tmp_path: Path) -> None:
    """A key another program put in the keyring is found whenever nothing else has one."""
    backend = FileKeyring(tmp_path / "keyring.json")
    _store(tmp_path, backend, env={}).look_up(["groq"])
    assert KeyRecord(record_path(tmp_path)).lacks("groq")
    backend.set_password(SERVICE, "groq", "gsk-put-there-by-another-program")  # not through piwork

    run = _store(tmp_path, backend, env={})
    run.look_up(["groq"])
    resolved = run.resolve("groq")
    assert resolved is not None and resolved.value == "gsk-put-there-by-another-program"
    assert not KeyRecord(record_path(tmp_path)).lacks("groq")  # the answer is noted


def test_a_record_of_another_setup_or_a_damaged_one_spares_nothing(tmp_path: Path) -> None:
    backend = FileKeyring(tmp_path / "keyring.json")
    _store(tmp_path, backend).look_up(["groq"])
    path = record_path(tmp_path)
    assert KeyRecord(path).lacks("groq")
    assert not KeyRecord(path, setup="another keyring setup").lacks("groq")
    assert keyring_setup({**os.environ, "PYTHON_KEYRING_BACKEND": "x.Y"}) != keyring_setup(
        {**os.environ, "PYTHON_KEYRING_BACKEND": "x.Z"}
    )
    path.write_text("{not json")
    assert not KeyRecord(path).lacks("groq")
    asked = backend.calls()
    _store(tmp_path, backend).look_up(["groq"])
    assert backend.calls() > asked
    assert KeyRecord(path).lacks("groq")  # written anew


def test_storing_a_key_removes_a_record_it_cannot_change(tmp_path: Path) -> None:
    backend = FileKeyring(tmp_path / "keyring.json")
    _store(tmp_path, backend).look_up(["groq"])
    path = record_path(tmp_path)
    Path(f"{path}.lock").mkdir()  # another program holds the record's lock
    _store(tmp_path, backend).store_key("groq", "gsk-stored-in-keyring")
    assert not path.exists()  # no record: the next run asks
    run = _store(tmp_path, backend)
    run.look_up(["groq"])
    resolved = run.resolve("groq")
    assert resolved is not None and resolved.value == "gsk-stored-in-keyring"


def test_an_answer_is_not_noted_over_a_record_changed_while_the_keyring_was_asked(tmp_path: Path) -> None:
    path = record_path(tmp_path)

    class Meanwhile(FileKeyring):
        def get_password(self, service: str, username: str) -> str | None:
            if username == "groq":  # another piwork writes the record while this one waits for the keyring
                other = KeyRecord(path)
                other.note_missing("mistral", other.stamp())
            return super().get_password(service, username)

    store = _store(tmp_path, Meanwhile(tmp_path / "keyring.json"))
    store.look_up(["groq"])
    record = KeyRecord(path)
    assert record.lacks("mistral") and not record.lacks("groq")


def test_no_keyring_at_all_is_noted_and_a_locked_one_is_not(tmp_path: Path) -> None:
    path = record_path(tmp_path)
    CredentialStore(fail.Keyring(), env=ENV, record=KeyRecord(path)).look_up(["groq"])
    assert KeyRecord(path).lacks("groq")

    class Locked(FileKeyring):
        def get_password(self, service: str, username: str) -> str | None:
            import keyring.errors

            raise keyring.errors.KeyringLocked("locked")

    CredentialStore(Locked(tmp_path / "k.json"), env=ENV, record=KeyRecord(path)).look_up(["mistral"])
    assert not KeyRecord(path).lacks("mistral")
