"""Settings → Providers reads models.json and looks for Pi's auth.json in a worker.

models.json here is on a slow disk (``tests/support/slow_disk.py``): reading it waits until the test has
written the file's text and lets the read through. Meanwhile the page is up, says it is reading, the window keeps running (a 5 ms timer ticks), Add
Server opens at once and Edit Server once the file is read; then the servers and the import button appear.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from piwork.core.llm.credentials import SERVICE, CredentialStore
from piwork.core.llm.models import ModelRegistry
from piwork.core.paths import agent_dir
from piwork.core.settings import Settings
from piwork.gui.key_status import KeyStatus
from piwork.gui.settings.settings_dialog import SettingsDialog
from tests.gui.settings.test_settings_dialog import DictKeyring
from tests.support.heartbeat import keeps_running
from tests.support.slow_disk import SlowFile, slow_file

MODELS = {
    "providers": {
        "lab": {
            "name": "Lab vLLM",
            "baseUrl": "http://127.0.0.1:8000/v1",
            "api": "openai-completions",
            "models": [{"id": "a"}],
        }
    }
}


def _write_when_read(qtbot: QtBot, slow: SlowFile, text: str) -> None:
    """Once a reader waits for the slow file, give the file ``text`` and let the read through."""
    qtbot.waitUntil(slow.asked.is_set, timeout=5_000)
    Path(slow.path).write_text(text)
    slow.open()


def test_the_page_reads_models_json_in_a_worker_and_says_so_meanwhile(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    adir = agent_dir()
    models_json = adir / "models.json"
    models_json.write_text(json.dumps(MODELS))
    (adir / "auth.json").write_text(json.dumps({"openai": {"type": "api_key", "key": "sk-from-pi"}}))
    registry = ModelRegistry(adir)  # the window's registry, read when it started
    models_json.write_text("")  # what the disk will hold is written once the page asks for it
    slow = slow_file(monkeypatch, models_json)  # from now on, reading waits

    backend = DictKeyring()
    backend.passwords[(SERVICE, "lab")] = "sk-lab"
    credentials = CredentialStore(backend, env={}, config_key=registry.config_api_key)  # type: ignore[arg-type]
    settings = Settings.for_project(str(tmp_path), str(adir), project_trusted=False)
    dialog = SettingsDialog(settings, KeyStatus(credentials, registry.providers), registry, adir)
    qtbot.addWidget(dialog)
    dialog.show()
    page = dialog.providers_page
    qtbot.waitUntil(lambda: not page.keys.checking and not page.keys.busy)
    keeps_running(qtbot)  # models.json has not been written: the page does not wait for it
    assert page.loading and page.reading_note.isVisible()
    assert page.reading_note.text() == "Reading models.json…"
    assert page.select_provider("lab")
    assert not page.edit_server_button.isEnabled() and not page.remove_server_button.isEnabled()
    assert not page.import_button.isEnabled()  # auth.json has not been looked for yet
    assert page.edit_server("lab") is None  # opens once the file is read
    adding = page.edit_server(None)  # Add Server needs nothing from the file: at once
    assert adding is not None and adding.isVisible()
    adding.reject()

    _write_when_read(qtbot, slow, json.dumps(MODELS))
    qtbot.waitUntil(lambda: not page.loading, timeout=5_000)
    assert not slow.read_on_gui_thread()
    assert not page.reading_note.isVisible()
    assert page.edit_server_button.isEnabled() and page.remove_server_button.isEnabled()
    assert page.import_button.isEnabled()
    editor = page.server_dialog  # the edit asked for while reading, now open with the file's entry
    assert editor is not None and editor.isVisible()
    assert editor.name_edit.text() == "Lab vLLM" and editor.id_edit.isReadOnly()
    assert "lab" not in editor.existing_ids  # its own id is not "taken"
    editor.reject()


def test_an_unreadable_models_json_is_reported_to_an_add_dialog_opened_while_reading(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    adir = agent_dir()
    models_json = adir / "models.json"
    registry = ModelRegistry(adir)
    models_json.write_text("")
    slow = slow_file(monkeypatch, models_json)
    credentials = CredentialStore(DictKeyring(), env={}, config_key=registry.config_api_key)  # type: ignore[arg-type]
    settings = Settings.for_project(str(tmp_path), str(adir), project_trusted=False)
    dialog = SettingsDialog(settings, KeyStatus(credentials, registry.providers), registry, adir)
    qtbot.addWidget(dialog)
    dialog.show()
    page = dialog.providers_page
    adding = page.edit_server(None)
    assert adding is not None and adding.error.text() == ""
    _write_when_read(qtbot, slow, '{"providers": {"mine": ,}}')
    qtbot.waitUntil(lambda: not page.loading, timeout=5_000)
    assert "not valid" in adding.error.text() and "backup" in adding.error.text()
    adding.reject()
