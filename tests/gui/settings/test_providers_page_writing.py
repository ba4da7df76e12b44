"""Settings → Providers writes models.json, and reads it back into the shared model registry, in a worker.

Saving a server while models.json is on a slow disk (``tests/support/slow_disk.py``: reading the file to
change it waits until the test lets the read through) shows "Saving…" with the dialog's buttons still, and the window keeps
running (a 5 ms timer ticks); then the file is written, the registry holds the new server's models and the
page lists it. Removing a server while another program holds models.json's lock (a real lock folder, held
by another thread) says "Removing…", keeps the window running, and then says why nothing changed; once the
lock is let go the server goes, from the file and from the registry.
"""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path

import pytest
from PySide6.QtWidgets import QMessageBox
from pytestqt.qtbot import QtBot

from piwork.core.fs.lock import locked
from piwork.core.llm.credentials import CredentialStore
from piwork.core.llm.models import ModelRegistry
from piwork.core.paths import agent_dir
from piwork.core.settings import Settings
from piwork.gui.key_status import KeyStatus
from piwork.gui.settings.settings_dialog import SettingsDialog
from tests.gui.settings.test_providers_page_reading import MODELS, _write_when_read
from tests.gui.settings.test_settings_dialog import DictKeyring
from tests.support.heartbeat import keeps_running
from tests.support.slow_disk import slow_file


def _dialog(qtbot: QtBot, tmp_path: Path) -> tuple[SettingsDialog, ModelRegistry]:
    adir = agent_dir()
    settings = Settings.for_project(str(tmp_path), str(adir), project_trusted=False)
    registry = ModelRegistry(adir)
    credentials = CredentialStore(DictKeyring(), env={}, config_key=registry.config_api_key)  # type: ignore[arg-type]
    dialog = SettingsDialog(settings, KeyStatus(credentials, registry.providers), registry, adir)
    qtbot.addWidget(dialog)
    dialog.show()
    keys = dialog.providers_page.keys
    qtbot.waitUntil(lambda: not keys.checking and not keys.busy)
    qtbot.waitUntil(lambda: not dialog.providers_page.loading)
    return dialog, registry


def test_saving_a_server_writes_models_json_and_rereads_the_registry_in_a_worker(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    models_json = agent_dir() / "models.json"
    models_json.write_text(json.dumps(MODELS))
    dialog, registry = _dialog(qtbot, tmp_path)
    page = dialog.providers_page
    slow = slow_file(monkeypatch, models_json)  # from now on, reading models.json waits for the test

    editor = page.edit_server(None)
    assert editor is not None
    editor.name_edit.setText("Studio")
    editor.url_edit.setText("http://localhost:1234/v1")
    editor._add_model("local-model", checked=True)
    with qtbot.waitSignal(page.providersChanged, timeout=10_000) as saved:
        editor.save()
        assert editor.error.text() == "Saving Studio in models.json…"
        assert not editor.buttons.isEnabled()
        editor.reject()  # the dialog waits for the file
        assert editor.isVisible()
        keeps_running(qtbot)
        assert registry.find("studio", "local-model") is None  # nothing applied before the file is written
        _write_when_read(qtbot, slow, json.dumps(MODELS))
    assert saved.args == ["studio"]
    assert not slow.read_on_gui_thread()
    written = json.loads(models_json.read_text())["providers"]
    assert list(written) == ["lab", "studio"] and written["lab"] == MODELS["providers"]["lab"]
    assert written["studio"]["models"] == [{"id": "local-model"}]
    model = registry.find("studio", "local-model")  # read back in the worker, swapped in at once
    assert model is not None and model.base_url == "http://localhost:1234/v1"
    assert registry.find("lab", "a") is not None and registry.diagnostics == []
    assert page.select_provider("studio") and "Saved Studio in" in page.message.text()


def test_removing_a_server_while_models_json_is_locked_says_why_and_then_removes_it(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, tmp_path: Path
) -> None:
    models_json = agent_dir() / "models.json"
    models_json.write_text(json.dumps(MODELS))
    dialog, registry = _dialog(qtbot, tmp_path)
    page = dialog.providers_page
    assert page.select_provider("lab") and page.remove_server_button.isEnabled()

    held, release = threading.Event(), threading.Event()

    def hold_lock() -> None:  # another program changing models.json
        with locked(models_json):
            held.set()
            release.wait(10)

    holder = threading.Thread(target=hold_lock)
    holder.start()
    try:
        assert held.wait(5)
        assert page.remove_server("lab")
        assert page.message.text() == "Removing Lab vLLM from models.json…"
        assert not page.remove_server_button.isEnabled() and not page.edit_server_button.isEnabled()
        keeps_running(qtbot)
        qtbot.waitUntil(lambda: not page.removing, timeout=10_000)
    finally:
        release.set()
        holder.join()
    assert "locked by another program" in page.message.text()
    assert json.loads(models_json.read_text()) == MODELS  # nothing changed
    assert registry.find("lab", "a") is not None
    assert page.select_provider("lab") and page.remove_server_button.isEnabled()

    box = page.ask_remove_server()
    assert box is not None
    with qtbot.waitSignal(page.providersChanged, timeout=10_000):
        box.button(QMessageBox.StandardButton.Yes).click()
        assert page.message.text() == "Removing Lab vLLM from models.json…"
    assert json.loads(models_json.read_text()) == {"providers": {}}
    assert registry.find("lab", "a") is None and "lab" not in registry.providers()
    assert not page.select_provider("lab")
    qtbot.waitUntil(lambda: not page.writing)
    assert page.message.text() == "Removed Lab vLLM from models.json."


def test_a_server_saves_its_models_window_and_output_limit_and_says_when_its_test_failed(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, tmp_path: Path
) -> None:
    """An 8K local model is saved as 8K (the meter and marks count on it, not the 128K default); a server
    saved after a failed connection test says so in the saved message; reopening shows the figures."""
    from piwork.core.llm.model_listing import ModelListing

    models_json = agent_dir() / "models.json"
    models_json.write_text(json.dumps(MODELS))
    dialog, registry = _dialog(qtbot, tmp_path)
    page = dialog.providers_page
    editor = page.edit_server(None)
    assert editor is not None
    editor.name_edit.setText("Small")
    editor.url_edit.setText("http://localhost:8080/v1")
    editor._add_model("tiny-8k", checked=True)
    editor.window_spin.setValue(8192)
    editor.output_spin.setValue(2048)
    editor.listing = ModelListing("http://localhost:8080/v1/models", False, problem="nothing answered")
    with qtbot.waitSignal(page.providersChanged, timeout=10_000):
        editor.save()
    written = json.loads(models_json.read_text())["providers"]["small"]
    assert written["models"] == [{"id": "tiny-8k", "contextWindow": 8192, "maxTokens": 2048}]
    model = registry.find("small", "tiny-8k")
    assert model is not None and model.context_window == 8192 and model.max_tokens == 2048
    assert "connection test failed: nothing answered" in page.message.text()
    again = page.edit_server("small")
    assert again is not None
    assert again.window_spin.value() == 8192 and again.output_spin.value() == 2048
    again.reject()
