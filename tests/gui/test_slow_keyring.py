"""A system keyring that takes its time (an unlock prompt, a slow D-Bus daemon) never holds up the window.

The keyring here is a real backend that waits at a gate until the test opens it, and records which
thread asked. While it waits, the window keeps running its event loop (a timer keeps ticking), says
"checking" where it would otherwise claim "no API key", and never asks the keyring from the GUI thread;
once the keyring answers, the model picker, the palette, the providers page and the server dialog show
what it said. Saving, removing and importing keys say what they are doing and then what came of it, and a
keyring that fails is reported without losing anything.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import keyring.errors
import pytest
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication, QDialogButtonBox
from pytestqt.qtbot import QtBot

from piwork.core.llm import CredentialStore
from piwork.core.paths import agent_dir
from piwork.gui.chat.empty_state import CHECKING, MISSING, READY
from piwork.gui.main_window import MainWindow
from piwork.gui.notifications import NotificationCenter
from piwork.gui.palette.palette_dialog import PaletteDialog
from piwork.gui.session_controller import SessionController
from piwork.gui.settings.settings_dialog import SettingsDialog
from piwork.gui.theme import load_theme
from tests.support import LoopbackServer, Text, Turn
from tests.support.blocking_keyring import BlockingKeyring
from tests.support.heartbeat import keeps_running

KEY = "sk-ant-api03-KEYRING-ONLY-5d1e"


class Window:
    def __init__(self, controller: SessionController, keyring: BlockingKeyring) -> None:
        self.ctl = controller
        self.keyring = keyring


@pytest.fixture
def window(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, tmp_path: Path, request: pytest.FixtureRequest
) -> Iterator[Window]:
    """The window starting against a keyring that holds an Anthropic key and has not answered yet."""
    extra = getattr(request, "param", {})
    (agent_dir() / "auth.json").write_text(
        json.dumps(
            {"openai": {"type": "api_key", "key": "sk-openai-from-pi"}, "anthropic": {"type": "oauth"}}
        )
    )
    if "models" in extra:
        (agent_dir() / "models.json").write_text(json.dumps(extra["models"]))
    backend = BlockingKeyring({"anthropic": KEY, **extra.get("keys", {})})
    project = tmp_path / "project"
    project.mkdir()
    main = MainWindow(QSettings(str(tmp_path / "w.ini"), QSettings.Format.IniFormat), load_theme("light"))
    qtbot.addWidget(main)
    main.show()
    notifications = NotificationCenter(main)
    credentials = CredentialStore(backend, env={})
    ctl = SessionController(
        main, notifications, str(project), agent_dir(), approve=False, env={}, credentials=credentials
    )
    ctl.spawn(ctl.open_session(None))
    qtbot.waitUntil(lambda: backend.waiting > 0)  # the keyring has been asked and is waiting
    yield Window(ctl, backend)
    backend.open()  # whatever still waits may finish
    for widget in QApplication.topLevelWidgets():
        if isinstance(widget, SettingsDialog | PaletteDialog) or widget.objectName() == "serverDialog":
            widget.close()
    done = qloop.create_task(ctl.shutdown())
    qtbot.waitUntil(done.done, timeout=10_000)
    notifications.close_all()
    assert backend.calls_on_gui_thread == []  # every question to the keyring came from a worker


def picker_texts(ctl: SessionController) -> dict[str, str]:
    picker = ctl.chat.footer.model_picker
    return {
        f"{data[0]}/{data[1]}": picker.itemText(i)
        for i in range(picker.count())
        if isinstance(data := picker.itemData(i), tuple | list)
    }


def palette_models(palette: PaletteDialog) -> dict[str, str]:
    return {item.title: item.detail for item in palette.model.items if item.kind == "model"}


def test_the_window_says_checking_while_the_keyring_waits_then_shows_what_it_said(
    qtbot: QtBot, window: Window
) -> None:
    ctl, backend = window.ctl, window.keyring
    keeps_running(qtbot)
    chat = ctl.chat
    assert ctl.runtime is None  # the session opens once the keyring has said which model can answer
    assert chat.model_state == CHECKING
    assert chat.empty_state.isVisible() and chat.empty_state.title.text() == "Checking for API keys…"
    assert not chat.empty_state.key_button.isVisible()  # nothing to fix yet
    assert "Checking for API keys" in chat.composer.placeholderText()
    picker = chat.footer.model_picker
    assert picker.currentText() == "Checking keys…"
    labels = picker_texts(ctl)
    assert labels and all(text.endswith("(checking key…)") for text in labels.values())
    assert not any("no API key" in text for text in labels.values())

    palette = ctl.dialogs.show_palette()
    details = palette_models(palette)
    assert details and all(detail.endswith("(checking keys…)") for detail in details.values())
    settings = ctl.dialogs.show_settings()
    page = settings.providers_page
    assert page.keyring_banner.text().startswith("Checking the system keyring")
    assert page.select_provider("anthropic") and page.status.text().startswith("Checking keys")
    assert not page.save_button.isEnabled() and not page.remove_button.isEnabled()
    assert page.providers.currentItem().text().startswith("◌")
    keeps_running(qtbot)

    backend.open()
    qtbot.waitUntil(lambda: ctl.runtime is not None, timeout=10_000)
    qtbot.waitUntil(lambda: not ctl.keys.busy and chat.model_state == READY)
    session = ctl.session
    assert session is not None and session.model is not None and session.model.provider == "anthropic"
    labels = picker_texts(ctl)
    assert not any("checking" in text for text in labels.values())
    assert all(
        text.endswith("(no API key)") == (not name.startswith("anthropic/")) for name, text in labels.items()
    )
    assert picker.current_key() == (session.model.provider, session.model.id)
    details = palette_models(palette)  # the open palette followed
    assert details[f"anthropic/{session.model.id}"] == session.model.name
    assert all(
        d.endswith("(cannot answer: no API key)") for n, d in details.items() if n.startswith("openai/")
    )
    qtbot.waitUntil(lambda: page.keyring_banner.text() == "API keys are saved in the system keyring.")
    assert page.status.text() == "Key saved in the system keyring."
    assert page.providers.currentItem().text().startswith("●") and page.save_button.isEnabled()
    assert KEY not in page.status.text() + page.providers.currentItem().toolTip()


def test_saving_removing_and_importing_keys_say_what_they_do_and_never_wait_on_the_gui_thread(
    qtbot: QtBot, window: Window
) -> None:
    ctl, backend = window.ctl, window.keyring
    backend.open()
    qtbot.waitUntil(lambda: ctl.runtime is not None, timeout=10_000)
    page = ctl.dialogs.show_settings().providers_page
    qtbot.waitUntil(lambda: not page.keys.busy)
    backend.close()  # from now on every keyring call waits until the test opens it again

    assert page.select_provider("openai")
    page.key_edit.setText("sk-openai-typed")
    page.save_button.click()
    assert page.message.text() == "Saving the key for openai in the keyring…"
    assert page.key_edit.text() == "" and not page.save_button.isEnabled() and page.writing
    keeps_running(qtbot)
    backend.open()
    qtbot.waitUntil(lambda: not page.writing)
    assert page.message.text() == "Saved the key for openai in the keyring."
    assert backend.passwords[("piwork", "openai")] == "sk-openai-typed"
    assert page.status.text() == "Key saved in the system keyring." and page.save_button.isEnabled()
    labels = picker_texts(ctl)  # the window's picker follows at once
    assert all(
        not text.endswith("(no API key)") for name, text in labels.items() if name.startswith("openai/")
    )

    backend.close()
    page.remove_button.click()
    assert page.message.text() == "Removing the saved key for openai…" and not page.remove_button.isEnabled()
    keeps_running(qtbot)
    backend.open()
    qtbot.waitUntil(lambda: not page.writing)
    assert page.message.text() == "Removed the saved key for openai."
    assert ("piwork", "openai") not in backend.passwords
    assert page.status.text().startswith("No key.")
    labels = picker_texts(ctl)
    assert all(text.endswith("(no API key)") for name, text in labels.items() if name.startswith("openai/"))

    backend.close()
    assert page.import_button.isEnabled()
    page.import_button.click()
    assert page.message.text() == "Importing keys from Pi's auth.json into the keyring…"
    keeps_running(qtbot)
    backend.open()
    qtbot.waitUntil(lambda: not page.writing)
    assert page.message.text() == "Imported: openai. Skipped (not API keys): anthropic."
    assert backend.passwords[("piwork", "openai")] == "sk-openai-from-pi"
    assert page.status.text() == "Key saved in the system keyring."  # openai is still the one selected


def test_a_keyring_that_fails_is_reported_and_loses_nothing(qtbot: QtBot, window: Window) -> None:
    ctl, backend = window.ctl, window.keyring
    backend.fail_with = keyring.errors.KeyringError("org.freedesktop.DBus.Error.NoReply")
    backend.open()
    qtbot.waitUntil(lambda: ctl.runtime is not None, timeout=10_000)
    qtbot.waitUntil(lambda: not ctl.keys.busy)
    chat = ctl.chat
    assert chat.model_state == MISSING  # no key could be read, and none is in the environment
    assert all(text.endswith("(no API key)") for text in picker_texts(ctl).values())
    page = ctl.dialogs.show_settings().providers_page
    qtbot.waitUntil(lambda: not page.keys.busy)
    assert "cannot be used (KeyringError)" in page.keyring_banner.text()
    assert not page.save_button.isEnabled()

    backend.fail_with = None  # the keyring works again: the next look asks afresh
    page.keys.refresh(fresh=True)
    qtbot.waitUntil(lambda: page.save_button.isEnabled())
    assert page.select_provider("anthropic") and page.status.text() == "Key saved in the system keyring."
    qtbot.waitUntil(lambda: chat.model_state != CHECKING and picker_texts(ctl) != {})
    assert any(
        name.startswith("anthropic/") and not text.endswith("(no API key)")
        for name, text in picker_texts(ctl).items()
    )

    backend.fail_with = keyring.errors.PasswordSetError("NoReply")
    page.key_edit.setText("sk-ant-replacement")
    page.save_button.click()
    qtbot.waitUntil(lambda: not page.writing)
    assert page.message.text() == "The key for anthropic could not be saved (PasswordSetError)."
    assert backend.passwords[("piwork", "anthropic")] == KEY  # the saved key is still there...
    assert ctl.credentials.api_key("anthropic") == KEY  # ...and still the one used


SERVER_MODELS = {
    "models": {
        "providers": {
            "lab": {
                "name": "Lab Proxy",
                "baseUrl": "http://127.0.0.1:9/v1",
                "api": "openai-completions",
                "models": [{"id": "lab-model"}],
            }
        }
    },
    "keys": {"lab": "sk-lab-saved"},
}


@pytest.mark.parametrize("window", [SERVER_MODELS], indirect=True)
def test_the_server_dialog_checks_for_a_saved_key_and_saves_one_without_blocking(
    qtbot: QtBot, window: Window
) -> None:
    ctl, backend = window.ctl, window.keyring
    page = ctl.dialogs.show_settings().providers_page
    assert page.select_provider("lab")
    qtbot.waitUntil(lambda: not page.loading)  # models.json is read in a worker
    editor = page.edit_server("lab")
    assert editor is not None
    assert editor.key_edit.placeholderText() == "Checking for a saved key…"
    keeps_running(qtbot)
    backend.open()
    qtbot.waitUntil(lambda: editor.key_edit.placeholderText().startswith("A key is set"))

    with LoopbackServer(model="lab-model") as server:  # Test Connection sends the saved key
        editor.url_edit.setText(server.openai_url)
        editor.test_button.click()
        qtbot.waitUntil(lambda: not editor.testing, timeout=10_000)
        assert server.requests[-1].headers["authorization"] == "Bearer sk-lab-saved"

    backend.close()
    editor.key_edit.setText("sk-lab-new")
    with qtbot.waitSignal(page.providersChanged, timeout=10_000):
        editor.buttons.button(QDialogButtonBox.StandardButton.Save).click()
        assert editor.error.text() == "Saving Lab Proxy in models.json…"  # in a worker
        qtbot.waitUntil(lambda: editor.error.text() == "Saving the key in the system keyring…")
        assert not editor.buttons.isEnabled()
        editor.reject()  # Escape while the key is on its way: the dialog waits for it
        assert editor.isVisible()
        keeps_running(qtbot)
        backend.open()
    assert backend.passwords[("piwork", "lab")] == "sk-lab-new"
    assert "The key is saved in the system keyring." in page.message.text()
    assert "sk-lab-new" not in (agent_dir() / "models.json").read_text()


def test_picking_a_model_while_the_keyring_is_asked_again_answers_from_what_is_known(
    qtbot: QtBot, window: Window
) -> None:
    ctl, backend = window.ctl, window.keyring
    backend.open()
    qtbot.waitUntil(lambda: ctl.runtime is not None, timeout=10_000)
    qtbot.waitUntil(lambda: not ctl.keys.busy)
    session = ctl.session
    assert session is not None and session.model is not None
    backend.passwords[("piwork", "openai")] = "sk-openai-elsewhere"  # saved by another program
    backend.close()
    ctl.keys.refresh(fresh=True)  # Settings opened: the keyring is asked again, and waits
    qtbot.waitUntil(lambda: backend.waiting > 0 and ctl.keys.busy)
    openai = next(m for m in ctl.models.models if m.provider == "openai" and m.api_supported)
    # still known as keyless: refused as before, no waiting
    ctl.model_choice.pick_model(openai.provider, openai.id)
    assert session.model.provider == "anthropic"
    keeps_running(qtbot)
    backend.open()
    qtbot.waitUntil(lambda: not ctl.keys.busy)
    ctl.model_choice.pick_model(openai.provider, openai.id)
    assert session.model.provider == "openai"


def test_a_model_picked_before_its_key_is_known_is_set_once_the_keyring_answers(
    qtbot: QtBot, window: Window
) -> None:
    ctl, backend = window.ctl, window.keyring
    backend.open()
    qtbot.waitUntil(lambda: ctl.runtime is not None, timeout=10_000)
    qtbot.waitUntil(lambda: not ctl.keys.busy)
    lab = {
        "baseUrl": "https://lab.example.invalid/v1",
        "api": "openai-completions",
        "models": [{"id": "lab-1"}],
    }
    (agent_dir() / "models.json").write_text(json.dumps({"providers": {"lab": lab}}))
    backend.passwords[("piwork", "lab")] = "sk-lab"
    ctl.models.reload()  # a provider the keyring has not been asked about
    backend.close()
    palette = ctl.dialogs.show_palette()
    assert palette_models(palette)["lab/lab-1"].endswith("(checking keys…)")
    item = next(i for i in palette.model.items if i.title == "lab/lab-1")
    assert item.run is not None
    item.run()  # picked from the palette: it waits for the answer, the window does not
    keeps_running(qtbot)
    session = ctl.session
    assert session is not None and session.model is not None and session.model.provider == "anthropic"
    backend.open()
    qtbot.waitUntil(lambda: session.model is not None and session.model.provider == "lab")
    assert palette_models(palette)["lab/lab-1"] == "lab-1"  # the open palette followed too


def test_a_local_server_added_while_the_keyring_waits_answers_without_the_gui_waiting(
    qtbot: QtBot, window: Window
) -> None:
    """A server on this computer needs no key: picking it never asks the keyring, and the request's own
    key look-up waits in a worker."""
    ctl, backend = window.ctl, window.keyring
    backend.open()
    qtbot.waitUntil(lambda: ctl.runtime is not None, timeout=10_000)
    qtbot.waitUntil(lambda: not ctl.keys.busy)
    backend.close()
    chat = ctl.chat
    with LoopbackServer(model="local-coder") as server:
        server.script(Turn([Text("Hi from the local server.")]))
        page = ctl.dialogs.show_settings().providers_page
        editor = page.edit_server(None)
        editor.name_edit.setText("Local")
        editor.url_edit.setText(server.openai_url)
        editor._add_model("local-coder", checked=True)
        with qtbot.waitSignal(page.providersChanged):  # written in a worker
            editor.save()
        ctl.model_choice.pick_model("local", "local-coder")  # usable at once: on this computer
        session = ctl.session
        assert session is not None and session.model is not None and session.model.provider == "local"
        assert chat.model_state == READY
        page.window().close()
        chat.composer.set_text("say hi")
        chat.composer.submit()
        keeps_running(qtbot)
        assert server.requests == []  # the request waits for its key look-up, in a worker
        backend.open()
        qtbot.waitUntil(lambda: chat.model.rowCount() >= 2 and not chat.busy, timeout=10_000)
        assert chat.model.row_at(chat.model.rowCount() - 1).text == "Hi from the local server."
