"""Settings dialog: keys go to a real keyring backend (or are refused plainly), settings go to settings.json."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import keyring
import keyring.backend
from keyring.backends import fail
from pytestqt.qtbot import QtBot

from piwork.core.llm.credentials import SERVICE, CredentialStore
from piwork.core.llm.models import ModelRegistry
from piwork.core.paths import agent_dir
from piwork.core.settings import Settings
from piwork.gui.key_status import KeyStatus
from piwork.gui.settings.settings_dialog import SettingsDialog


class DictKeyring(keyring.backend.KeyringBackend):
    """A working keyring backend that keeps passwords in memory (no OS service in tests)."""

    priority = 1  # type: ignore[assignment]

    def __init__(self) -> None:
        super().__init__()
        self.passwords: dict[tuple[str, str], str] = {}

    def get_password(self, service: str, username: str) -> str | None:
        return self.passwords.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self.passwords[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        if (service, username) not in self.passwords:
            raise keyring.errors.PasswordDeleteError("not found")
        del self.passwords[(service, username)]


def _dialog(
    qtbot: QtBot, tmp_path: Path, backend: keyring.backend.KeyringBackend, env: dict[str, str] | None = None
) -> SettingsDialog:
    adir = agent_dir()
    settings = Settings.for_project(str(tmp_path), str(adir), project_trusted=False)
    registry = ModelRegistry(adir)
    credentials = CredentialStore(backend, env=env or {}, config_key=registry.config_api_key)
    dialog = SettingsDialog(settings, KeyStatus(credentials, registry.providers), registry, adir)
    qtbot.addWidget(dialog)
    page = dialog.providers_page
    qtbot.waitUntil(lambda: not page.keys.checking and not page.keys.busy)  # the keyring answered
    return dialog


def test_key_is_saved_in_the_keyring_and_never_in_settings(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, tmp_path: Path
) -> None:
    backend = DictKeyring()
    dialog = _dialog(qtbot, tmp_path, backend)
    page = dialog.providers_page
    assert page.select_provider("anthropic")
    assert "No key" in page.status.text() and "ANTHROPIC_API_KEY" in page.status.text()
    page.key_edit.setText("sk-ant-secret-123")
    page.save_button.click()
    assert page.key_edit.text() == ""
    qtbot.waitUntil(lambda: not page.writing)
    assert backend.passwords[(SERVICE, "anthropic")] == "sk-ant-secret-123"
    assert "keyring" in page.status.text()
    saving = dialog.save()
    qtbot.waitUntil(saving.done)
    settings_file = agent_dir() / "settings.json"
    assert not settings_file.exists() or "sk-ant-secret-123" not in settings_file.read_text()
    page.remove_button.click()
    qtbot.waitUntil(lambda: not page.writing)
    assert (SERVICE, "anthropic") not in backend.passwords


def test_without_a_keyring_it_says_so_and_offers_the_alternatives(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, tmp_path: Path
) -> None:
    dialog = _dialog(qtbot, tmp_path, fail.Keyring(), env={"OPENAI_API_KEY": "sk-from-env"})
    page = dialog.providers_page
    assert "No system keyring" in page.keyring_banner.text()
    assert not page.save_button.isEnabled()
    assert page.select_provider("openai")
    assert "environment (OPENAI_API_KEY)" in page.status.text()
    assert page.select_provider("anthropic")
    page.key_edit.setText("sk-session-only")
    page.session_button.click()
    assert "session only" in page.status.text()
    assert page.credentials.api_key("anthropic") == "sk-session-only"


def test_settings_are_written_to_global_settings_json(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, tmp_path: Path
) -> None:
    settings_file = agent_dir() / "settings.json"
    settings_file.write_text('{\n  "theme": "dark",\n  "compaction": {"enabled": true}\n}\n')
    dialog = _dialog(qtbot, tmp_path, DictKeyring())
    dialog.compaction_enabled.setChecked(False)
    dialog.reserve_tokens.setValue(8192)
    dialog.skip_branch_prompt.setChecked(True)
    dialog.default_trust.setCurrentIndex(dialog.default_trust.findData("never"))
    for i in range(dialog.default_model.count()):
        data = dialog.default_model.itemData(i)
        if data and data[0] == "anthropic":
            dialog.default_model.setCurrentIndex(i)
            break
    with qtbot.waitSignal(dialog.settingsSaved):
        dialog.save()
    data = json.loads(settings_file.read_text())
    assert data["theme"] == "dark"  # untouched keys are kept
    assert data["compaction"] == {"enabled": False, "reserveTokens": 8192}
    assert data["branchSummary"] == {"skipPrompt": True}
    assert data["defaultProjectTrust"] == "never"
    assert data["defaultProvider"] == "anthropic" and data["defaultModel"]


def test_unreadable_settings_file_is_reported_and_not_overwritten(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, tmp_path: Path
) -> None:
    settings_file = agent_dir() / "settings.json"
    settings_file.write_text("{ not json")
    dialog = _dialog(qtbot, tmp_path, DictKeyring())
    assert "not valid JSON" in dialog.error.text()
    dialog.compaction_enabled.setChecked(False)
    saving = dialog.save()  # written in a worker
    qtbot.waitUntil(saving.done)
    assert saving.result() is False
    assert settings_file.read_text() == "{ not json"
    assert "not changed" in dialog.error.text()
    assert dialog.isVisible() is False or dialog.result() == 0


def test_dialog_writes_only_what_changed_and_keeps_everything_else(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, tmp_path: Path
) -> None:
    settings_file = agent_dir() / "settings.json"
    original = {
        "theme": "dark",
        "someFutureKey": {"nested": [1, 2]},
        "piwork": {"ownThing": 1},
        "defaultProvider": "nowhere",  # a model the dialog does not list: kept as it is
        "defaultModel": "unlisted",
        "compaction": {"reserveTokens": "lots", "keepRecentTokens": 5_000_000_000},
    }
    settings_file.write_text(json.dumps(original))
    dialog = _dialog(qtbot, tmp_path, DictKeyring())
    assert f'{settings_file}: compaction.reserveTokens must be a whole number (got "lots"); using 16384' in (
        dialog.error.text()
    )
    assert dialog.changes() == {}
    dialog.branch_reserve.setValue(9000)
    with qtbot.waitSignal(dialog.settingsSaved):
        dialog.save()
    assert json.loads(settings_file.read_text()) == {**original, "branchSummary": {"reserveTokens": 9000}}


def test_fields_take_bounds_and_descriptions_from_the_declarations(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, tmp_path: Path
) -> None:
    from piwork.core.settings_schema import COMPACTION_RESERVE_TOKENS, DEFAULT_PROJECT_TRUST

    dialog = _dialog(qtbot, tmp_path, DictKeyring())
    assert dialog.reserve_tokens.minimum() == COMPACTION_RESERVE_TOKENS.minimum
    assert dialog.reserve_tokens.toolTip() == COMPACTION_RESERVE_TOKENS.description
    trust = [dialog.default_trust.itemData(i) for i in range(dialog.default_trust.count())]
    assert tuple(trust) == DEFAULT_PROJECT_TRUST.choices


def test_a_greyed_out_import_button_says_why(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, tmp_path: Path
) -> None:
    auth_json = agent_dir() / "auth.json"
    assert not auth_json.exists()
    dialog = _dialog(qtbot, tmp_path, DictKeyring())
    dialog.show()
    page = dialog.providers_page
    qtbot.waitUntil(lambda: not page.loading, timeout=5_000)
    button = page.import_button
    assert not button.isEnabled()
    reason = f"Nothing to import: no auth.json found at {auth_json}."
    assert button.toolTip() == reason and button.accessibleDescription() == reason
    assert page.import_note.isVisible() and page.import_note.text() == reason

    auth_json.write_text(json.dumps({"openai": {"type": "api_key", "key": "sk-from-pi"}}))
    dialog.close()
    no_keyring = _dialog(qtbot, tmp_path, fail.Keyring())
    no_keyring.show()
    page = no_keyring.providers_page
    qtbot.waitUntil(lambda: not page.loading, timeout=5_000)
    assert not page.import_button.isEnabled()
    assert "no usable keyring" in page.import_button.toolTip()
    assert (
        page.import_note.text() == page.import_button.accessibleDescription() == page.import_button.toolTip()
    )

    usable = _dialog(qtbot, tmp_path, DictKeyring())
    usable.show()
    page = usable.providers_page
    qtbot.waitUntil(lambda: not page.loading, timeout=5_000)
    assert page.import_button.isEnabled() and not page.import_note.isVisible()
    assert str(auth_json) in page.import_button.toolTip()


def test_where_new_worktrees_go_is_saved_under_piwork(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, tmp_path: Path
) -> None:
    settings_file = agent_dir() / "settings.json"
    settings_file.write_text(json.dumps({"piwork": {"ownThing": 1}}))
    dialog = _dialog(qtbot, tmp_path, DictKeyring())
    assert dialog.worktree_location.currentData() == "worktrees-folder"
    assert dialog.changes() == {}
    dialog.worktree_location.setCurrentIndex(dialog.worktree_location.findData("beside-repo"))
    with qtbot.waitSignal(dialog.settingsSaved):
        dialog.save()
    written = json.loads(settings_file.read_text())
    assert written == {"piwork": {"ownThing": 1, "worktrees": {"location": "beside-repo"}}}
    again = Settings.for_project(str(tmp_path), str(agent_dir()), project_trusted=False)
    from piwork.core.settings_schema import WORKTREES_LOCATION

    assert again.values.value(WORKTREES_LOCATION) == "beside-repo"
