"""Settings → Providers adds, edits and removes OpenAI-compatible servers in models.json, lists a server's
models from its real ``/v1/models`` answer (a loopback HTTP server) and says exactly what failed."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from keyring.backends import fail
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox
from pytestqt.qtbot import QtBot

from piwork.core.llm import NO_KEY_NEEDED, KeySource
from piwork.core.llm.credentials import SERVICE, CredentialStore
from piwork.core.llm.models import ModelRegistry, default_model
from piwork.core.paths import agent_dir
from piwork.core.settings import Settings
from piwork.gui.key_status import KeyStatus
from piwork.gui.settings.server_dialog import ServerDialog
from piwork.gui.settings.settings_dialog import SettingsDialog
from tests.gui.settings.test_settings_dialog import DictKeyring
from tests.support import LoopbackServer


@pytest.fixture
def server() -> Iterator[LoopbackServer]:
    with LoopbackServer(model="qwen2.5-coder:7b") as running:
        yield running


def _dialog(qtbot: QtBot, tmp_path: Path, backend: object | None = None) -> SettingsDialog:
    adir = agent_dir()
    settings = Settings.for_project(str(tmp_path), str(adir), project_trusted=False)
    registry = ModelRegistry(adir)
    credentials = CredentialStore(backend or DictKeyring(), env={}, config_key=registry.config_api_key)  # type: ignore[arg-type]
    dialog = SettingsDialog(settings, KeyStatus(credentials, registry.providers), registry, adir)
    qtbot.addWidget(dialog)
    dialog.show()
    keys = dialog.providers_page.keys
    qtbot.waitUntil(lambda: not keys.checking and not keys.busy)  # the keyring answered
    qtbot.waitUntil(lambda: not dialog.providers_page.loading)  # models.json read, in a worker
    return dialog


def _open_add(qtbot: QtBot, dialog: SettingsDialog) -> ServerDialog:
    page = dialog.providers_page
    qtbot.mouseClick(page.add_server_button, Qt.MouseButton.LeftButton)
    editor = page.server_dialog
    assert editor is not None and editor.isVisible()
    return editor


def _test(qtbot: QtBot, editor: ServerDialog) -> str:
    qtbot.mouseClick(editor.test_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not editor.testing, timeout=10_000)
    return editor.test_result.text()


def test_add_a_server_lists_its_models_and_writes_models_json(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, tmp_path: Path, server: LoopbackServer
) -> None:
    models_json = agent_dir() / "models.json"
    models_json.write_text(
        json.dumps(
            {
                "x-note": "kept",
                "providers": {
                    "anthropic": {"baseUrl": "https://proxy.example.com", "x-team": 7},
                    "other": {
                        "baseUrl": "http://10.0.0.2/v1",
                        "api": "openai-completions",
                        "models": [{"id": "m"}],
                    },
                },
            }
        )
    )
    server.models_answer = (
        200,
        json.dumps({"data": [{"id": "qwen2.5-coder:7b", "max_model_len": 32768}, {"id": "llama3.1:8b"}]}),
    )
    backend = DictKeyring()
    dialog = _dialog(qtbot, tmp_path, backend)
    editor = _open_add(qtbot, dialog)
    qtbot.keyClicks(editor.name_edit, "Home Ollama")
    assert editor.id_edit.text() == "home-ollama"
    editor.url_edit.setText(server.openai_url)
    editor.key_edit.setText("sk-local-secret")
    text = _test(qtbot, editor)
    assert "2 models" in text, text
    assert server.requests[-1].method == "GET" and server.requests[-1].path == "/v1/models"
    assert server.requests[-1].headers["authorization"] == "Bearer sk-local-secret"
    assert editor.checked_models() == []  # several models: the person chooses
    editor.models.item(0).setCheckState(Qt.CheckState.Checked)
    editor.compat_box.setChecked(True)
    combo = editor.compat.combos["supportsDeveloperRole"]
    combo.setCurrentIndex(combo.findData(False))
    with qtbot.waitSignal(dialog.providers_page.providersChanged):
        qtbot.mouseClick(editor.buttons.button(editor.buttons.StandardButton.Save), Qt.MouseButton.LeftButton)

    data = json.loads(models_json.read_text())
    assert data["x-note"] == "kept"
    assert data["providers"]["anthropic"] == {"baseUrl": "https://proxy.example.com", "x-team": 7}
    assert data["providers"]["other"]["models"] == [{"id": "m"}]
    assert data["providers"]["home-ollama"] == {
        "name": "Home Ollama",
        "baseUrl": server.openai_url,
        "api": "openai-completions",
        "compat": {"supportsDeveloperRole": False},
        "models": [{"id": "qwen2.5-coder:7b", "contextWindow": 32768}],
    }
    assert "sk-local-secret" not in models_json.read_text()
    assert backend.passwords[(SERVICE, "home-ollama")] == "sk-local-secret"
    page = dialog.providers_page
    assert page.current_provider() == "home-ollama"
    added = page.registry.find("home-ollama", "qwen2.5-coder:7b")
    assert added is not None and added.compat == {
        "supportsDeveloperRole": False
    }  # the engine reads the switch
    assert added.context_window == 32768
    assert "keyring" in page.message.text()
    choices = [dialog.default_model.itemData(i) for i in range(dialog.default_model.count())]
    assert ("home-ollama", "qwen2.5-coder:7b") in [tuple(c) for c in choices if c]  # the Model tab follows


def test_test_connection_says_what_failed(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, tmp_path: Path, server: LoopbackServer
) -> None:
    dialog = _dialog(qtbot, tmp_path)
    editor = _open_add(qtbot, dialog)
    editor.name_edit.setText("Proxy")
    server.models_answer = (
        401,
        '{"error": {"message": "Invalid API key provided", "type": "invalid_request_error"}}',
    )
    editor.url_edit.setText(server.openai_url)
    text = _test(qtbot, editor)
    assert f"GET {server.openai_url}/models" in text
    assert "401 Unauthorized" in text and "Invalid API key provided" in text and "{" not in text
    assert "Check the API key" in text

    server.models_answer = (200, "<html>not a model list</html>")
    text = _test(qtbot, editor)
    assert "not JSON" in text and "<html>not a model list</html>" in text

    editor.url_edit.setText(server.url)  # without /v1
    server.models_answer = None
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    editor.url_edit.setText(f"http://127.0.0.1:{port}/v1")
    text = _test(qtbot, editor)
    assert f"Could not connect to 127.0.0.1:{port}" in text and "server running" in text

    # Saving without a model says what to do, and writes nothing.
    editor.buttons.button(editor.buttons.StandardButton.Save).click()
    assert "at least one model" in editor.error.text()
    assert not (agent_dir() / "models.json").exists()
    editor.reject()


def test_a_model_id_typed_by_hand_and_no_keyring(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, tmp_path: Path
) -> None:
    dialog = _dialog(qtbot, tmp_path, fail.Keyring())
    editor = _open_add(qtbot, dialog)
    editor.preset.setCurrentIndex(1)
    editor.preset.activated.emit(1)
    assert editor.name_edit.text() == "Ollama" and editor.url_edit.text() == "http://localhost:11434/v1"
    qtbot.keyClicks(editor.model_id_edit, "qwen3:4b")
    qtbot.keyClick(editor.model_id_edit, Qt.Key.Key_Return)
    assert editor.checked_models() == ["qwen3:4b"]
    editor.key_edit.setText("sk-no-keyring")
    page = dialog.providers_page
    with qtbot.waitSignal(page.providersChanged):
        editor.save()
    assert "OLLAMA_API_KEY" in page.message.text() and "until piwork closes" in page.message.text()
    assert page.credentials.api_key("ollama") == "sk-no-keyring"
    assert "sk-no-keyring" not in (agent_dir() / "models.json").read_text()


def test_edit_keeps_unknown_keys_and_remove_asks_first(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, tmp_path: Path
) -> None:
    models_json = agent_dir() / "models.json"
    entry = {
        "name": "Lab vLLM",
        "baseUrl": "http://127.0.0.1:8000/v1",
        "api": "openai-completions",
        "headers": {"X-Lab": "1"},
        "compat": {"supportsStrictMode": False, "openRouterRouting": {"only": ["x"]}},
        "models": [{"id": "a", "contextWindow": 8192, "x-extra": True}, {"id": "b"}],
    }
    models_json.write_text(json.dumps({"providers": {"lab": entry}}))
    backend = DictKeyring()
    backend.passwords[(SERVICE, "lab")] = "sk-lab"
    dialog = _dialog(qtbot, tmp_path, backend)
    page = dialog.providers_page
    assert page.select_provider("lab")
    assert "keyring" in page.status.text()
    assert page.edit_server_button.isEnabled() and page.remove_server_button.isEnabled()
    assert page.select_provider("anthropic") and not page.remove_server_button.isEnabled()
    page.select_provider("lab")
    editor = page.edit_server("lab")
    assert editor.id_edit.isReadOnly() and editor.compat_box.isChecked()
    assert editor.compat.combos["supportsStrictMode"].currentData() is False
    editor.models.item(1).setCheckState(Qt.CheckState.Unchecked)
    editor.compat.combos["supportsStrictMode"].setCurrentIndex(0)  # back to Automatic
    editor.url_edit.setText("http://127.0.0.1:8001/v1")
    with qtbot.waitSignal(page.providersChanged):  # written in a worker
        editor.save()
    saved = json.loads(models_json.read_text())["providers"]["lab"]
    assert saved["headers"] == {"X-Lab": "1"}
    assert saved["compat"] == {"openRouterRouting": {"only": ["x"]}}
    assert saved["models"] == [{"id": "a", "contextWindow": 8192, "x-extra": True}]
    assert saved["baseUrl"] == "http://127.0.0.1:8001/v1"

    box = page.ask_remove_server()
    assert isinstance(box, QMessageBox) and "Lab vLLM" in box.text()
    box.button(QMessageBox.StandardButton.Cancel).click()
    assert "lab" in json.loads(models_json.read_text())["providers"]
    box = page.ask_remove_server()
    assert box is not None
    with qtbot.waitSignal(page.providersChanged):
        box.button(QMessageBox.StandardButton.Yes).click()
    assert json.loads(models_json.read_text()) == {"providers": {}}
    qtbot.waitUntil(lambda: not page.writing)
    assert (SERVICE, "lab") not in backend.passwords  # its key went with it
    assert page.message.text() == "Removed Lab vLLM from models.json."
    assert not page.select_provider("lab")


def test_a_models_json_that_cannot_be_parsed_is_backed_up_not_overwritten(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, tmp_path: Path
) -> None:
    models_json = agent_dir() / "models.json"
    broken = '{"providers": {"mine": {"baseUrl": "http://x/v1",,}}'
    models_json.write_text(broken)
    dialog = _dialog(qtbot, tmp_path)
    editor = dialog.providers_page.edit_server(None)
    assert "not valid" in editor.error.text() and "backup" in editor.error.text()
    editor.name_edit.setText("Studio")
    editor.url_edit.setText("http://localhost:1234/v1")
    editor._add_model("local-model", checked=True)
    with qtbot.waitSignal(dialog.providers_page.providersChanged):  # written in a worker
        editor.save()
    backups = list(agent_dir().glob("models.json.unreadable-*"))
    assert len(backups) == 1 and backups[0].read_text() == broken
    assert json.loads(models_json.read_text())["providers"]["studio"]["models"] == [{"id": "local-model"}]
    assert "unreadable" in dialog.providers_page.message.text()
    assert dialog.providers_page.select_provider("studio")
    assert "No key needed" in dialog.providers_page.status.text()  # a server on this computer


def test_a_server_elsewhere_on_the_network_can_be_marked_as_needing_no_key(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, tmp_path: Path
) -> None:
    """Only servers on this computer count as keyless by themselves; one on the network is marked in its
    dialog, stored as a models.json apiKey that Pi reads as configured too, and its models become usable.
    (The server's address is never contacted: nothing here sends a request.)"""
    models_json = agent_dir() / "models.json"
    entry = {
        "name": "Team box",
        "baseUrl": "http://192.0.2.10:8080/v1",
        "api": "openai-completions",
        "x-team": 7,
        "models": [{"id": "qwen-lan"}],
    }
    models_json.write_text(json.dumps({"providers": {"lan": entry}}))
    dialog = _dialog(qtbot, tmp_path)
    page = dialog.providers_page
    assert page.select_provider("lan")
    assert page.status.text().startswith("No key.")
    assert page.providers.currentItem().text().startswith("○")
    assert not page.credentials.has_credentials("lan")

    editor = page.edit_server("lan")
    assert not editor.no_key_box.isChecked() and editor.key_edit.isEnabled()
    editor.key_edit.setText("typed before ticking")
    editor.no_key_box.setChecked(True)
    assert not editor.key_edit.isEnabled()
    with qtbot.waitSignal(page.providersChanged):
        editor.save()
    saved = json.loads(models_json.read_text())["providers"]["lan"]
    assert saved == {**entry, "apiKey": NO_KEY_NEEDED}  # the rest as it was; no typed key anywhere
    resolved = page.credentials.resolve("lan")  # the typed key was neither saved nor kept for the session
    assert resolved is not None and (resolved.source, resolved.value) == (
        KeySource.MODELS_JSON,
        NO_KEY_NEEDED,
    )

    qtbot.waitUntil(lambda: page.providers.currentItem().text().startswith("●"))  # known once re-read
    assert page.status.text().startswith("No key needed: this server is marked so")
    fresh = ModelRegistry(agent_dir())  # as the window reads it next time
    assert fresh.diagnostics == [] and [m.id for m in fresh.models if m.provider == "lan"] == ["qwen-lan"]
    credentials = CredentialStore(DictKeyring(), env={}, config_key=fresh.config_api_key)  # type: ignore[arg-type]
    assert credentials.has_credentials("lan")
    chosen = default_model(fresh, credentials.has_credentials)  # the only provider that can answer
    assert chosen is not None and (chosen.provider, chosen.id) == ("lan", "qwen-lan")

    again = page.edit_server("lan")
    assert again.no_key_box.isChecked() and not again.key_edit.isEnabled()
    again.no_key_box.setChecked(False)
    with qtbot.waitSignal(page.providersChanged):
        again.save()
    assert "apiKey" not in json.loads(models_json.read_text())["providers"]["lan"]
    qtbot.waitUntil(lambda: page.providers.currentItem().text().startswith("○"))
